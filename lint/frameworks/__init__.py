"""Framework adapters: each turns the Document of one framework's config into a TrainingPlan.

An adapter is a module with NAME, FORMATS (source formats it reads), MARKERS
(byte strings one of which any of its configs contains, so files that are no
training config are skipped before they are even parsed) and
`plan(document, outside) -> TrainingPlan | None`. Order matters only where two
adapters read the same format: the first that recognises a file takes it.
"""

from __future__ import annotations

from . import axolotl, deepspeed, hf, llamafactory, megatron, nemo, swift, torchtitan, torchtune, verl, xtuner, xtuner_v1

# Specific schemas first; hf (generic TrainingArguments) last.
ADAPTERS = (xtuner_v1, xtuner, torchtitan, deepspeed, axolotl, torchtune, verl, nemo, megatron, llamafactory, swift, hf)


def for_format(fmt: str) -> tuple:
    return tuple(adapter for adapter in ADAPTERS if fmt in adapter.FORMATS)


def markers_for(fmt: str) -> tuple:
    return tuple(marker for adapter in for_format(fmt) for marker in adapter.MARKERS)
