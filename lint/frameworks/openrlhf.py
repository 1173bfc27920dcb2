"""OpenRLHF launch lines: `deepspeed --module openrlhf.cli.train_sft ...`,
`python -m openrlhf.cli.train_ppo_ray ...` (also `torchrun -m`), with the
command often built in a heredoc (`read -r -d '' cmds <<EOF ... EOF`, then
`deepspeed --module $cmds`). OpenRLHF has no config file: the flags are the
config, read as an inline Document (as ms-swift flags and Megatron arguments are).

The arithmetic (checkout at /tmp/real/OpenRLHF, see docs/parity/openrlhf.toml):
- dp = W // ring_attn_size // ds.tensor_parallel_size, the device mesh is
  (dp, ring, tp) so W must be a multiple of ring x tp
  (openrlhf/utils/deepspeed/deepspeed.py:103-107);
- DeepSpeed gets train_micro_batch_size_per_gpu = --train.micro_batch_size and
  train_batch_size = --train.batch_size x ring x tp (deepspeed.py:451-456), so
  DeepSpeed derives gradient accumulation by floor division and asserts
  train_batch_size == micro x GA x W: --train.batch_size must be a multiple of
  micro x dp. With --train.dynamic_batch_enable neither is given (GA = 1).
- PPO (train_ppo_ray): the actor's DeepSpeed world is --actor.num_nodes x
  --actor.num_gpus_per_node (defaults 1 x 8, train_ppo_ray.py:213-214, 85-90).

Flag names are those of the current CLI (`--train.batch_size`, dotted groups);
the flat names of earlier releases (`--train_batch_size`,
`--micro_train_batch_size`, `--max_len`, ...) are read too (LEGACY below).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from ..document import Document, Mapping, Scalar
from ..plan import RL, Fact, Origin, TrainingPlan
from ..sources.shell import Command, ShellDocument, Word, read_shell
from .facts import Outside, divide, flag, number
from .spec import FLAGS, Framework, Launcher

NAME = "openrlhf"
FORMATS = ("yaml",)
MARKERS = (b"openrlhf.cli",)

# `python3 -m openrlhf.cli.train_ppo_ray --a.b v ...`, and under `deepspeed --module` / `torchrun -m`
# (their specs give W): the flags are the whole config. Only the train_* entry points train.
LAUNCHERS = (Launcher("openrlhf", modules=("openrlhf.cli.train_*",), markers=(b"openrlhf.cli",), flags=FLAGS,
                      config_files=False, inline=True),)
# First among YAML adapters: `plan` takes only documents launched by these lines.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=5, launchers=LAUNCHERS)

_MODULE = re.compile(r"openrlhf\.cli\.(train_\w+)")
ENTRY_KEY = " entry"  # a root key no flag can spell: which train_* module the line runs

# Defaults per entry point: (micro batch, max_len). train_sft.py:166, 284;
# train_dpo.py:188, 318; train_rm.py:246, 298; train_ppo_ray.py:393, 379.
_DEFAULTS = {"train_sft": (8, 2048), "train_dpo": (8, 512), "train_rm": (1, 512), "train_ppo_ray": (1, 2048)}

# Current flag -> flat flag of earlier releases.
LEGACY = {
    "train.micro_batch_size": "micro_train_batch_size",
    "train.batch_size": "train_batch_size",
    "data.max_len": "max_len",
    "ds.packing_samples": "packing_samples",
    "ds.ring_attn_size": "ring_attn_size",
    "ds.tensor_parallel_size": "ds_tensor_parallel_size",
    "train.dynamic_batch_enable": "use_dynamic_batch",
    "actor.num_nodes": "actor_num_nodes",
    "actor.num_gpus_per_node": "actor_num_gpus_per_node",
    "rollout.batch_size": "rollout_batch_size",
    "rollout.micro_batch_size": "micro_rollout_batch_size",
    "rollout.n_samples_per_prompt": "n_samples_per_prompt",
    "rollout.vllm_generate_batch_size": "vllm_generate_batch_size",
    "vllm.num_engines": "vllm_num_engines",
    "vllm.tensor_parallel_size": "vllm_tensor_parallel_size",
    "train.colocate_all": "colocate_all_models",
    "train.async_enable": "async_train",
    "algo.advantage.estimator": "advantage_estimator",
    "ref.num_nodes": "ref_num_nodes",
    "ref.num_gpus_per_node": "ref_num_gpus_per_node",
    "critic.num_nodes": "critic_num_nodes",
    "critic.num_gpus_per_node": "critic_num_gpus_per_node",
    "reward.num_nodes": "reward_num_nodes",
    "reward.num_gpus_per_node": "reward_num_gpus_per_node",
    "train.colocate_actor_ref": "colocate_actor_ref",
    "train.colocate_critic_reward": "colocate_critic_reward",
    "algo.kl.init_coef": "init_kl_coef",
    "algo.dynamic_filtering_enable": "dynamic_filtering",
}


# -- launch lines ---------------------------------------------------------------------

def launches(doc: ShellDocument) -> list:
    """Every OpenRLHF launch in a script, heredoc-built ones included. (The engine reads
    launch lines with lint/launch.py, which routes this module's LAUNCHERS; this adds
    heredocs and `ray job submit --`, which it does not read yet.)"""
    bodies = _heredoc_commands(doc)
    found = []
    for command in doc.commands:
        line = launch_of(_spliced(command, bodies), doc.path)
        if line is not None:
            found.append(line)
    return found


def launch_of(command: Command, script: str):
    """A Launch (framework "openrlhf") for one command, or None when it runs no openrlhf.cli
    train_* module. The generic interpreter reads the line (this module's LAUNCHERS); this
    adds what it does not do yet: `ray job submit ... -- <entrypoint>` and the entry module."""
    words = command.words
    if not words or not words[0].known:
        return None
    if os.path.basename(str(words[0].value)) == "ray" and any(w.value == "--" for w in words):
        # `ray job submit --address=... -- python3 -m openrlhf.cli.train_ppo_ray ...`: the entrypoint after `--`.
        rest = words[[w.value for w in words].index("--") + 1:]
        return launch_of(Command(rest, command.env, command.span), script) if rest else None
    from .. import launch as launching  # lint.launch imports this package: not at import time

    line = launching._launch(command, script)
    if line is None or line.framework != NAME:
        return None
    module = next((w for w in words if w.known and _MODULE.fullmatch(str(w.value))), None)
    if module is not None:
        name = _MODULE.fullmatch(str(module.value)).group(1)
        line.overrides.append(((ENTRY_KEY,), Word(name, module.span, module.raw), module))
    return line


def document(line, script: str, text: str) -> Document:
    """The flags of one launch line (a lint.launch.Launch) as a Document (dotted flags become nested keys)."""
    from .. import launch as launching

    return launching.inline_document(line, script, text)


_READ_HEREDOC = re.compile(r"^[ \t]*read\b[^\n<]*?\b([A-Za-z_]\w*)[ \t]*<<-?[ \t]*(['\"]?)(\w+)\2[ \t]*$", re.M)


def _heredoc_commands(doc: ShellDocument) -> dict:
    """`read -r -d '' NAME <<EOF` bodies, each read as the command it holds: NAME -> Command.
    The body is lexed in place (the script's earlier lines kept, so its variables are
    known; the same line numbers, so findings point into the heredoc)."""
    text = doc.text or ""
    lines = text.split("\n")
    found = {}
    for match in _READ_HEREDOC.finditer(text):
        name, quoted, delimiter = match.group(1), match.group(2), match.group(3)
        start = text.count("\n", 0, match.start())  # 0-based line of the `read`
        end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == delimiter), None)
        if end is None or quoted:
            continue  # unterminated, or a quoted delimiter (no expansion): left alone
        before = [ln for ln in lines[:start]]
        blank = [""] * (start + 1 - len(before))
        synthetic = "\n".join(before + blank + lines[start + 1:end])
        commands = [c for c in read_shell(doc.path, synthetic).commands if c.span.line > start]
        if commands:
            found[name] = commands[0]
    return found


def _spliced(command: Command, bodies: dict) -> Command:
    """`deepspeed --module $NAME` with NAME a heredoc command: the words of both."""
    if not bodies:
        return command
    words = []
    for word in command.words:
        ref = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", word.raw or "")
        if not word.known and ref and ref.group(1) in bodies:
            words.extend(bodies[ref.group(1)].words)
        else:
            words.append(word)
    return Command(words, command.env, command.span)


# -- the plan -------------------------------------------------------------------------

_PPO_GROUPS = ("actor", "critic", "ref", "reward", "rollout", "vllm", "actor_num_nodes", "rollout_batch_size")


def entry(doc: Document) -> Optional[str]:
    """The train_* module the line runs: recorded by `launches` below, else read from the
    launch line's own text (the engine's inline document spans the command), else
    train_ppo_ray when PPO-only groups are given; None when it cannot be told."""
    node = doc.root.get(ENTRY_KEY)
    if isinstance(node, Scalar):
        return node.value
    span = doc.root.span
    if doc.text and span is not None:
        lines = doc.text.split("\n")[span.line - 1:span.end_line]
        match = _MODULE.search("\n".join(lines))
        if match is not None:
            return match.group(1)
    if any(key in doc.root.items for key in _PPO_GROUPS):
        return "train_ppo_ray"
    return None


def get(root: Mapping, key: str) -> tuple:
    """(node, `--flag` label) of a flag, in its current or its legacy spelling."""
    node = root.get(*key.split("."))
    if node is not None:
        return node, f"--{key}"
    legacy = LEGACY.get(key)
    if legacy is not None and root.get(legacy) is not None:
        return root.get(legacy), f"--{legacy}"
    return None, f"--{key}"


def fact(root: Mapping, key: str, default=None) -> Optional[Fact]:
    node, label = get(root, key)
    return number(node, label, default=default)


def switch(root: Mapping, key: str) -> Fact:
    """A store_true flag: written (true/false) or the default false."""
    node, label = get(root, key)
    return flag(node, label) or Fact(False, label, None, Origin.DEFAULT)


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    if doc.launched_by != NAME:
        return None
    root, name = doc.root, entry(doc)
    micro_default, len_default = _DEFAULTS.get(name, (None, None))
    ring = fact(root, "ds.ring_attn_size", default=1)
    tp = fact(root, "ds.tensor_parallel_size", default=1)
    world = _actor_world(root, outside) if name == "train_ppo_ray" else outside.world_size
    packing = switch(root, "ds.packing_samples")
    if name == "train_ppo_ray" and ring.known and ring.value > 1 and not packing.value:
        # train_ppo_ray.py:642-645 turns packing on (with a warning) when ring attention is on.
        packing = Fact(True, packing.key, None, Origin.DERIVED, detail=f"forced by {ring.key} {ring.value}")
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=fact(root, "train.micro_batch_size", default=micro_default),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"sp": ring, "tp": tp},
        data_parallel=divide(world, [ring, tp]),
        layout=(ring, tp),
        layout_exact=False,
        seq_len=fact(root, "data.max_len", default=len_default),
        packing=packing,
    )
    dynamic = switch(root, "train.dynamic_batch_enable")
    declared = fact(root, "train.batch_size")
    if dynamic.value:
        # deepspeed.py:451-453: micro 1, GA 1, no train_batch_size for DeepSpeed to check.
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail=f"{dynamic.key}")
    elif declared is not None:  # the default 128 has no line to point at: left out, as for Megatron
        plan.declared_global_batch, plan.derived_from_global = declared, "grad_accum"
    # plan.rl is left unset on purpose: the generic rule that reads it (BL152, being generalised
    # from axolotl) still treats samples_per_prompt < 2 and a generation batch < samples x W as
    # errors, which they are not in OpenRLHF (n_samples_per_prompt 1 is the default, and valid for
    # gae/reinforce). The OpenRLHF rules read rl(plan) directly; set `plan.rl = rl(plan)` here once
    # the generic rule gates those checks on the algorithm needing groups.
    return plan


def _actor_world(root: Mapping, outside: Outside) -> Optional[Fact]:
    """The actor group's GPUs: --actor.num_nodes x --actor.num_gpus_per_node (defaults 1 x 8)."""
    if outside.world_size is not None and outside.world_size.origin is Origin.DIRECTIVE:
        return outside.world_size
    nodes = fact(root, "actor.num_nodes", default=1)
    gpus = fact(root, "actor.num_gpus_per_node", default=8)
    if not (nodes.positive and gpus.positive):
        return None
    where = gpus.span or nodes.span
    shown = f"{gpus.describe()} x {nodes.describe()}"
    return Fact(nodes.value * gpus.value, "world size", where, Origin.LAUNCH, detail=shown)


def rl(plan: TrainingPlan) -> Optional[RL]:
    """The RL vocabulary of a PPO launch (None for SFT/DPO/RM). OpenRLHF samples
    --rollout.n_samples_per_prompt completions for each of --rollout.batch_size prompts
    per round, generated --rollout.vllm_generate_batch_size prompts at a time (default:
    the rollout batch, train_ppo_ray.py:690-692); one optimizer step consumes
    --train.batch_size samples (ppo_trainer.py:72-76)."""
    if plan.framework != NAME or entry(plan.document) != "train_ppo_ray":
        return None
    root = plan.document.root
    prompts = fact(root, "rollout.batch_size", default=1024)  # train_ppo_ray.py:373
    samples = fact(root, "rollout.n_samples_per_prompt", default=1)  # 414
    per_round = fact(root, "rollout.vllm_generate_batch_size") or prompts
    generation = None
    if per_round.known and samples.known:
        generation = Fact(per_round.value * samples.value, "generation batch", per_round.span or samples.span,
                          Origin.DERIVED, detail=f"{per_round.describe()} x {samples.describe()}")
    train_micro = plan.micro_batch
    return RL(
        samples_per_prompt=samples,
        prompts_per_step=prompts,
        generation_batch=generation,
        mini_batch=plan.declared_global_batch or fact(root, "train.batch_size", default=128),  # 394
        micro_batch={"actor": train_micro, "rollout": fact(root, "rollout.micro_batch_size", default=1)},  # 393, 377
    )
