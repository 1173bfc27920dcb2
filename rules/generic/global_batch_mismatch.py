"""
## What it does
Compares the global batch a config produces (micro batch x gradient
accumulation x data-parallel size) with the global batch it is meant to have:
DeepSpeed's `train_batch_size` when all three batch keys are given (an error:
DeepSpeed asserts the identity at start-up), or a target the user states with
`--global-batch`, `global-batch` in `[tool.batchlint]` or a
`# batchlint: global-batch=N` comment (a warning: the job runs, with another
batch than meant).

## Why is this bad?
A global batch that differs from the one the learning rate and schedule were
tuned for changes the training run silently, and DeepSpeed refuses to start
when `train_batch_size` disagrees with the other two keys - after the job has
waited for its GPUs.

## Example
```json
{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}
```
run on 8 GPUs: 4 x 4 x 8 = 128, not 64.

## Use instead
```json
{"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}
```
or give only two of the three keys and let DeepSpeed derive the third.

## Source
deepspeed/runtime/config.py `_batch_assertion` (train_batch_size is not equal
to micro_batch_per_gpu * gradient_acc_step * world_size).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.document import Span
from batchlint.plan import Fact, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def check(plan: TrainingPlan) -> Iterator[Finding]:
    yield from _declared_vs_product(plan)
    yield from _target(plan)


def _declared_vs_product(plan: TrainingPlan) -> Iterator[Finding]:
    declared, micro, ga, dp = plan.declared_global_batch, plan.micro_batch, plan.grad_accum, plan.data_parallel
    if declared is None or plan.derived_from_global is not None or micro is None or ga is None:
        return
    total, m, g = declared.count, micro.count, ga.count
    if total is None or m is None or g is None:
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (micro, ga) if f.span)
    per_rank = m * g
    world = dp.count if dp is not None else None
    if world is not None:
        product = per_rank * world
        if product == total:
            return
        message = f"{declared.key} {total} is not {product} (micro {m} x accumulation {g} x world size {world})"
        notes = (f"{micro.key} ({m}) x {ga.key} ({g}) x world size ({world}) = {product}",
                 f"DeepSpeed refuses to start unless {declared.key} is their product")
        if total % (m * world) == 0:
            fix = f"set {declared.key} to {product}, or {ga.key} to {total // (m * world)}"
        else:
            fix = f"set {declared.key} to {product}, or drop one of the three keys so DeepSpeed derives it"
    elif total % per_rank:
        message = f"{declared.key} {total} is not a multiple of {per_rank} (micro {m} x accumulation {g})"
        notes = (f"{micro.key} ({m}) x {ga.key} ({g}) = {per_rank}; {declared.key} must be {per_rank} x W, "
                 f"and no world size W makes it {total}",
                 f"DeepSpeed refuses to start unless {declared.key} is their product")
        fix = f"set {declared.key} to {per_rank} x the number of GPUs, or drop it and let DeepSpeed derive it"
    else:
        return
    yield Finding(span=declared.span, message=message, notes=notes, fix=fix, severity="error", related=related)


def _target(plan: TrainingPlan) -> Iterator[Finding]:
    target = plan.target_global_batch
    stated = target.number if target is not None else None  # always an int: a directive, --global-batch, the project
    effective = plan.effective_global_batch()
    if target is None or stated is None or effective is None or effective[0] == stated:
        return
    value, formula = effective
    at_fault = _editable(plan)
    message = f"the global batch is {value}, not the {target.value} stated ({target.provenance})"
    notes = (f"the global batch is {formula}",)
    fix = _fix(plan, stated, at_fault)
    related = (Related(f"global batch {target.value} stated here", target.span),) if target.span else ()
    span = at_fault.span if at_fault is not None else Span.point(1)
    yield Finding(span=span, message=message, notes=notes, fix=fix, related=related)


def _editable(plan: TrainingPlan) -> Optional[Fact]:
    """The written value a user would change: the declared global batch, else
    accumulation, else the micro batch, else wherever the world size was set."""
    if plan.declared_global_batch is not None and plan.derived_from_global and plan.declared_global_batch.span:
        return plan.declared_global_batch
    for fact in (plan.grad_accum, plan.micro_batch, plan.world_size):
        if fact is not None and fact.span is not None:
            return fact
    return None


def _fix(plan: TrainingPlan, target: int, at_fault: Optional[Fact]) -> str:
    declared = plan.declared_global_batch
    if declared is not None and plan.derived_from_global:
        # The framework derives the rest from the global batch (written, or its default): set that.
        return f"set {declared.key} to {target}"
    micro = plan.micro_batch.count if plan.micro_batch is not None else None
    dp = plan.data_parallel.count if plan.data_parallel is not None else None
    if micro is not None and dp is not None:
        per_step = micro * dp
        accumulation = plan.grad_accum.key if plan.grad_accum is not None else "the gradient accumulation"
        if target % per_step == 0:
            return f"set {accumulation} to {target // per_step} ({micro} x dp {dp} per micro-step)"
        return (f"no whole accumulation gives {target} with {micro} x dp {dp} sequences per micro-step;"
                " change the micro batch or the target")
    return f"change the batch settings to give {target}"


RULE = Rule(
    code="BL102",
    name="global-batch-mismatch",
    severity="warning",
    summary="the global batch differs from the one declared or stated",
    check=check,
    needs=("micro_batch",),
    every_release=("arithmetic: the global batch each framework forms from the micro batch, the accumulation and the "
                   "data-parallel size, compared with the target you declared (a `global-batch` directive or the project"
                   " config); no start-up check is involved"),
    doc=__doc__,
    examples=(
        Example("ds_mismatch.json", """\
{
  "train_batch_size": 64,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
""", flagged=(2,), world_size=8,
                message="train_batch_size 64 is not 128 (micro 4 x accumulation 4 x world size 8)",
                fix="set train_batch_size to 128, or gradient_accumulation_steps to 2"),
        Example("ds_match.json", """\
{
  "train_batch_size": 128,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
""", world_size=8),
        Example("ds_no_world_size.json", """\
{
  "train_batch_size": 100,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
""", flagged=(2,),
                message="train_batch_size 100 is not a multiple of 16 (micro 4 x accumulation 4)",
                fix="set train_batch_size to 16 x the number of GPUs, or drop it and let DeepSpeed derive it"),
        Example("ds_auto.json", """\
{
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 4
}
""", world_size=8),
        Example("swift_target.yaml", """\
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
model_type: qwen2
""", flagged=(2,), world_size=8, global_batch=64,
                message="the global batch is 128, not the 64 stated (from --global-batch)",
                fix="set gradient_accumulation_steps to 4 (2 x dp 8 per micro-step)"),
        Example("swift_target_met.yaml", """\
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
model_type: qwen2
""", world_size=8, global_batch=64),
        Example("xtuner_directive.py", """\
# batchlint: world-size=8 global-batch=256
batch_size = 1
accumulative_counts = 16
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""", flagged=(3,),
                message="the global batch is 128, not the 256 stated (from the batchlint directive)",
                fix="set accumulative_counts to 32 (1 x dp 8 per micro-step)"),
        Example("xtuner_directive_met.py", """\
# batchlint: world-size=16 global-batch=256
batch_size = 1
accumulative_counts = 16
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
    ),
)
