"""
## What it does
Flags a LLaMA-Factory v1 config with `batching_strategy: padding_free` whose
attention is not `flash_attn: flash_attention_2` (v1 defaults to `sdpa`).

## Why is this bad?
Padding-free batching concatenates a micro batch into one row and relies on
the flash-attention varlen kernel to keep the samples apart: the trainer
raises "`padding_free` requires `flash_attn: flash_attention_2`" when it
builds the batch generator, after the model is loaded. The first release
with it is 0.9.5 (v1 of 0.9.4 has no batching strategies).

## Example
```yaml
micro_batch_size: 4
batching_strategy: padding_free
```

## Use instead
```yaml
micro_batch_size: 4
batching_strategy: padding_free
flash_attn: flash_attention_2
```

## Source
LLaMA-Factory v0.9.5: src/llamafactory/v1/core/base_trainer.py:156-161
(`_create_batch_generator`), v1/config/training_args.py:60 and
v1/config/arg_utils.py:54-58 (batching_strategy); default attention
v1/config/model_args.py:36-41. v0.9.4's v1 has neither batching_strategy nor
`flash_attn`. The same check on main (ff6d4d1): base_trainer.py:164-169.
"""

from collections.abc import Iterator

from batchlint.frameworks.llamafactory_v1 import LlamaFactoryV1Settings
from batchlint.frameworks.releases import LLAMAFACTORY
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

NEEDS_FA2 = Premise(
    LLAMAFACTORY, since="0.9.5", runs_since="0.9.5",
    source="v0.9.4 src/llamafactory/v1/config/training_args.py (no batching_strategy: it cannot run such a "
           "config); v0.9.5 "
           "src/llamafactory/v1/core/base_trainer.py:156-161 (first), v1/config/model_args.py:36-41")


def check(plan: TrainingPlan, v1: LlamaFactoryV1Settings) -> Iterator[Finding]:
    strategy, attn = v1.batching_strategy, v1.attn_implementation
    if strategy is None or strategy.value != "padding_free" or strategy.span is None:
        return
    impl = attn.value
    if impl is None or impl == "flash_attention_2":
        return
    written = f"flash_attn is {impl}" if attn.span is not None else f"flash_attn is not set (default {impl})"
    yield Finding(
        span=strategy.span,
        message=f"batching_strategy padding_free needs flash_attention_2, but {written}",
        notes=("padding-free batching concatenates a micro batch into one row, which only the flash-attention "
               "varlen kernel keeps apart; the trainer refuses to start",),
        fix="set flash_attn: flash_attention_2",
        related=(Related(f"flash_attn = {impl}", attn.span),) if attn.span is not None else (),
    )


RULE = Rule(
    code="BL355",
    name="llamafactory-v1-padding-free-attention",
    severity="error",
    summary="LLaMA-Factory v1: padding_free batching without flash_attention_2",
    check=check,
    subject=LlamaFactoryV1Settings,
    premises=(NEEDS_FA2,),
    doc=__doc__,
    examples=(
        # No release pinned: batching_strategy is new in 0.9.5, which refuses it.
        Example("v1_padding_free_sdpa.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 4
batching_strategy: padding_free
cutoff_len: 2048
max_steps: 10
""", flagged=(7,), severity="error",
                message="batching_strategy padding_free needs flash_attention_2, but flash_attn is not set "
                        "(default sdpa)",
                fix="set flash_attn: flash_attention_2"),
        Example("v1_padding_free_sdpa_pinned.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 4
batching_strategy: padding_free
cutoff_len: 2048
max_steps: 10
""", flagged=(7,), files=(("requirements.txt", "llamafactory==0.9.5\n"),), severity="error",
                message="batching_strategy padding_free needs flash_attention_2, but flash_attn is not set "
                        "(default sdpa)",
                fix="set flash_attn: flash_attention_2"),
        Example("v1_padding_free_sdpa_old.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 4
batching_strategy: padding_free
cutoff_len: 2048
max_steps: 10
""", files=(("requirements.txt", "llamafactory==0.9.4\n"),)),
        Example("v1_padding_free_fa2.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 4
batching_strategy: padding_free
flash_attn: flash_attention_2
cutoff_len: 2048
max_steps: 10
"""),
        Example("v1_padding_free_eager.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 4
batching_strategy: padding_free
flash_attn: eager
cutoff_len: 2048
max_steps: 10
""", flagged=(7,), severity="error",
                message="batching_strategy padding_free needs flash_attention_2, but flash_attn is eager",
                fix="set flash_attn: flash_attention_2"),
    ),
)
