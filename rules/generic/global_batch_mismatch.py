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

from collections.abc import Iterator

from batchlint.document import Span
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    yield from _declared_vs_product(plan)
    yield from _target(plan)


def _declared_vs_product(plan):
    declared, micro, ga, dp = plan.declared_global_batch, plan.micro_batch, plan.grad_accum, plan.data_parallel
    if declared is None or plan.derived_from_global is not None:
        return
    if not all(f is not None and f.known and f.value > 0 for f in (declared, micro, ga)):
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (micro, ga) if f.span)
    per_rank = micro.value * ga.value
    if dp is not None and dp.positive:
        product = per_rank * dp.value
        if product == declared.value:
            return
        message = (
            f"{declared.key} ({declared.value}) is not {micro.key} ({micro.value}) x {ga.key} ({ga.value}) "
            f"x world size ({dp.value}) = {product}; DeepSpeed refuses to start"
        )
        if declared.value % (micro.value * dp.value) == 0:
            fix = f"set {declared.key} to {product}, or {ga.key} to {declared.value // (micro.value * dp.value)}"
        else:
            fix = f"set {declared.key} to {product}, or drop one of the three keys so DeepSpeed derives it"
    elif declared.value % per_rank:
        message = (
            f"{declared.key} ({declared.value}) is not a multiple of {micro.key} ({micro.value}) x {ga.key} "
            f"({ga.value}) = {per_rank}, so it equals {per_rank} x W for no world size W; DeepSpeed refuses to start"
        )
        fix = f"set {declared.key} to {per_rank} x the number of GPUs, or drop it and let DeepSpeed derive it"
    else:
        return
    yield Finding(span=declared.span, message=message, fix=fix, severity="error", related=related)


def _target(plan):
    target = plan.target_global_batch
    effective = plan.effective_global_batch()
    if target is None or effective is None or effective[0] == target.value:
        return
    value, formula = effective
    at_fault = _editable(plan)
    message = f"the global batch is {value} ({formula}), not the {target.value} stated ({target.provenance})"
    fix = _fix(plan, target.value, at_fault)
    related = (Related(f"global batch {target.value} stated here", target.span),) if target.span else ()
    span = at_fault.span if at_fault is not None else Span.point(1)
    yield Finding(span=span, message=message, fix=fix, related=related)


def _editable(plan):
    """The written value a user would change: the declared global batch, else
    accumulation, else the micro batch, else wherever the world size was set."""
    if plan.declared_global_batch is not None and plan.derived_from_global and plan.declared_global_batch.span:
        return plan.declared_global_batch
    for fact in (plan.grad_accum, plan.micro_batch, plan.world_size):
        if fact is not None and fact.span is not None:
            return fact
    return None


def _fix(plan, target, at_fault):
    declared = plan.declared_global_batch
    if declared is not None and plan.derived_from_global:
        # The framework derives the rest from the global batch (written, or its default): set that.
        return f"set {declared.key} to {target}"
    micro, dp = plan.micro_batch, plan.data_parallel
    if micro is not None and micro.positive and dp is not None and dp.positive:
        per_step = micro.value * dp.value
        accumulation = plan.grad_accum.key if plan.grad_accum is not None else "the gradient accumulation"
        if target % per_step == 0:
            return f"set {accumulation} to {target // per_step} ({micro.value} x dp {dp.value} per micro-step)"
        return (f"no whole accumulation gives {target} with {micro.value} x dp {dp.value} sequences per micro-step;"
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
        Example(
            "ds_mismatch.json",
            '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 4\n}\n',
            flagged=(2,),
            world_size=8,
        ),
        Example(
            "ds_match.json",
            '{\n  "train_batch_size": 128,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 4\n}\n',
            world_size=8,
        ),
        Example(
            "ds_no_world_size.json",
            '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 4\n}\n',
            flagged=(2,),
        ),
        Example(
            "ds_auto.json",
            '{\n  "train_batch_size": "auto",\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 4\n}\n',
            world_size=8,
        ),
        Example(
            "swift_target.yaml",
            "per_device_train_batch_size: 2\ngradient_accumulation_steps: 8\nmodel_type: qwen2\n",
            flagged=(2,),
            world_size=8,
            global_batch=64,
        ),
        Example(
            "swift_target_met.yaml",
            "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nmodel_type: qwen2\n",
            world_size=8,
            global_batch=64,
        ),
        Example(
            "xtuner_directive.py",
            "# batchlint: world-size=8 global-batch=256\nbatch_size = 1\naccumulative_counts = 16\n"
            "train_dataloader = dict(batch_size=batch_size)\n"
            "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n",
            flagged=(3,),
        ),
        Example(
            "xtuner_directive_met.py",
            "# batchlint: world-size=16 global-batch=256\nbatch_size = 1\naccumulative_counts = 16\n"
            "train_dataloader = dict(batch_size=batch_size)\n"
            "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n",
        ),
    ),
)
