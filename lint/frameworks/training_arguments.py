"""What every Hugging Face TrainingArguments-style config shares (transformers,
TRL, ms-swift, LLaMA-Factory): the keys, and the plan they give.

Global batch = per_device_train_batch_size x gradient_accumulation_steps x dp,
dp = W / sequence_parallel_size where the framework has one (ms-swift).
"""

from __future__ import annotations

from typing import Callable, Optional

from ..document import Document, Mapping, Scalar
from ..plan import Fact, Origin, TrainingPlan
from .facts import Outside, divide, flag, number

FORMATS = ("yaml", "json")
MARKERS = (b"per_device_train_batch_size", b"gradient_accumulation_steps", b"group_by_length", b"packing")

_BATCH_KEYS = {"per_device_train_batch_size", "gradient_accumulation_steps"}
_SAMPLING_KEYS = {"group_by_length", "train_sampling_strategy", "packing", "neat_packing"}
# Keys that mark another framework's schema, read by its own adapter.
_FOREIGN = {"micro_batch_size", "base_model", "train_micro_batch_size_per_gpu", "actor_rollout_ref", "trainer"}


def is_training_arguments(root: Mapping) -> bool:
    keys = set(root.items)
    if not (keys & (_BATCH_KEYS | _SAMPLING_KEYS)) or keys & _FOREIGN:
        return False
    # torchtune configs also say batch_size and gradient_accumulation_steps, but build objects from _component_.
    return not any(isinstance(v, Mapping) and "_component_" in v.items for v in root.items.values())


def plan_from(
    doc: Document,
    outside: Outside,
    framework: str,
    micro_default: int = 8,
    grad_accum_default: Optional[Callable] = None,
    precision_off: tuple = ("fp16",),
    max_grad_norm_default: Optional[float] = 1.0,
    logging_steps_default: Optional[int] = None,
) -> TrainingPlan:
    """The plan of a TrainingArguments config. `grad_accum_default(micro, world)`
    gives the framework's default accumulation (None: 1); `precision_off` the
    precisions ("fp16", "bf16") that are off unless written (transformers: fp16;
    TRL turns bf16 on unless fp16 is); `max_grad_norm_default` None when the
    framework's own default is not assumed; `logging_steps_default` None where
    it is not assumed."""
    root = doc.root
    world = outside.world_size
    micro = number(root.get("per_device_train_batch_size"), "per_device_train_batch_size", default=micro_default)
    sp = number(root.get("sequence_parallel_size"), "sequence_parallel_size", default=1)
    grad_accum = number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps")
    if grad_accum is None:
        grad_accum = grad_accum_default(micro, world) if grad_accum_default else Fact(1, "gradient_accumulation_steps", None, Origin.DEFAULT)
    return TrainingPlan(
        framework=framework,
        document=doc,
        micro_batch=micro,
        grad_accum=grad_accum,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"sp": sp},
        data_parallel=divide(world, [sp]),
        packing=_first_true(root, ("packing", "neat_packing")),
        length_grouping=_length_grouping(root),
        length_grouping_off=_length_grouping_off(root),
        fp16=_precision(root, "fp16", precision_off),
        bf16=_precision(root, "bf16", precision_off),
        max_grad_norm=_max_grad_norm(root, max_grad_norm_default),
        logging_steps=_step_interval(root, "logging_steps", logging_steps_default),
    )


def _step_interval(root: Mapping, key: str, default: Optional[int]) -> Optional[Fact]:
    """A positive step count or ratio as written, else the default; None when unknown."""
    node = root.get(key)
    if node is None:
        return None if default is None else Fact(default, key, None, Origin.DEFAULT)
    value = getattr(node, "value", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return Fact(value, key, node.span, node=node)
    return None


def _precision(root: Mapping, key: str, off_by_default: tuple) -> Optional[Fact]:
    node = root.get(key)
    if node is None:
        return Fact(False, key, None, Origin.DEFAULT) if key in off_by_default else None
    return flag(node, key)


def _max_grad_norm(root: Mapping, default: Optional[float]) -> Optional[Fact]:
    """A number as written (None when written as something else), else the default."""
    node = root.get("max_grad_norm")
    if node is None:
        return None if default is None else Fact(default, "max_grad_norm", None, Origin.DEFAULT)
    value = getattr(node, "value", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Fact(value, "max_grad_norm", node.span, node=node)
    return None


def _first_true(root: Mapping, keys: tuple):
    facts = [flag(root.get(key), key) for key in keys]
    return next((f for f in facts if f is not None and f.value), next((f for f in facts if f), None))


def _length_grouping_off(root: Mapping) -> Optional[str]:
    """What turns the grouping off: transformers' default sampling strategy, or group_by_length: false."""
    grouping = _length_grouping(root)
    return None if grouping is None else {"group_by_length": "false", "train_sampling_strategy": '"random"'}[grouping.key]


def _length_grouping(root: Mapping):
    strategy = root.get("train_sampling_strategy")
    if isinstance(strategy, Scalar) and strategy.value == "group_by_length":
        return Fact(True, "train_sampling_strategy", strategy.span, node=strategy)
    return flag(root.get("group_by_length"), "group_by_length")
