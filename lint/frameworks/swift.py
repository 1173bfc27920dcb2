"""ms-swift: TrainingArguments-style YAML/JSON (`swift sft --config`), and its
Megatron schema (swift_megatron.py), tried first.

Defaults differ from transformers: a micro batch of 1, and accumulation
max(1, ceil(16 / micro / W)) when not given (swift/trainers/arguments.py:283-286).
dp = W / sequence_parallel_size, which must divide W. The world size may come from the file: an
`ENV:` block's NPROC_PER_NODE x NNODES, which swift exports unless the
environment already sets them (swift/cli/main.py:53-59), so a world size
given on the command line or in the project config wins over it.
"""

from __future__ import annotations

import math

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass, replace
from ..plan import RL, Fact, GenerationChecks, Origin
from ..premise import HOLDS, Premise, judge
from . import swift_megatron
from .facts import Outside, algorithm, flag, number, per_group, product, whole_number
from .releases import MS_SWIFT
from .spec import Count, Framework, Launcher
from .training_arguments import FORMATS, MARKERS as _TA_MARKERS, is_training_arguments, plan_from

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "swift"
__all__ = ["NAME", "FORMATS", "MARKERS", "FRAMEWORK", "plan"]

MARKERS = _TA_MARKERS + (b"micro_batch_size", b"global_batch_size")  # Megatron configs

# `swift sft --key value` and `megatron sft ...` (ms-swift's Megatron CLI): the flags are the whole
# config; torchrun runs with NPROC_PER_NODE x NNODES (swift/cli/main.py). A config file is the first
# argument (`swift sft x.yaml`, parse_yaml_args) or `--config x.yaml` (the Ray examples); any other
# flag's file is data (`--dataset demo.json`, `--deepspeed ds.json`), never the config.
_NPROC, _NNODES = Count(env=("NPROC_PER_NODE",)), Count(env=("NNODES",))
_CONFIG_FLAGS = ("config",)
LAUNCHERS = (
    Launcher("swift", commands=("swift",), subcommands=("*",), markers=(b"swift",), nproc=_NPROC, nnodes=_NNODES,
             inline=True, config_flags=_CONFIG_FLAGS),
    Launcher("megatron", commands=("megatron",), subcommands=("*",), markers=(b"megatron",), nproc=_NPROC,
             nnodes=_NNODES, inline=True, config_flags=_CONFIG_FLAGS),
    # Its per-process entry points, run by a generic launcher or python (`accelerate launch
    # swift/cli/rlhf.py --rlhf_type grpo ...`, `python -m swift.cli.sft ...`): the same flags.
    Launcher("swift", modules=("swift.cli.*",), scripts=("swift/cli/*.py",), markers=(b"swift.cli", b"swift/cli"),
             inline=True, config_flags=_CONFIG_FLAGS),
)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=110, launchers=LAUNCHERS, distribution=MS_SWIFT)

_SWIFT = {"tuner_type", "train_type", "sft_type", "model_type", "rlhf_type", "attn_impl", "lazy_tokenize",
          "model_author", "sequence_parallel_size", "padding_free", "ENV"}


def plan(doc: Document, outside: Outside):
    root = doc.root
    if not (_is_swift(set(root.items)) or doc.launched_by == NAME):
        return None
    world = outside.world_size or _env_world_size(root)
    megatron = swift_megatron.plan(doc, outside, world)
    if megatron is not None:
        return megatron
    if not is_training_arguments(root):
        return None
    outside = replace(outside, world_size=world)
    # ms-swift picks the precision from the model's dtype and has its own clipping default: neither is assumed.
    plan = plan_from(doc, outside, NAME, micro_default=1, grad_accum_default=_accumulation_default(doc, outside),
                     precision_off=(), max_grad_norm_default=None)
    # The sequence-parallel mesh is (W // sp, sp): sp must divide W (sequence_parallel/sequence_parallel.py:650-664).
    plan.layout, plan.layout_exact = (plan.parallel["sp"],), False
    plan.rl = rl = algorithm(root.get("rlhf_type"), "rlhf_type")
    if rl is not None and rl.algorithm is not None and rl.algorithm.value == "grpo":
        _grpo(root, plan, rl)
    # As written: unset, the model's own maximum applies (template_args.py:130 @ 3602360).
    plan.seq_len = number(root.get("max_length"), "max_length")
    # A streamed dataset (an IterableDataset) has no length: the Trainer needs max_steps (rules/generic/max_steps_required.py).
    streaming = flag(root.get("streaming"), "streaming")
    if streaming is not None and streaming.value is True:
        plan.unsized_data = streaming
    plan.max_steps = number(root.get("max_steps"), "max_steps")
    plan.settings = _arguments(root)
    return plan


@lean_dataclass(frozen=True)
class SwiftSettings(swift_megatron.Tokenized):
    """ms-swift's own arguments its rules read (not the Megatron schema's)."""

    FRAMEWORKS = (NAME,)

    packing: Optional[Fact]  # None unless written true/false
    padding_free: Optional[Fact]  # None unless written true/false
    # As written, else the default None (swift/arguments/base_args/model_args.py:79 @ 3602360);
    # value None also when written as something else than a plain value.
    attn_impl: Fact
    # load_args: true with attn_impl unset: the checkpoint's args.json fills it (base_args.py:236-268).
    attn_impl_from_checkpoint: bool


def _arguments(root: Mapping) -> SwiftSettings:
    attn = root.get("attn_impl")
    load_args = flag(root.get("load_args"), "load_args")
    return SwiftSettings(
        packing=flag(root.get("packing"), "packing"),
        padding_free=flag(root.get("padding_free"), "padding_free"),
        attn_impl=Fact(None, "attn_impl", None, Origin.DEFAULT) if attn is None
        else Fact(getattr(attn, "value", None), "attn_impl", attn.span, node=attn),
        attn_impl_from_checkpoint=attn is None and load_args is not None and bool(load_args.value),
        tokenizing=swift_megatron.tokenizing(root),
    )


def _grpo(root: Mapping, plan, rl: RL) -> None:
    """ms-swift's GRPOConfig skips TRL's `__post_init__` and checks the generation batch itself
    (swift/rlhf_trainers/arguments.py:101-106, args_mixin.py:200-242 `_init_generation_batch_params`
    @ 4.6.0.dev0): the generation batch is generation_batch_size, else per_device_train_batch_size x W
    x steps_per_generation (default gradient_accumulation_steps); a generation_batch_size alone must be a
    whole number of per_device_train_batch_size x W, and with steps_per_generation it must equal that
    product (both may be set, unlike TRL); it must hold whole groups of num_generations (default 8,
    swift/arguments/rlhf_args.py:163), which must be more than 1 unless a teacher is set (OPD-RL,
    arguments.py:134-136)."""
    samples = number(root.get("num_generations"), "num_generations", default=8)
    micro, world = plan.micro_batch, plan.world_size
    given_steps = number(root.get("steps_per_generation"), "steps_per_generation")
    given = number(root.get("generation_batch_size"), "generation_batch_size")
    steps = given_steps or plan.grad_accum
    made = product([micro, world, steps], "generation batch",
                   f"{micro.describe()} x W ({world.value}) x {steps.describe()}") \
        if micro is not None and world is not None and steps is not None else None
    teacher = any(not _unset(root.get(key)) for key in ("teacher_model", "teacher_model_server"))
    rl.generation_checks = GenerationChecks(
        refusal="ms-swift refuses to start",
        group_baseline=None if teacher else rl.algorithm,
        step_batch=(micro, world or Fact(None, "world size")) if given is not None and given_steps is None else (),
        alternative=made if given is not None and given_steps is not None else None,
    )
    rl.samples_per_prompt, rl.generation_batch = samples, given or made
    rl.prompts_per_step = per_group(rl.generation_batch, samples)
    rl.mini_batch = product([micro, world, plan.grad_accum], "optimizer-step batch")
    rl.micro_batch = {"actor": micro} if micro is not None else {}


def _unset(node) -> bool:
    return node is None or (isinstance(node, Scalar) and node.value in (None, "", "None"))


def _is_swift(keys: set) -> bool:
    # padding_free is TRL's key too: next to TRL's model_name_or_path (ms-swift says `model`) and no
    # other ms-swift key, the config is TRL's.
    return bool(keys & (_SWIFT - {"padding_free"})) or ("padding_free" in keys and "model_name_or_path" not in keys)


# gradient_accumulation_steps left unset: ms-swift fills ceil(16 / per_device_train_batch_size / W) from 3.2.2
# (swift/trainers/arguments.py:84-86 @ v3.2.2, 283-285 @ v4.5.2); 3.0.0 to 3.2.1 set no default of their own and
# keep transformers' 1. A project pinned to those releases gets 1; any other, the formula.
TRANSFORMERS_ACCUMULATION = Premise(
    MS_SWIFT, since="3.0.0", until="3.2.1", runs_since="3.0.0",
    source="v3.0.0 and v3.2.1 swift/trainers/arguments.py, swift/llm/argument/ (no default); v3.2.2 "
           "swift/trainers/arguments.py:84-86 (first formula); v4.5.2 swift/trainers/arguments.py:283-285 (still)")


def _accumulation_default(doc: Document, outside: Outside):
    """gradient_accumulation_steps unwritten, as the release in force fills it. The release is asked only
    then: finding it reads the project's requirements and, last, every script for an install command."""
    def default(micro, world):
        keeps_one = judge(TRANSFORMERS_ACCUMULATION, doc.path, outside.view).outcome == HOLDS
        return (_transformers_accumulation if keeps_one else _default_accumulation)(micro, world)

    return default


def _transformers_accumulation(micro, world):
    return Fact(1, "gradient_accumulation_steps", None, Origin.DEFAULT,
                detail="transformers' default, which ms-swift 3.0.0-3.2.1 keep")


def _default_accumulation(micro, world):
    if world and world.known and micro.known and micro.value > 0:
        value = max(1, math.ceil(16 / micro.value / world.value))
        return Fact(value, "gradient_accumulation_steps", None, Origin.DEFAULT, detail=f"ms-swift default for W={world.value}")
    return None


def _env_world_size(root: Mapping) -> Optional[Fact]:
    """NPROC_PER_NODE x NNODES (default 1) from the file's ENV: block."""
    nproc, nnodes = (_env_int(root, key) for key in ("NPROC_PER_NODE", "NNODES"))
    if not nproc or nnodes is False:
        return None
    value = nproc[0] * (nnodes[0] if nnodes else 1)
    return Fact(value, "world size", nproc[1].span, Origin.FILE, detail="ENV NPROC_PER_NODE" + (" x NNODES" if nnodes else ""))


def _env_int(root: Mapping, key: str):
    """(value, node) of an ENV: entry; None when absent; False when written but not a whole number."""
    node = root.get("ENV", key)
    if node is None:
        return None
    value = whole_number(node.value) if isinstance(node, Scalar) else None
    return (value, node) if value is not None else False
