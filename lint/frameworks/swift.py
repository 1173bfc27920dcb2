"""ms-swift: TrainingArguments-style YAML/JSON (`swift sft --config`).

Defaults differ from transformers: a micro batch of 1, and accumulation
max(1, ceil(16 / micro / W)) when not given (swift/trainers/arguments.py).
dp = W / sequence_parallel_size.
"""

from __future__ import annotations

import math

from ..document import Document
from ..plan import Fact
from .facts import Outside
from .training_arguments import FORMATS, MARKERS, is_training_arguments, plan_from

NAME = "swift"
__all__ = ["NAME", "FORMATS", "MARKERS", "plan"]

_SWIFT = {"tuner_type", "train_type", "sft_type", "model_type", "rlhf_type", "attn_impl", "lazy_tokenize",
          "model_author", "sequence_parallel_size", "padding_free", "ENV"}


def plan(doc: Document, outside: Outside):
    root = doc.root
    if not (set(root.items) & _SWIFT) or not is_training_arguments(root):
        return None
    return plan_from(doc, outside, NAME, micro_default=1, grad_accum_default=_default_accumulation)


def _default_accumulation(micro, world):
    if world and world.known and micro.known and micro.value > 0:
        value = max(1, math.ceil(16 / micro.value / world.value))
        return Fact(value, "gradient_accumulation_steps", None, f"ms-swift default for W={world.value}")
    return None
