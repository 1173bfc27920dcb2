"""
## What it does
Flags a torchtune training config whose `dtype` the recipe refuses: `fp16`
(every training recipe rejects full fp16 training), or a string that is none
of `fp16`, `bf16`, `fp32`, `fp64` (e.g. `bfloat16`). Both hold in every
release. The GRPO recipe (dev/grpo_full_finetune_distributed.py, 0.6.0 on)
refuses fp16 in 0.6.0 and 0.6.1 only: torchtune's main branch dropped the
check, so a GRPO config is flagged only where 0.6.0 or 0.6.1 is pinned.

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
`get_dtype`: torchtune/utils/precision.py:85-91 @ 0.0.1 (its wheel is commit
95a2f00), torchtune/training/precision.py:105-111 @ v0.6.1. The fp16 refusal
in each training recipe: recipes/full_finetune_single_device.py:68-71 @
95a2f00 (0.0.1), recipes/full_finetune_distributed.py:131-134 @ v0.6.1 (and
lora_*, *_dpo_*, knowledge_distillation_*, ppo_*, qat_*, dev/early_exit_*);
GRPO: recipes/dev/grpo_full_finetune_distributed.py:93-96 @ v0.6.0 and v0.6.1.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import TORCHTUNE
from batchlint.frameworks.torchtune import TorchtuneSettings, traits
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

NAMES = Premise(
    TORCHTUNE, name="dtype name",
    source="0.0.1 (wheel = commit 95a2f00) torchtune/utils/precision.py:85-91 (get_dtype refuses other names); "
           "v0.6.1 torchtune/training/precision.py:105-111 (still)")
FP16 = Premise(
    TORCHTUNE, name="fp16",
    source="0.0.1 (commit 95a2f00) recipes/full_finetune_single_device.py:68-71, full_finetune_distributed.py:76-79, "
           "lora_finetune_*.py; v0.6.1 recipes/full_finetune_distributed.py:131-134 (still; every training recipe)")
GRPO_FP16 = Premise(
    TORCHTUNE, name="fp16 in GRPO", since="0.6.0", until="0.6.1",
    source="v0.5.0 has no GRPO recipe; v0.6.0 recipes/dev/grpo_full_finetune_distributed.py:93-96 (first); "
           "v0.6.1 recipes/dev/grpo_full_finetune_distributed.py:93-96 (last: main removed the check)")


def check(plan: TrainingPlan, torchtune: TorchtuneSettings) -> Iterator[Finding]:
    precision = torchtune.precision
    if precision is None:
        return
    dtype = precision.dtype
    if dtype.value not in precision.accepted:
        yield Finding(
            span=dtype.span,
            message=f"dtype {dtype.value!r} is not one of {', '.join(precision.accepted)}",
            notes=("torchtune's get_dtype refuses it at start-up",),
            fix="use bf16 (or fp32)" + (" - torchtune spells bfloat16 bf16" if dtype.value == "bfloat16" else ""),
            premise=NAMES.name,
        )
    elif dtype.value in precision.refused:
        yield Finding(
            span=dtype.span,
            message=f"dtype {dtype.value}: torchtune's training recipes refuse full {dtype.value} training",
            notes=(f"the recipe refuses full {dtype.value} training at start-up",),
            fix="set dtype: bf16, or fp32 on GPUs without bf16",
            premise=FP16.name,
        )
    elif dtype.value == "fp16" and "grpo" in traits(plan.document):
        yield Finding(
            span=dtype.span,
            message="dtype fp16: torchtune's GRPO recipe refuses full fp16 training",
            notes=("torchtune 0.6's GRPO recipe refuses full fp16 training at start-up",),
            fix="set dtype: bf16, or fp32 on GPUs without bf16",
            premise=GRPO_FP16.name,
        )


RULE = Rule(
    code="BL513",
    name="torchtune-unsupported-dtype",
    severity="error",
    summary="torchtune: dtype fp16 (refused by the training recipes) or an unknown dtype name",
    check=check,
    subject=TorchtuneSettings,
    premises=(NAMES, FP16, GRPO_FP16),
    doc=__doc__,
    examples=(
        Example("tune_fp16.yaml", """\
model:
  _component_: torchtune.models.qwen2_5.lora_qwen2_5_7b_instruct
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
batch_size: 2
dtype: fp16
""", flagged=(7,),
                message="dtype fp16: torchtune's training recipes refuse full fp16 training",
                fix="set dtype: bf16, or fp32 on GPUs without bf16"),
        Example("tune_bf16.yaml", """\
model:
  _component_: torchtune.models.qwen2_5.lora_qwen2_5_7b_instruct
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
batch_size: 2
dtype: bf16
"""),
        Example("tune_bfloat16.yaml", """\
model:
  _component_: torchtune.models.qwen2_5.lora_qwen2_5_7b_instruct
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
batch_size: 2
dtype: bfloat16
""", flagged=(7,),
                message="dtype 'bfloat16' is not one of fp16, bf16, fp32, fp64",
                fix="use bf16 (or fp32) - torchtune spells bfloat16 bf16"),
        Example("tune_fp16_pinned.yaml", """\
model:
  _component_: torchtune.models.qwen2_5.lora_qwen2_5_7b_instruct
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
batch_size: 2
dtype: fp16
""", flagged=(7,),
                message="dtype fp16: torchtune's training recipes refuse full fp16 training",
                fix="set dtype: bf16, or fp32 on GPUs without bf16",
                files=(("requirements.txt", "torchtune==0.1.0\n"),),
                severity="error"),
        # GRPO: refused by 0.6.0 and 0.6.1, not by main; silent where no release is pinned.
        Example("tune_grpo_fp16.yaml", """\
model:
  _component_: torchtune.models.qwen2_5.qwen2_5_3b
optimizer:
  _component_: torch.optim.AdamW
  lr: 1e-5
batch_size: 1
grpo_samples: 16
dtype: fp16
""", flagged=(8,),
                message="dtype fp16: torchtune's GRPO recipe refuses full fp16 training",
                fix="set dtype: bf16, or fp32 on GPUs without bf16",
                files=(("requirements.txt", "torchtune==0.6.1\n"),),
                severity="error"),
        Example("tune_grpo_fp16_unpinned.yaml", """\
model:
  _component_: torchtune.models.qwen2_5.qwen2_5_3b
optimizer:
  _component_: torch.optim.AdamW
  lr: 1e-5
batch_size: 1
grpo_samples: 16
dtype: fp16
"""),
        # Generation configs (no optimizer) may run in fp16.
        Example("tune_generate_fp16.yaml", """\
model:
  _component_: torchtune.models.llama2.llama2_7b
prompt: hi
dtype: fp16
"""),
    ),
)
