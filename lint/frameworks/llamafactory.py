"""LLaMA-Factory: TrainingArguments-style YAML (`llamafactory-cli train`).

Its arguments extend transformers' Seq2SeqTrainingArguments: a micro batch of
8 and no accumulation unless given.
"""

from __future__ import annotations

from ..document import Document
from .facts import Outside
from .training_arguments import FORMATS, MARKERS, is_training_arguments, plan_from

NAME = "llamafactory"
__all__ = ["NAME", "FORMATS", "MARKERS", "plan"]

KEYS = {"stage", "finetuning_type", "cutoff_len", "template", "neat_packing"}


def plan(doc: Document, outside: Outside):
    if not (set(doc.root.items) & KEYS) or not is_training_arguments(doc.root):
        return None
    return plan_from(doc, outside, NAME)
