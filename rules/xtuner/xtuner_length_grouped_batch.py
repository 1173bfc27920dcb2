"""
## What it does
Flags an XTuner `LengthGroupedSampler` whose `per_device_batch_size` is not a
multiple of `batch_size x accumulative_counts`, the samples one rank takes per
optimizer step (XTuner's docs and all 40 of its configs that use the sampler
pass exactly that product).

## Why is this bad?
The sampler sorts samples by length (keeping image and text samples apart) in
groups of `per_device_batch_size x W x mega_batch_mult` and deals each group
out to the ranks. When a group does not hold whole optimizer steps, a step can
straddle two groups and mix the lengths or modalities the grouping was meant
to keep together. Nothing fails; the grouping just helps less than intended.
The parameter's name invites passing the micro batch alone.

## Example
```python
batch_size = 4  # per_device
accumulative_counts = 4
sampler = dict(type=LengthGroupedSampler, length_property="modality_length", per_device_batch_size=batch_size)
```

## Use instead
```python
sampler = dict(
    type=LengthGroupedSampler,
    length_property="modality_length",
    per_device_batch_size=batch_size * accumulative_counts,
)
```

## Source
xtuner 0.2.0: xtuner/dataset/samplers/length_grouped.py:102-110 (group size =
mega_batch_mult x per_device_batch_size x world size), 128-147 (groups sorted,
then dealt out by rank); docs/zh_cn/acceleration/length_grouped_sampler.rst
(`per_device_batch_size=batch_size * accumulative_counts`).
"""

from collections.abc import Iterator

from batchlint.frameworks.xtuner import XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    sampler = xtuner.sampler
    micro, ga, grouping = plan.micro_batch, plan.grad_accum, plan.length_grouping
    if sampler is None or micro is None or ga is None or grouping is None or not grouping.value:
        return
    per_device = sampler.per_device_batch_size
    batch, accumulation = micro.count, ga.count
    group = per_device.count if per_device is not None else None
    if batch is None or accumulation is None or per_device is None or group is None:
        return
    step = batch * accumulation
    mult = sampler.mega_batch_mult.number if sampler.mega_batch_mult is not None else None
    if group % step == 0 or (mult is not None and group * mult % step == 0):
        return
    span = sampler.keywords.get("per_device_batch_size", per_device.span)  # the argument, not the variable it may name
    yield Finding(
        span=span,
        message=f"per_device_batch_size {group} is not a multiple of {step}, the samples a rank takes per step",
        notes=(f"a rank takes {micro.key} ({batch}) x {ga.key} ({accumulation}) = {step} samples per optimizer step",
               "LengthGroupedSampler's length groups then need not hold whole steps, and a step can mix the "
               "lengths the grouping keeps apart"),
        fix=f"pass per_device_batch_size={micro.key} * {ga.key}, as XTuner's docs and configs do",
    )


RULE = Rule(
    code="BL333",
    name="xtuner-length-grouped-batch",
    severity="info",
    summary="XTuner LengthGroupedSampler per_device_batch_size that is not batch_size x accumulative_counts",
    check=check,
    subject=XTunerSettings,
    needs=("micro_batch", "grad_accum", "length_grouping"),
    every_release=(
        "LengthGroupedSampler groups mega_batch_mult x per_device_batch_size x W samples and deals them out by "
        "rank in every release that has it (v0.1.11 to v0.2.0 xtuner/dataset/samplers/length_grouped.py)"),
    doc=__doc__,
    examples=(
        Example("grouped_micro_only.py", """\
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 4  # per_device
accumulative_counts = 4

llava_dataset = dict(type=LLaVADataset, max_length=2048)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=llava_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="modality_length",
        per_device_batch_size=batch_size,
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(14,),
                message="per_device_batch_size 4 is not a multiple of 16, the samples a rank takes per step",
                fix="pass per_device_batch_size=batch_size * accumulative_counts, as XTuner's docs and configs do"),
        Example("grouped_per_step.py", """\
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 4  # per_device
accumulative_counts = 4

llava_dataset = dict(type=LLaVADataset, max_length=2048)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=llava_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="modality_length",
        per_device_batch_size=batch_size * accumulative_counts,
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("grouped_two_steps.py", """\
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 4  # per_device
accumulative_counts = 4

llava_dataset = dict(type=LLaVADataset, max_length=2048)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=llava_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="modality_length",
        per_device_batch_size=32,
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
    ),
)
