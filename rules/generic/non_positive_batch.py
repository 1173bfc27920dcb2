"""
## What it does
Flags a micro batch, gradient accumulation or declared global batch written
as zero or a negative number (TorchTitan's `global_batch_size = -1`, which
means "local x dp", is not flagged).

## Why is this bad?
DeepSpeed asserts each of its three batch keys is greater than zero; the
other frameworks fail later, inside the data loader or the optimizer step.
Either way the job dies after it has its GPUs.

## Example
```json
{"train_micro_batch_size_per_gpu": 0, "gradient_accumulation_steps": 4}
```

## Use instead
```json
{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4}
```

## Source
deepspeed/runtime/config.py `_batch_assertion` ("... has to be greater than 0").
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    for fact in (plan.micro_batch, plan.grad_accum, plan.declared_global_batch):
        value = fact.number if fact is not None else None
        if fact is not None and value is not None and value <= 0 and fact.span is not None:
            yield Finding(
                span=fact.span,
                message=f"{fact.key} is {value}, not a positive whole number",
                notes=("a batch size or accumulation must be a positive whole number: the framework refuses it "
                       "at start-up or trains nothing",),
                fix=f"set {fact.key} to 1 or more",
            )


RULE = Rule(
    code="BL104",
    name="non-positive-batch",
    severity="error",
    summary="a batch size or accumulation of zero or less",
    check=check,
    every_release=("a micro batch, accumulation or global batch of zero or fewer samples trains nothing in any "
                   "release of any framework (DeepSpeed's _batch_assertion refuses it from v0.3.1 to v0.19.8; the "
                   "others divide by it or build an empty batch); the only special value, TorchTitan's global "
                   "batch -1, is not read as one"),
    doc=__doc__,
    examples=(
        Example("ds_zero.json", """\
{
  "train_micro_batch_size_per_gpu": 0,
  "gradient_accumulation_steps": 4
}
""", flagged=(2,),
                message="train_micro_batch_size_per_gpu is 0, not a positive whole number",
                fix="set train_micro_batch_size_per_gpu to 1 or more"),
        Example("ds_one.json", """\
{
  "train_micro_batch_size_per_gpu": 1,
  "gradient_accumulation_steps": 4
}
"""),
        Example("hf_negative.yaml", """\
per_device_train_batch_size: 4
gradient_accumulation_steps: -2
""", flagged=(2,),
                message="gradient_accumulation_steps is -2, not a positive whole number",
                fix="set gradient_accumulation_steps to 1 or more"),
        Example("hf_positive.yaml", """\
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
"""),
        Example("titan_default_global.toml", """\
[training]
local_batch_size = 8
global_batch_size = -1
"""),
    ),
)
