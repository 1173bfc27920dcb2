"""transformers' Trainer and TRL: TrainingArguments as YAML or JSON.

The last adapter for YAML/JSON: it takes TrainingArguments-style configs that
no more specific adapter (ms-swift, LLaMA-Factory) recognised. Defaults: a
micro batch of 8, no accumulation (transformers/training_args.py; TRL's
configs keep both). A config with a key only TRL's configs have is "trl".
The DeepSpeed config a `deepspeed:` key names is resolved by linked.py when
a rule needs it.
"""

from __future__ import annotations

from ..document import Document
from .facts import Outside
from .training_arguments import FORMATS, MARKERS, is_training_arguments, plan_from

NAME = "transformers"
__all__ = ["NAME", "FORMATS", "MARKERS", "SFT_KEYS", "plan"]

# Keys of TRL's configs (SFTConfig, GRPOConfig/RLOOConfig, DPOConfig, ScriptArguments) that
# transformers' TrainingArguments lacks.
_TRL = {"max_length", "dataset_name", "max_seq_length", "num_generations", "padding_free", "packing",
        "packing_strategy", "dataset_text_field", "completion_only_loss", "assistant_only_loss",
        "generation_batch_size", "steps_per_generation", "max_prompt_length", "max_completion_length"}

# Keys only TRL's SFTConfig has (trl/trainer/*_config.py @ 0.19.1-1.16.0): they tell an SFT
# config from DPO's, which shares padding_free and dataset_num_proc.
SFT_KEYS = ("packing", "packing_strategy", "dataset_text_field", "completion_only_loss", "assistant_only_loss",
            "eval_packing", "dataset_kwargs")


def plan(doc: Document, outside: Outside):
    if not is_training_arguments(doc.root):
        return None
    framework = "trl" if set(doc.root.items) & _TRL else NAME
    return plan_from(doc, outside, framework)
