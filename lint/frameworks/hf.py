"""Hugging Face TrainingArguments as YAML or JSON: transformers, TRL, ms-swift, LLaMA-Factory.

Global batch = per_device_train_batch_size x gradient_accumulation_steps x dp,
dp = W / sequence_parallel_size (ms-swift). Defaults differ: transformers uses
a micro batch of 8 and no accumulation; ms-swift a micro batch of 1 and
accumulation max(1, ceil(16 / micro / W)) (swift/trainers/arguments.py).
"""

from __future__ import annotations

import math

from ..document import Document, Mapping, Scalar
from ..plan import Fact, TrainingPlan
from .facts import Outside, divide, flag, number

NAME = "transformers"
FORMATS = ("yaml", "json")
MARKERS = (b"per_device_train_batch_size", b"gradient_accumulation_steps", b"group_by_length", b"packing")

_BATCH_KEYS = {"per_device_train_batch_size", "gradient_accumulation_steps"}
_SAMPLING_KEYS = {"group_by_length", "train_sampling_strategy", "packing", "neat_packing"}
# Keys that mark another framework's schema, read by its own adapter.
_FOREIGN = {"micro_batch_size", "base_model", "train_micro_batch_size_per_gpu", "actor_rollout_ref", "trainer"}
_SWIFT = {"tuner_type", "train_type", "sft_type", "model_type", "rlhf_type", "attn_impl", "lazy_tokenize",
          "model_author", "sequence_parallel_size", "padding_free", "ENV"}
_LLAMAFACTORY = {"stage", "finetuning_type", "cutoff_len", "template", "neat_packing"}


def flavour(root: Mapping) -> str:
    keys = set(root.items)
    if keys & _LLAMAFACTORY:
        return "llamafactory"
    if keys & _SWIFT:
        return "swift"
    if "max_length" in keys or "dataset_name" in keys or "max_seq_length" in keys:
        return "trl"
    return "transformers"


def plan(doc: Document, outside: Outside):
    root = doc.root
    keys = set(root.items)
    if not (keys & (_BATCH_KEYS | _SAMPLING_KEYS)) or keys & _FOREIGN:
        return None
    if any(isinstance(v, Mapping) and "_component_" in v.items for v in root.items.values()):
        return None  # torchtune
    name = flavour(root)
    swift = name == "swift"
    world = outside.world_size
    micro = number(root.get("per_device_train_batch_size"), "per_device_train_batch_size", default=1 if swift else 8)
    sp = number(root.get("sequence_parallel_size"), "sequence_parallel_size", default=1)
    grad_accum = number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps")
    if grad_accum is None:
        if not swift:
            grad_accum = Fact(1, "gradient_accumulation_steps", None, "default")
        elif world and world.known and micro.known and micro.value > 0:
            value = max(1, math.ceil(16 / micro.value / world.value))
            grad_accum = Fact(value, "gradient_accumulation_steps", None, f"ms-swift default for W={world.value}")
    plan = TrainingPlan(
        framework=name,
        document=doc,
        micro_batch=micro,
        grad_accum=grad_accum,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"sp": sp},
        data_parallel=divide(world, [sp]),
        packing=_first_true(root, ("packing", "neat_packing")),
        length_grouping=_length_grouping(root),
        fp16=flag(root.get("fp16"), "fp16"),
        bf16=flag(root.get("bf16"), "bf16"),
    )
    return plan


def _first_true(root: Mapping, keys: tuple):
    facts = [flag(root.get(key), key) for key in keys]
    return next((f for f in facts if f is not None and f.value), next((f for f in facts if f), None))


def _length_grouping(root: Mapping):
    strategy = root.get("train_sampling_strategy")
    if isinstance(strategy, Scalar) and strategy.value == "group_by_length":
        return Fact(True, "train_sampling_strategy", strategy.span, node=strategy)
    return flag(root.get("group_by_length"), "group_by_length")
