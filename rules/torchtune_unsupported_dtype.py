"""
## What it does
Flags a torchtune training config whose `dtype` the recipe refuses: `fp16`
(every training recipe except the GRPO ones rejects full fp16 training), or
a string that is none of `fp16`, `bf16`, `fp32`, `fp64` (e.g. `bfloat16`).

## Why is this bad?
The recipes raise "fp16 precision is not supported in this recipe" (or "full
fp16 training is not supported with this recipe") in their first lines, and
`training.get_dtype` raises "Dtype bfloat16 must be one of fp16, bf16, fp32,
fp64 for finetuning." for any other name: the job fails as soon as it starts.

## Example
```yaml
dtype: fp16
```

## Use instead
```yaml
dtype: bf16
```

## Source
torchtune @ bd2a0fc: torchtune/training/precision.py:18-23 and 106-112
(`get_dtype`); the fp16 refusal in each training recipe, e.g.
recipes/full_finetune_distributed.py:136-141, lora_finetune_single_device.py,
full_dpo_distributed.py, knowledge_distillation_*.py, ppo_full_finetune_single_device.py,
qat_*.py (not in dev/grpo_full_finetune_distributed.py).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    precision = plan.settings.precision
    dtype = precision.dtype
    if dtype.value not in precision.accepted:
        yield Finding(
            span=dtype.span,
            message=f"dtype {dtype.value!r} is not one of {', '.join(precision.accepted)}: torchtune's get_dtype refuses it at start-up",
            fix="use bf16 (or fp32)" + (" - torchtune spells bfloat16 bf16" if dtype.value == "bfloat16" else ""),
        )
    elif dtype.value in precision.refused:
        yield Finding(
            span=dtype.span,
            message=f"dtype {dtype.value}: torchtune's training recipes refuse full {dtype.value} training at start-up",
            fix="set dtype: bf16, or fp32 on GPUs without bf16",
        )


_TUNE = """\
model:
  _component_: torchtune.models.qwen2_5.lora_qwen2_5_7b_instruct
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
batch_size: 2
dtype: {dtype}
"""

RULE = Rule(
    code="BL513",
    name="torchtune-unsupported-dtype",
    severity="error",
    summary="torchtune: dtype fp16 (refused by the training recipes) or an unknown dtype name",
    check=check,
    needs=("settings.precision",),
    doc=__doc__,
    examples=(
        Example("tune_fp16.yaml", _TUNE.format(dtype="fp16"), flagged=(7,)),
        Example("tune_bf16.yaml", _TUNE.format(dtype="bf16")),
        Example("tune_bfloat16.yaml", _TUNE.format(dtype="bfloat16"), flagged=(7,)),
        # Generation configs (no optimizer) may run in fp16.
        Example("tune_generate_fp16.yaml", "model:\n  _component_: torchtune.models.llama2.llama2_7b\nprompt: hi\ndtype: fp16\n"),
    ),
)
