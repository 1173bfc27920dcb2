"""OpenRLHF launch lines: `deepspeed --module openrlhf.cli.train_sft ...`,
`python -m openrlhf.cli.train_ppo_ray ...` (also `torchrun -m`, and behind
`ray job submit ... --`), with the command often built in a heredoc
(`read -r -d '' cmds <<EOF ... EOF`, then `deepspeed --module $cmds`): the
generic launch interpreter reads them all (lint/launching/lines.py, shell.py). OpenRLHF
has no config file: the flags are the config, read as an inline Document (as
ms-swift flags and Megatron arguments are), which carries the entry module.

The arithmetic (an OpenRLHF checkout, see docs/parity/openrlhf.toml):
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

from ..document import Document, Mapping, Node, Scalar
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass
from ..plan import RL, Fact, GenerationChecks, Origin, Subject, TrainingPlan
from ..premise import Premise
from .facts import Outside, divide, flag, number
from .releases import OPENRLHF as DISTRIBUTION
from .spec import FLAGS, Framework, Launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, overload
else:
    from ..annotations import overload

NAME = "openrlhf"
FORMATS = ("yaml",)
MARKERS = (b"openrlhf.cli",)

_SCRIPTS = ("train_sft.py", "train_dpo.py", "train_rm.py", "train_ppo.py", "train_ppo_ray.py")
# `python3 -m openrlhf.cli.train_ppo_ray --a.b v ...`, and under `deepspeed --module` / `torchrun -m`
# (their specs give W): the flags are the whole config. Only the train_* entry points train.
LAUNCHERS = (Launcher("openrlhf", modules=("openrlhf.cli.train_*",), markers=(b"openrlhf.cli",), flags=FLAGS,
                      config_files=False, inline=True),
             # Before openrlhf.cli (to 0.3.x), the example scripts run OpenRLHF's own scripts under deepspeed:
             # `deepspeed ../train_sft.py --train_batch_size 256 --micro_train_batch_size 2 ...`
             # (examples/scripts/train_sft_llama.sh @ v0.3.5); its flag names are OpenRLHF's.
             Launcher("openrlhf", scripts=_SCRIPTS, markers=(b"--micro_train_batch_size",), flags=FLAGS,
                      config_files=False, inline=True, requires=("--micro_train_batch_size",),
                      under=("deepspeed",)))
# First among YAML adapters: `plan` takes only documents launched by these lines.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=5, launchers=LAUNCHERS, distribution=DISTRIBUTION)

_MODULE = LazyPattern(r"openrlhf\.cli\.(train_\w+)|(?:.*/)?(train_(?:sft|dpo|rm|ppo|ppo_ray))\.py")

# Defaults per entry point: (micro batch, max_len). train_sft.py:166, 284;
# train_dpo.py:188, 318; train_rm.py:246, 298; train_ppo_ray.py:393, 379.
_DEFAULTS = {"train_sft": (8, 2048), "train_dpo": (8, 512), "train_rm": (1, 512), "train_ppo_ray": (1, 2048),
             "train_ppo": (4, None)}  # the non-Ray trainer (0.3.6-0.6.1.post1): train_ppo.py:319 @ v0.6.1.post1

# The entry points that assert packing with ring attention (see OpenRLHFSettings).
_RING_NEEDS_PACKING = ("train_sft", "train_dpo", "train_rm")

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


# The dotted flags (`--train.batch_size`) replace the flat ones (`--train_batch_size`) in 0.10.2 (ed62d0e2):
# a line that writes only dotted flags runs on no earlier release, one that writes only flat ones on no
# later release (argparse refuses the other spelling). A premise about such a line is weighed on those
# releases only (`variants`).
DOTTED_SINCE, FLAT_UNTIL = "0.10.2", "0.10.1.post2"
_GROUPS = frozenset(key.split(".")[0] for key in LEGACY)


def flag_style(root: Mapping) -> str:
    """"dotted" or "flat" when the launch line writes its flags in one spelling only, else ""."""
    items = root.items
    dotted = any(isinstance(items.get(group), Mapping) for group in _GROUPS)
    flat = any(name in items for name in LEGACY.values())
    return "dotted" if dotted and not flat else "flat" if flat and not dotted else ""


def variants(premise: Premise) -> tuple[Premise, ...]:
    """`premise` and its twins for a line in the dotted flags (weighed from 0.10.2 on) and for one in the
    flat flags (weighed to 0.10.1.post2): a rule declares all three, `premise_name` picks one."""
    from ..lean_dataclass import replace
    from ..versions import version_key

    def key(version: Optional[str]) -> tuple:
        return (version_key(version) or ()) if version else ()

    floor = premise.runs_since if key(premise.runs_since) > key(DOTTED_SINCE) else DOTTED_SINCE
    ceiling = premise.runs_until if premise.runs_until and key(premise.runs_until) < key(FLAT_UNTIL) else FLAT_UNTIL
    spelled = "openrlhf/cli/train_ppo_ray.py, ed62d0e2"
    return (premise,
            replace(premise, name=f"{premise.name} (dotted flags)".strip(), runs_since=floor,
                    source=f"{premise.source}; the dotted flags from v{DOTTED_SINCE} on ({spelled})"),
            replace(premise, name=f"{premise.name} (flat flags)".strip(), runs_until=ceiling,
                    source=f"{premise.source}; the flat flags to v{FLAT_UNTIL} ({spelled})"))


def premise_name(plan: TrainingPlan, premise: Premise) -> str:
    """The name of `premise`, or of its twin (`variants`) for the spelling the plan's launch line writes."""
    style = flag_style(plan.document.root)
    return f"{premise.name} ({style} flags)".strip() if style else premise.name


# -- the entry point -------------------------------------------------------------------

def entry(doc: Document) -> Optional[str]:
    """The train_* module the launch line runs (the launch interpreter records it), None when not told."""
    match = _MODULE.fullmatch(getattr(doc, "entry", None) or "")
    return (match.group(1) or match.group(2)) if match else None


@lean_dataclass(frozen=True)
class Placement:
    """One Ray role's GPUs: --<role>.num_nodes x --<role>.num_gpus_per_node (defaults 1 x 8,
    train_ppo_ray.py:198-237)."""

    nodes: Fact
    gpus: Fact


@lean_dataclass(frozen=True)
class PPOArguments:
    """What train_ppo_ray asserts about its Ray placement and vLLM engines (train_ppo_ray.py:41-63, 109-113)."""

    vllm_engines: Fact  # --vllm.num_engines; value None when not given (default None, train_ppo_ray.py:232)
    vllm_tp: Fact  # --vllm.tensor_parallel_size, default 1
    colocate_all: Fact
    colocate_actor_ref: Fact
    colocate_critic_reward: Fact
    async_enable: Fact  # --train.async_enable: the vLLM engines are not colocated then
    uses_ref: bool  # --algo.kl.init_coef > 0 (default 0.01, train_ppo_ray.py:419): a reference model is made
    uses_critic: bool  # --algo.advantage.estimator gae (the default) trains a critic (train_ppo_ray.py:600-606)
    # What compares each prompt's samples, so that train_ppo_ray asserts n_samples_per_prompt > 1: a group
    # estimator (rloo, reinforce_baseline, group_norm, dr_grpo) or dynamic filtering; None: gae/reinforce.
    group_baseline: Optional[Fact]
    generate_batch: Optional[Fact]  # --rollout.vllm_generate_batch_size (default: the rollout batch, 690-692)
    roles: dict[str, Placement]  # "actor", "ref", "critic", "reward" -> Placement


@lean_dataclass(frozen=True)
class OpenRLHFSettings(Subject):
    """OpenRLHF's own launch settings its rules read."""

    FRAMEWORKS = (NAME,)

    entry: str  # the train_* module the line runs
    # train_sft/dpo/rm assert packing with ring attention (train_sft.py:321-322, train_dpo.py:355-356,
    # train_rm.py:332-333); train_ppo_ray turns packing on instead (train_ppo_ray.py:642-645).
    ring_needs_packing: bool
    ppo: Optional[PPOArguments]  # train_ppo_ray only


def _ppo_arguments(root: Mapping) -> PPOArguments:
    engines = fact(root, "vllm.num_engines")
    kl, _ = get(root, "algo.kl.init_coef")
    kl_value = getattr(kl, "value", 0.01) if kl is not None else 0.01
    estimator, _ = get(root, "algo.advantage.estimator")
    return PPOArguments(
        vllm_engines=engines if engines is not None else Fact(None, "--vllm.num_engines", None, Origin.DEFAULT),
        vllm_tp=fact(root, "vllm.tensor_parallel_size", default=1),
        colocate_all=switch(root, "train.colocate_all"),
        colocate_actor_ref=switch(root, "train.colocate_actor_ref"),
        colocate_critic_reward=switch(root, "train.colocate_critic_reward"),
        async_enable=switch(root, "train.async_enable"),
        uses_ref=isinstance(kl_value, (int, float)) and not isinstance(kl_value, bool) and kl_value > 0,
        uses_critic=getattr(estimator, "value", "gae") == "gae",
        group_baseline=_group_baseline(root),
        generate_batch=fact(root, "rollout.vllm_generate_batch_size"),
        roles={role: Placement(fact(root, f"{role}.num_nodes", default=1),
                               fact(root, f"{role}.num_gpus_per_node", default=8))
               for role in ("actor", "ref", "critic", "reward")},
    )


# Advantage estimators that compare a prompt's samples with each other (train_ppo_ray.py asserts
# n_samples_per_prompt > 1 for them, and for dynamic filtering).
GROUP_ESTIMATORS = ("rloo", "reinforce_baseline", "group_norm", "dr_grpo")


def _group_baseline(root: Mapping) -> Optional[Fact]:
    estimator, label = get(root, "algo.advantage.estimator")
    if isinstance(estimator, Scalar) and estimator.value in GROUP_ESTIMATORS:
        return Fact(estimator.value, label, estimator.span, node=estimator)
    filtering = switch(root, "algo.dynamic_filtering_enable")
    return filtering if filtering.value else None


def get(root: Mapping, key: str) -> tuple[Optional[Node], str]:
    """(node, `--flag` label) of a flag, in its current or its legacy spelling."""
    node = root.get(*key.split("."))
    if node is not None:
        return node, f"--{key}"
    legacy = LEGACY.get(key)
    if legacy is not None and root.get(legacy) is not None:
        return root.get(legacy), f"--{legacy}"
    return None, f"--{key}"


@overload
def fact(root: Mapping, key: str, default: int) -> Fact: ...
@overload
def fact(root: Mapping, key: str, default: Optional[int] = None) -> Optional[Fact]: ...
def fact(root: Mapping, key: str, default: Optional[int] = None) -> Optional[Fact]:
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
    micro_default, len_default = _DEFAULTS[name] if name in _DEFAULTS else (None, None)
    ring = fact(root, "ds.ring_attn_size", default=1)
    tp = fact(root, "ds.tensor_parallel_size", default=1)
    world = _actor_world(root, outside) if name == "train_ppo_ray" else outside.world_size
    packing = switch(root, "ds.packing_samples")
    ring_size = ring.number
    if name == "train_ppo_ray" and ring_size is not None and ring_size > 1 and not packing.value:
        # train_ppo_ray.py:642-645 turns packing on (with a warning) when ring attention is on.
        packing = Fact(True, packing.key, None, Origin.DERIVED, detail=f"forced by {ring.key} {ring_size}")
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
    if name is not None:
        plan.settings = OpenRLHFSettings(entry=name, ring_needs_packing=name in _RING_NEEDS_PACKING,
                                          ppo=_ppo_arguments(root) if name == "train_ppo_ray" else None)
    plan.rl = rl(plan) if name != "train_ppo" else _non_ray_rl(plan)
    return plan


def _non_ray_rl(plan: TrainingPlan) -> RL:
    """The non-Ray `openrlhf.cli.train_ppo` (0.3.6 to 0.6.1.post1; 0.6.2 removes it): each round generates
    --n_samples_per_prompt samples for --rollout_batch_size prompts, trains on them --max_epochs times in
    micro batches of --micro_train_batch_size, then clears its replay buffer (ppo_trainer.py:180-189 @ v0.3.6,
    :244-245 @ v0.6.1.post1); DeepSpeed steps the optimizer every --train_batch_size samples, counting micro
    batches across rounds (defaults train_ppo.py:279-300 @ v0.3.6, 305-326 @ v0.6.1.post1)."""
    root = plan.document.root
    prompts = fact(root, "rollout.batch_size", default=512)
    samples = fact(root, "rollout.n_samples_per_prompt", default=1)
    generation = None
    prompt_count, sample_count = prompts.number, samples.number
    if prompt_count is not None and sample_count is not None:
        generation = Fact(prompt_count * sample_count, "generation batch", prompts.span or samples.span,
                          Origin.DERIVED, detail=f"{prompts.describe()} x {samples.describe()}")
    train = plan.declared_global_batch or fact(root, "train.batch_size", default=128)
    micro = {"actor": plan.micro_batch, "rollout": fact(root, "rollout.micro_batch_size", default=8)}
    return RL(samples_per_prompt=samples, prompts_per_step=prompts, generation_batch=generation,
              mini_batch=train, micro_batch={role: f for role, f in micro.items() if f is not None})


def _actor_world(root: Mapping, outside: Outside) -> Optional[Fact]:
    """The actor group's GPUs: --actor.num_nodes x --actor.num_gpus_per_node (defaults 1 x 8)."""
    if outside.world_size is not None and outside.world_size.origin is Origin.DIRECTIVE:
        return outside.world_size
    nodes = fact(root, "actor.num_nodes", default=1)
    gpus = fact(root, "actor.num_gpus_per_node", default=8)
    node_count, per_node = nodes.count, gpus.count
    if node_count is None or per_node is None:
        return None
    where = gpus.span or nodes.span
    shown = f"{gpus.describe()} x {nodes.describe()}"
    return Fact(node_count * per_node, "world size", where, Origin.LAUNCH, detail=shown)


def rl(plan: TrainingPlan) -> Optional[RL]:
    """The RL vocabulary of a PPO launch (None for SFT/DPO/RM). OpenRLHF samples
    --rollout.n_samples_per_prompt completions for each of --rollout.batch_size prompts
    per round, generated --rollout.vllm_generate_batch_size prompts at a time (default:
    the rollout batch, train_ppo_ray.py:690-692); one optimizer step consumes
    --train.batch_size samples (ppo_trainer.py:72-76)."""
    settings = OpenRLHFSettings.of(plan)
    if plan.framework != NAME or settings is None or settings.ppo is None:
        return None
    root = plan.document.root
    prompts = fact(root, "rollout.batch_size", default=1024)  # train_ppo_ray.py:373
    samples = fact(root, "rollout.n_samples_per_prompt", default=1)  # 414
    per_round = fact(root, "rollout.vllm_generate_batch_size") or prompts
    generation = None
    round_prompts, sample_count = per_round.number, samples.number
    if round_prompts is not None and sample_count is not None:
        generation = Fact(round_prompts * sample_count, "generation batch", per_round.span or samples.span,
                          Origin.DERIVED, detail=f"{per_round.describe()} x {samples.describe()}")
    micro = {"actor": plan.micro_batch, "rollout": fact(root, "rollout.micro_batch_size", default=1)}  # 393, 377
    ppo = settings.ppo
    return RL(
        samples_per_prompt=samples,
        prompts_per_step=prompts,
        generation_batch=generation,
        mini_batch=plan.declared_global_batch or fact(root, "train.batch_size", default=128),  # 394
        generation_checks=GenerationChecks(refusal="train_ppo_ray asserts n_samples_per_prompt > 1",
                                           group_baseline=ppo.group_baseline),
        micro_batch={role: f for role, f in micro.items() if f is not None},
    )
