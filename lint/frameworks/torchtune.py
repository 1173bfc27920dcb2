"""torchtune YAML recipes (`tune run [--nproc_per_node N] RECIPE --config FILE`).

A torchtune config names its builders with `_component_` (`model`,
`tokenizer`, `dataset`, `optimizer`, ...); a YAML file without such a mapping
is not taken. The recipe is chosen on the command line, not in the file, so
the traits below (LoRA model, knowledge distillation, PPO, GRPO, DPO,
single device) are read from the config's content and name: each rule only
fires for the recipes that perform its check (recipes/*.py @ bd2a0fc).

Batch arithmetic: global batch = batch_size x gradient_accumulation_steps x dp.
full_finetune_distributed, lora_finetune_distributed and qat_distributed build
`training.ParallelDims(dp_replicate, dp_shard, tp, cp)` from the
`*_parallel_dim` keys: dp_replicate x dp_shard x tp x cp == W, dp_shard = -1
takes W // (dp_replicate x tp x cp), and dp = dp_replicate x dp_shard
(torchtune/training/_distributed.py:62-91). The other distributed recipes do
not read those keys (dp = W); for single-device configs dp is left unknown
(their header comment is sometimes copied from another recipe). W is the
launch's `--nproc_per_node` x `--nnodes`: only the user can give it.

The torchtune rules read `plan.settings`, a TorchtuneSettings: each setting
filled only for the recipes that read it, with the recipes' defaults.
"""

from __future__ import annotations

import os

from ..document import Document, Mapping, Node, Scalar, Sequence
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass
from ..plan import RL, Fact, Origin, Subject, TrainingPlan
from .facts import Outside, flag, number
from .releases import TORCHTUNE as DISTRIBUTION
from .spec import ASSIGN, OMEGACONF, Framework, Launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "torchtune"
FORMATS = ("yaml",)
MARKERS = (b"_component_",)

# `tune run <recipe> --config x.yaml key=value`: the recipe comes first.
LAUNCHERS = (Launcher("tune run", commands=("tune",), subcommands=("run",), markers=(b"tune",), skip=1, flags=ASSIGN),)
# torchtune/config/_parse.py and _utils.py: OmegaConf.load, merged with the `key=value` overrides.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=60, launchers=LAUNCHERS, interpolation=OMEGACONF,
                      distribution=DISTRIBUTION)

_DIMS = {
    "dp_replicate": ("data_parallel_replicate_dim", 1),
    "dp_shard": ("data_parallel_shard_dim", -1),
    "tp": ("tensor_parallel_dim", 1),
    "cp": ("context_parallel_dim", 1),
}


def plan(doc: Document, outside: Outside):
    root = doc.root
    if not is_torchtune(root):
        return None
    found = traits(doc)
    world = outside.world_size
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(root.get("batch_size"), "batch_size"),
        grad_accum=number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps"),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        seq_len=number(root.get("tokenizer", "max_seq_len"), "tokenizer.max_seq_len"),
        packing=_packing(root),
    )
    plan.settings = _settings(root, found)
    if "ppo" in found:
        plan.rl = _ppo(root, plan)
    if "training" not in found or "single_device" in found:
        return plan  # single device: dp = 1, but the header that says so is sometimes copied wrong
    if "parallel_dims" in found:
        plan.parallel = {short: number(root.get(key), key, default=default) for short, (key, default) in _DIMS.items()}
        plan.layout = tuple(plan.parallel[k] for k in ("dp_replicate", "dp_shard", "tp", "cp"))
        plan.data_parallel = _data_parallel(plan.parallel, world)
    elif world is not None and world.known:
        plan.data_parallel = Fact(world.value, "dp", world.span, world.origin, detail=world.detail)
    return plan


# --------------------------------------------------------------------------- settings its rules read
# Recipe sources @ torchtune bd2a0fc; a setting is filled only for the recipes that read it.


@lean_dataclass(frozen=True)
class PPOSchedule:
    num_steps: Optional[Fact]  # trajectories to train on in all (not optimizer steps)


@lean_dataclass(frozen=True)
class OptimizerInBackward:
    """optimizer_in_bwd and what the recipes that read it refuse beside it (full
    finetuning, QAT, full DPO, early exit, PPO; LoRA, KD and GRPO never read it)."""

    # As written (True only for a written boolean); default False (full_finetune_distributed.py:208;
    # the single-device recipes read it without a default).
    enabled: Fact
    # `compile: True`, or `compile.optimizer_step: True` (default False in a mapping,
    # full_finetune_distributed.py:343-354); only full and QAT distributed refuse it.
    compiled_step: Optional[Fact]
    # Clipping on: clip_grad_norm written and not null (default None, full_finetune_distributed.py:209);
    # value None when written as no scalar. None also in PPO, which does not refuse it.
    clip_grad_norm: Optional[Fact]


@lean_dataclass(frozen=True)
class Precision:
    """`dtype` of a training recipe, written as a plain name (not an interpolation)."""

    dtype: Fact
    accepted: tuple[str, ...]  # the names training.get_dtype takes (torchtune/training/precision.py:18-23)
    # The names the recipe refuses at start-up: fp16 (e.g. full_finetune_distributed.py:136-141),
    # except in the GRPO recipes.
    refused: tuple[str, ...]


@lean_dataclass(frozen=True)
class TensorParallel:
    """What the recipes that read tensor_parallel_dim (the parallel_dims ones) need with it."""

    supported: bool  # False: lora_finetune_distributed.py:157-160 asserts tensor_parallel_dim 1
    plan: Fact  # tensor_parallel_plan: value None when null or absent (default None, full_finetune_distributed.py:156)


@lean_dataclass(frozen=True)
class Tokenizer:
    """The tokenizer's max_seq_len, which packing fills sequences to."""

    builder: str  # the builder's name: "llama3_tokenizer" ("" when none is named)
    max_seq_len: Fact  # as written (None: null), or the builder's default None


@lean_dataclass(frozen=True)
class PackedDataset:
    """A torchtune.datasets builder written with `packed: True`."""

    builder: str  # its name: "alpaca_cleaned_dataset"
    packed: Fact
    requires_max_seq_len: bool  # it raises without tokenizer.max_seq_len
    unpackable: Optional[str]  # "preference" or "multimodal": a kind of dataset it refuses to pack


@lean_dataclass(frozen=True)
class TorchtuneSettings(Subject):
    """torchtune settings its own rules read."""

    FRAMEWORKS = (NAME,)

    ppo_schedule: Optional[PPOSchedule]  # the PPO recipe only
    optimizer_in_bwd: Optional[OptimizerInBackward]  # the recipes that read it only
    precision: Optional[Precision]  # training recipes with a readable dtype only
    tensor_parallel: Optional[TensorParallel]  # the recipes that read tensor_parallel_dim only
    tokenizer: Optional[Tokenizer]  # None when its max_seq_len cannot be told
    packed_datasets: tuple[PackedDataset, ...]  # PackedDataset, in the order written


# Builders that raise on packed=True without tokenizer.max_seq_len: datasets/_alpaca.py:89-94,
# _grammar.py:90-95, _samsum.py:91-96, _slimorca.py:90-95, _instruct.py:149-154, _chat.py:181-186,
# _text_completion.py:163-169 (wikitext_dataset passes `packed` on to it).
_REQUIRE_MAX_SEQ_LEN = {
    "alpaca_dataset", "alpaca_cleaned_dataset", "grammar_dataset", "samsum_dataset", "slimorca_dataset",
    "instruct_dataset", "chat_dataset", "text_completion_dataset", "wikitext_dataset",
}
# Builders that raise on packed=True: datasets/_preference.py:112-115; datasets/multimodal/
# _the_cauldron.py:219-220, _llava_instruct.py:121-122, _multimodal.py:178-179, _vqa.py:132-133.
_UNPACKABLE = {
    "preference_dataset": "preference", "stack_exchange_paired_dataset": "preference",
    "hh_rlhf_helpful_dataset": "preference", "the_cauldron_dataset": "multimodal",
    "llava_instruct_dataset": "multimodal", "multimodal_chat_dataset": "multimodal", "vqa_dataset": "multimodal",
}
# Text tokenizer builders default max_seq_len to None (e.g. models/llama3/_model_builders.py:71); the
# multimodal transforms default to 8192 (llama3_2_vision, llama4), clip to 77, t5 to 512.
_LENGTH_SET_BY_DEFAULT = ("transform", "clip_tokenizer", "t5_tokenizer")
_DTYPES = ("fp16", "bf16", "fp32", "fp64")  # training/precision.py:18-23, checked in get_dtype (106-112)


def _settings(root: Mapping, found: set) -> TorchtuneSettings:
    training = "training" in found
    return TorchtuneSettings(
        ppo_schedule=PPOSchedule(number(root.get("num_steps"), "num_steps")) if "ppo" in found else None,
        optimizer_in_bwd=_optimizer_in_bwd(root, found) if training and not found & {"lora", "kd", "grpo"} else None,
        precision=_precision(root.get("dtype"), found) if training else None,
        tensor_parallel=TensorParallel(
            supported="lora" not in found,
            plan=_written(root.get("tensor_parallel_plan"), "tensor_parallel_plan", None),
        ) if "parallel_dims" in found else None,
        tokenizer=_tokenizer(root.get("tokenizer")),
        packed_datasets=tuple(_packed_datasets(root)),
    )


def _written(node, key: str, default) -> Fact:
    """A setting as written (a builder mapping: its `_component_`), or its default."""
    if node is None:
        return Fact(default, key, None, Origin.DEFAULT)
    return Fact(node.value if isinstance(node, Scalar) else component(node), key, node.span, node=node)


def _optimizer_in_bwd(root: Mapping, found: set) -> OptimizerInBackward:
    clip = root.get("clip_grad_norm")
    clipping = clip is not None and not (isinstance(clip, Scalar) and clip.value is None) and "ppo" not in found
    return OptimizerInBackward(
        enabled=_written(root.get("optimizer_in_bwd"), "optimizer_in_bwd", False),
        compiled_step=_compiled_step(root.get("compile")) if "parallel_dims" in found else None,
        clip_grad_norm=Fact(clip.value if isinstance(clip, Scalar) else None, "clip_grad_norm", clip.span, node=clip)
        if clipping and clip is not None else None,
    )


def _compiled_step(node) -> Optional[Fact]:
    """The value that turns optimizer-step compilation on: `compile: True`, or a mapping
    with `optimizer_step: True`; None otherwise."""
    if isinstance(node, Scalar):
        return Fact(True, "compile", node.span, node=node) if node.value is True else None
    step = node.get("optimizer_step") if isinstance(node, Mapping) else None
    return Fact(True, "compile.optimizer_step", step.span, node=step) if isinstance(step, Scalar) and step.value is True else None


def _precision(node, found: set) -> Optional[Precision]:
    if not (isinstance(node, Scalar) and isinstance(node.value, str)) or node.value.startswith("${"):
        return None
    return Precision(Fact(node.value, "dtype", node.span, node=node), _DTYPES, () if "grpo" in found else ("fp16",))


def _tokenizer(node) -> Optional[Tokenizer]:
    """None when batchlint cannot tell: max_seq_len written as no scalar, or left
    out of a tokenizer whose default is not None or not known (a custom one)."""
    builder = component(node)
    name = builder.rsplit(".", 1)[-1]
    length = node.get("max_seq_len") if isinstance(node, Mapping) else None
    if length is None:
        if not builder.startswith("torchtune.") or builder.endswith(_LENGTH_SET_BY_DEFAULT):
            return None
        return Tokenizer(name, Fact(None, "tokenizer.max_seq_len", None, Origin.DEFAULT))
    if not isinstance(length, Scalar):
        return None
    return Tokenizer(name, Fact(length.value, "tokenizer.max_seq_len", length.span, node=length))


def _packed_datasets(root: Mapping):
    for dataset in datasets(root):
        packed, builder = flag(dataset.get("packed"), "dataset.packed"), component(dataset)
        if packed is None or packed.value is not True or not builder.startswith("torchtune.datasets."):
            continue
        name = builder.rsplit(".", 1)[-1]
        yield PackedDataset(name, packed, name in _REQUIRE_MAX_SEQ_LEN, _UNPACKABLE.get(name))


def _ppo(root: Mapping, plan: TrainingPlan) -> RL:
    """The PPO recipe (recipes/ppo_full_finetune_single_device.py): batch_size
    trajectories per step, generated forward_batch_size at a time, optimised in
    ppo_batch_size mini-batches."""
    rl = RL(prompts_per_step=plan.micro_batch, mini_batch=number(root.get("ppo_batch_size"), "ppo_batch_size"))
    forward = number(root.get("forward_batch_size"), "forward_batch_size")
    if forward is not None:
        rl.micro_batch = {"policy": forward}
    return rl


def _data_parallel(parallel: dict, world):
    """dp_replicate x dp_shard, the shard degree -1 resolved with W."""
    if world is None or not world.positive or not all(f.known for f in parallel.values()):
        return None
    replicate, shard, tp, cp = (parallel[k].value for k in ("dp_replicate", "dp_shard", "tp", "cp"))
    if min(replicate, tp, cp) < 1 or (shard < 1 and shard != -1):
        return None  # a degree below 1 (other than the shard's -1) is no layout
    if shard == -1:
        if world.value % (replicate * tp * cp):
            return None  # the layout does not fit W: BL202's finding
        shard = world.value // (replicate * tp * cp)
    if shard < 1 or replicate * shard * tp * cp != world.value:
        return None
    return Fact(replicate * shard, "dp", None, Origin.DERIVED, detail=f"data_parallel_replicate_dim x data_parallel_shard_dim ({shard})")


def _packing(root: Mapping):
    """`dataset.packed`, or the first packed entry of a list of datasets."""
    facts = [flag(entry.get("packed"), "dataset.packed") for entry in datasets(root)]
    return next((f for f in facts if f is not None and f.value), next((f for f in facts if f), None))


# --------------------------------------------------------------------------- builders and recipe traits


def is_torchtune(root) -> bool:
    """A mapping whose top level holds at least one `_component_` builder."""
    return isinstance(root, Mapping) and any(
        isinstance(value, Mapping) and isinstance(value.get("_component_"), Scalar) for value in root.items.values()
    )


def component(node: Optional[Node]) -> str:
    """The `_component_` of a builder mapping ("" when there is none)."""
    target = node.get("_component_") if isinstance(node, Mapping) else None
    return target.value if isinstance(target, Scalar) and isinstance(target.value, str) else ""


def datasets(root: Mapping) -> list:
    """The dataset builder mappings: `dataset`, or each entry of a list of them."""
    node = root.get("dataset")
    if isinstance(node, Sequence):
        return [entry for entry in node.items if isinstance(entry, Mapping)]
    return [node] if isinstance(node, Mapping) else []


_RECIPE_IN_HEADER = LazyPattern(r"\A\s*#[^\n]*\bin (?:recipes/)?([\w/]+)\.py")


def traits(doc: Document) -> set[str]:
    """What the config says about the recipe it is for:
    training (it has an optimizer), lora, quantizer, kd, ppo, grpo, dpo,
    early_exit, single_device, and parallel_dims (the recipe reads the
    `*_parallel_dim` keys)."""
    root = doc.root
    found: set[str] = set()
    if isinstance(root.get("optimizer"), Mapping):
        found.add("training")
    if "lora" in component(root.get("model")).rsplit(".", 1)[-1].lower():
        found.add("lora")
    if component(root.get("quantizer")):
        found.add("quantizer")
    for trait, key in (("kd", "teacher_model"), ("ppo", "ppo_batch_size"), ("grpo", "grpo_samples"),
                       ("grpo", "orchestration"), ("early_exit", "early_exit_params")):
        if key in root.items:
            found.add(trait)
    loss = component(root.get("loss")).rsplit(".", 1)[-1]
    if "DPO" in loss or "SimPO" in loss or "RSO" in loss:
        found.add("dpo")
    header = _RECIPE_IN_HEADER.match(doc.text)
    if "single_device" in os.path.basename(doc.path) or (header and header.group(1).endswith("single_device")):
        found.add("single_device")
    if "training" in found and not found & {"kd", "ppo", "grpo", "dpo", "early_exit", "single_device"} \
            and not {"lora", "quantizer"} <= found:
        # full_finetune_distributed, qat_distributed, lora_finetune_distributed
        found.add("parallel_dims")
    return found
