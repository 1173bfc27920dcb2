"""transformers' Trainer and TRL: TrainingArguments as YAML or JSON.

The last adapter for YAML/JSON: it takes TrainingArguments-style configs that
no more specific adapter (ms-swift, LLaMA-Factory) recognised. Defaults: a
micro batch of 8, no accumulation (transformers/training_args.py).
"""

from __future__ import annotations

from ..document import Document
from .facts import Outside
from .training_arguments import FORMATS, MARKERS, is_training_arguments, plan_from

NAME = "transformers"
__all__ = ["NAME", "FORMATS", "MARKERS", "plan"]

_TRL = {"max_length", "dataset_name", "max_seq_length", "num_generations", "padding_free"}


def plan(doc: Document, outside: Outside):
    if not is_training_arguments(doc.root):
        return None
    framework = "trl" if set(doc.root.items) & _TRL else NAME
    return plan_from(doc, outside, framework)
