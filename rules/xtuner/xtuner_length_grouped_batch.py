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

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    sampler = plan.settings.sampler
    if not plan.length_grouping.value:
        return
    micro, ga = plan.micro_batch, plan.grad_accum
    if not micro.known or not ga.known or micro.value < 1 or ga.value < 1:
        return
    per_device = sampler.per_device_batch_size
    if per_device is None or not per_device.known or per_device.value < 1:
        return
    step = micro.value * ga.value
    mult = sampler.mega_batch_mult
    group = per_device.value * (mult.value if mult is not None and mult.known else 1)
    if per_device.value % step == 0 or (mult is not None and mult.known and group % step == 0):
        return
    yield Finding(
        span=sampler.keywords.get("per_device_batch_size", per_device.span),  # the argument, not the variable it may name
        message=(
            f"per_device_batch_size ({per_device.value}) is not a multiple of {micro.key} ({micro.value}) x "
            f"{ga.key} ({ga.value}) = {step}, the samples a rank takes per optimizer step: LengthGroupedSampler's "
            f"length groups then need not hold whole steps, and a step can mix the lengths the grouping keeps apart"
        ),
        fix=f"pass per_device_batch_size={micro.key} * {ga.key}, as XTuner's docs and configs do",
    )


_CONFIG = """\
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
        per_device_batch_size={per_device},
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

RULE = Rule(
    code="BL333",
    name="xtuner-length-grouped-batch",
    severity="info",
    summary="XTuner LengthGroupedSampler per_device_batch_size that is not batch_size x accumulative_counts",
    check=check,
    needs=("micro_batch", "grad_accum", "length_grouping", "settings.sampler"),
    every_release=(
        "LengthGroupedSampler groups mega_batch_mult x per_device_batch_size x W samples and deals them out by "
        "rank in every release that has it (v0.1.11 to v0.2.0 xtuner/dataset/samplers/length_grouped.py)"),
    doc=__doc__,
    examples=(
        Example("grouped_micro_only.py", _CONFIG.format(per_device="batch_size"), flagged=(14,)),
        Example("grouped_per_step.py", _CONFIG.format(per_device="batch_size * accumulative_counts")),
        Example("grouped_two_steps.py", _CONFIG.format(per_device=32)),
    ),
)
