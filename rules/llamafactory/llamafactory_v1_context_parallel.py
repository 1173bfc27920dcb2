"""
## What it does
Flags a LLaMA-Factory v1 config with `dist_config.cp_size` above 1 whose
attention is not `flash_attn: flash_attention_2` (v1 defaults to `sdpa`).

Only the layout a release reads is checked: 0.9.5, the first release whose
v1 has context parallelism, takes `cp_size` inside `dist_config`. A top-level
`cp_size` (and the refusal of `dist_config.name: deepspeed` with it) exists
only on the main branch after 0.9.5, so neither is flagged: 0.9.5 refuses a
top-level `cp_size` as an unknown key anyway.

## Why is this bad?
v1's Ulysses context parallelism swaps the flash-attention kernel for a
sequence-parallel one: the trainer raises "Sequence parallelism requires
flash attention" once the model is loaded, after the job got its GPUs.

## Example
```yaml
dist_config:
  name: fsdp2
  cp_size: 2
```

## Use instead
```yaml
flash_attn: flash_attention_2
dist_config:
  name: fsdp2
  cp_size: 2
```

## Source
LLaMA-Factory v0.9.5: src/llamafactory/v1/core/base_trainer.py:141-152
(`dist_config.cp_size` > 1 needs flash_attention_2), v1/config/model_args.py:36-41
(default sdpa), v1/core/model_engine.py:164-170 (passed as attn_implementation),
v1/accelerator/interface.py:138-146 (cp_size read from dist_config). v0.9.4's
v1 has neither context parallelism nor `flash_attn`. Main after 0.9.5 (3f77101):
top-level `cp_size`, base_trainer.py:100-102 (DeepSpeed) and 149-160.
"""

from collections.abc import Iterator

from batchlint.frameworks.llamafactory_v1 import LlamaFactoryV1Settings
from batchlint.frameworks.releases import LLAMAFACTORY
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

NEEDS_FA2 = Premise(
    LLAMAFACTORY, since="0.9.5", runs_since="0.9.4",
    source="v0.9.3 (no v1); v0.9.4 src/llamafactory/v1 (runs it: no context parallelism, dist_config.cp_size "
           "unread, no flash_attn argument); v0.9.5 "
           "src/llamafactory/v1/core/base_trainer.py:141-152 (first), v1/config/model_args.py:36-41")


def check(plan: TrainingPlan, v1: LlamaFactoryV1Settings) -> Iterator[Finding]:
    cp = plan.parallel["cp"]
    degree = cp.count
    if degree is None or degree <= 1 or cp.span is None or cp.key != "dist_config.cp_size":
        return  # a top-level cp_size is read by no release (main after 0.9.5 only)
    attn = v1.attn_implementation
    impl = attn.value
    if impl is not None and impl != "flash_attention_2":
        written = f"flash_attn is {impl}" if attn.span is not None else f"flash_attn is not set (default {impl})"
        yield Finding(
            span=cp.span,
            message=f"dist_config.cp_size is {degree}, but {written}; it needs flash_attention_2",
            notes=("v1 sequence parallelism needs flash_attention_2; the trainer refuses to start",),
            fix="set flash_attn: flash_attention_2",
            related=(Related(f"flash_attn = {impl}", attn.span),) if attn.span is not None else (),
        )


RULE = Rule(
    code="BL251",
    name="llamafactory-v1-context-parallel",
    severity="error",
    summary="LLaMA-Factory v1: context parallelism without flash_attention_2",
    check=check,
    subject=LlamaFactoryV1Settings,
    needs=("parallel.cp",),
    premises=(NEEDS_FA2,),
    doc=__doc__,
    examples=(
        # No release pinned: v1 of 0.9.4 runs it (without context parallelism).
        Example("v1_cp_sdpa.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
  cp_mode: ulysses
  cp_size: 2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
max_steps: 10
""", flagged=(6,), severity="info",
                message="dist_config.cp_size is 2, but flash_attn is not set (default sdpa); it needs "
                        "flash_attention_2",
                fix="set flash_attn: flash_attention_2"),
        Example("v1_cp_sdpa_pinned.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
  cp_mode: ulysses
  cp_size: 2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
max_steps: 10
""", flagged=(6,), files=(("requirements.txt", "llamafactory==0.9.5\n"),), severity="error",
                message="dist_config.cp_size is 2, but flash_attn is not set (default sdpa); it needs "
                        "flash_attention_2",
                fix="set flash_attn: flash_attention_2"),
        Example("v1_cp_sdpa_old.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
  cp_mode: ulysses
  cp_size: 2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
max_steps: 10
""", files=(("requirements.txt", "llamafactory==0.9.4\n"),)),
        Example("v1_cp_fa2.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
flash_attn: flash_attention_2
dist_config:
  name: fsdp2
  cp_mode: ulysses
  cp_size: 2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
max_steps: 10
""", files=(("requirements.txt", "llamafactory==0.9.5\n"),)),
        # The main branch's layout: no release reads a top-level cp_size.
        Example("v1_cp_top_level.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
cp_size: 2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
max_steps: 10
""", files=(("requirements.txt", "llamafactory==0.9.5\n"),)),
    ),
)
