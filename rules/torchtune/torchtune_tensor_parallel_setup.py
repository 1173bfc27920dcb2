"""
## What it does
Flags `tensor_parallel_dim` > 1 without a `tensor_parallel_plan` in a
torchtune full-finetuning config (recipes/full_finetune_distributed.py), the
one recipe that reads the key in a release: torchtune 0.6.0 on. Configs for
recipes that never read it are left alone; so are LoRA and QAT configs, whose
recipes ignore the key in every release (only torchtune's unreleased main
branch refuses them: a LoRA config with tensor parallelism, a QAT one without
a plan).

## Why is this bad?
The recipe stops at start-up: "Tensor Parallel plan needs to be provided when
tensor parallel is enabled."

## Example
```yaml
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
tensor_parallel_dim: 8
```

## Use instead
```yaml
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
tensor_parallel_dim: 8
tensor_parallel_plan:
  _component_: torchtune.models.llama3.base_llama_tp_plan
```

## Source
recipes/full_finetune_distributed.py:149-156 @ v0.6.0 and v0.6.1 (v0.5.0 reads
no tensor_parallel_dim). Not in any release: lora_finetune_distributed's
assertion (main 10c31c0, 2025-07) and qat_distributed's plan check (main
541c730, 2025-05).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import TORCHTUNE
from batchlint.frameworks.torchtune import TorchtuneSettings, traits
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

PLAN_REQUIRED = Premise(
    TORCHTUNE, since="0.6.0",
    source="v0.5.0 recipes/full_finetune_distributed.py reads no tensor_parallel_dim; v0.6.0 "
           "recipes/full_finetune_distributed.py:149-156 (first); v0.6.1 recipes/full_finetune_distributed.py:149-156 (still)")


def check(plan: TrainingPlan, torchtune: TorchtuneSettings) -> Iterator[Finding]:
    tp, tensor_parallel = plan.parallel["tp"], torchtune.tensor_parallel
    degree = tp.number
    if tensor_parallel is None or degree is None or degree <= 1 or tp.span is None:
        return
    # LoRA (supported False) and QAT: their released recipes ignore tensor_parallel_dim.
    if not tensor_parallel.supported or "quantizer" in traits(plan.document):
        return
    if tensor_parallel.plan.value is None:
        yield Finding(
            span=tp.span,
            message=f"{tp.key} is {degree}, but no {tensor_parallel.plan.key} says how to split the model",
            notes=("the recipe refuses to start without a tensor-parallel plan",),
            fix=f"add {tensor_parallel.plan.key} with the model family's plan"
                " (e.g. _component_: torchtune.models.llama3.base_llama_tp_plan)",
        )


RULE = Rule(
    code="BL215",
    name="torchtune-tensor-parallel-setup",
    severity="error",
    summary="torchtune: tensor_parallel_dim > 1 without a tensor_parallel_plan",
    check=check,
    subject=TorchtuneSettings,
    needs=("parallel.tp",),
    premises=(PLAN_REQUIRED,),
    doc=__doc__,
    examples=(
        # No release pinned: torchtune before 0.6.0 ignores tensor_parallel_dim.
        Example("tune_tp_no_plan.yaml", """\
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 8
""", flagged=(7,),
                message="tensor_parallel_dim is 8, but no tensor_parallel_plan says how to split the model",
                fix="add tensor_parallel_plan with the model family's plan (e.g. _component_: "
                    "torchtune.models.llama3.base_llama_tp_plan)",
                severity="info"),
        Example("tune_tp_no_plan_pinned.yaml", """\
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 8
""", flagged=(7,),
                message="tensor_parallel_dim is 8, but no tensor_parallel_plan says how to split the model",
                fix="add tensor_parallel_plan with the model family's plan (e.g. _component_: "
                    "torchtune.models.llama3.base_llama_tp_plan)",
                files=(("requirements.txt", "torchtune==0.6.0\n"),),
                severity="error"),
        Example("tune_tp_no_plan_before.yaml", """\
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 8
""", files=(("requirements.txt", "torchtune==0.5.0\n"),)),
        Example("tune_tp_plan.yaml", """\
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 8
tensor_parallel_plan:
  _component_: torchtune.models.llama3.base_llama_tp_plan
"""),
        # lora_finetune_distributed ignores tensor_parallel_dim in every release (refused on main only).
        Example("tune_lora_tp.yaml", """\
model:
  _component_: torchtune.models.llama3_3.lora_llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 2
""", files=(("requirements.txt", "torchtune==0.6.1\n"),)),
        # qat_distributed ignores it in every release too (its plan check is on main only).
        Example("tune_qat_tp.yaml", """\
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 8
quantizer:
  _component_: torchtune.training.quantization.Int8DynActInt4WeightQATQuantizer
""", files=(("requirements.txt", "torchtune==0.6.1\n"),)),
        Example("tune_lora_tp1.yaml", """\
model:
  _component_: torchtune.models.llama3_3.lora_llama3_3_70b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: 1
"""),
    ),
)
