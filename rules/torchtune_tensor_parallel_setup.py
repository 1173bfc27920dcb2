"""
## What it does
Flags `tensor_parallel_dim` > 1 in a torchtune config whose recipe cannot
use it: a LoRA config (lora_finetune_distributed asserts tensor parallelism
is off), or a full-finetuning / QAT config without a `tensor_parallel_plan`.
Configs for recipes that never read the key (single device, DPO, PPO,
knowledge distillation, QAT-LoRA, GRPO) are left alone.

## Why is this bad?
The recipes stop at start-up: "Tensor parallelism is not supported in this
recipe. Please set tensor_parallel_dim to 1." (LoRA) and "Tensor Parallel plan
needs to be provided when tensor parallel is enabled." (full, QAT).

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
torchtune @ bd2a0fc: recipes/lora_finetune_distributed.py:157-160;
recipes/full_finetune_distributed.py:156-161; recipes/qat_distributed.py:165-170.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    tp = plan.parallel.get("tp")
    if tp is None or not tp.known or tp.value <= 1 or tp.span is None:
        return
    tensor_parallel = plan.settings.tensor_parallel
    if not tensor_parallel.supported:
        yield Finding(
            span=tp.span,
            message=f"{tp.key} is {tp.value}, but lora_finetune_distributed supports no tensor parallelism: it refuses to start",
            fix=f"set {tp.key}: 1 (shard with data_parallel_shard_dim instead)",
        )
    elif tensor_parallel.plan.value is None:
        yield Finding(
            span=tp.span,
            message=f"{tp.key} is {tp.value}, but no {tensor_parallel.plan.key} says how to split the model: the recipe refuses to start",
            fix=f"add {tensor_parallel.plan.key} with the model family's plan"
                " (e.g. _component_: torchtune.models.llama3.base_llama_tp_plan)",
        )


_TUNE = """\
model:
  _component_: torchtune.models.{model}
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
gradient_accumulation_steps: 1
tensor_parallel_dim: {tp}
{plan}"""
_PLAN = "tensor_parallel_plan:\n  _component_: torchtune.models.llama3.base_llama_tp_plan\n"

RULE = Rule(
    code="BL215",
    name="torchtune-tensor-parallel-setup",
    severity="error",
    summary="torchtune: tensor_parallel_dim > 1 with a LoRA model or without a tensor_parallel_plan",
    check=check,
    needs=("parallel.tp", "settings.tensor_parallel"),
    doc=__doc__,
    examples=(
        Example("tune_tp_no_plan.yaml", _TUNE.format(model="llama3_3.llama3_3_70b", tp=8, plan=""), flagged=(7,)),
        Example("tune_tp_plan.yaml", _TUNE.format(model="llama3_3.llama3_3_70b", tp=8, plan=_PLAN)),
        Example("tune_lora_tp.yaml", _TUNE.format(model="llama3_3.lora_llama3_3_70b", tp=2, plan=""), flagged=(7,)),
        Example("tune_lora_tp1.yaml", _TUNE.format(model="llama3_3.lora_llama3_3_70b", tp=1, plan="")),
    ),
)
