"""
## What it does
Checks the arguments of an XTuner config's train sampler against the
sampler's signature: `LengthGroupedSampler` takes no `shuffle` (it always
shuffles) and needs `per_device_batch_size`; `DefaultSampler`,
`SequenceParallelSampler` and `InternRepoSampler` take `shuffle` and `seed`
(and `round_up`, except InternRepoSampler).

## Why is this bad?
mmengine builds the sampler by calling its class with the dict's keys. An
argument the class does not take - typically `shuffle=True` left over when
`DefaultSampler` was swapped for `LengthGroupedSampler` - stops the job with a
TypeError when the dataloader is built, after the model has loaded.

## Example
```python
sampler=dict(type=LengthGroupedSampler, shuffle=True, per_device_batch_size=batch_size * accumulative_counts)
```

## Use instead
```python
sampler=dict(type=LengthGroupedSampler, length_property="length", per_device_batch_size=batch_size * accumulative_counts)
```

## Source
mmengine 0.10.6: mmengine/runner/runner.py:1387-1392 (the sampler is built
from its dict with `dataset` and `seed` added), mmengine/registry/build_functions.py:123
(`obj_cls(**args)`), mmengine/dataset/sampler.py:43-47, 121-124. xtuner 0.2.0:
xtuner/dataset/samplers/length_grouped.py:71-79, intern_repo.py:17-19,
xtuner/parallel/sequence/sampler.py:12-18.
"""

from collections.abc import Iterator

from batchlint.document import Symbol
from batchlint.frameworks.xtuner import XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    sampler, args = plan.sampler, xtuner.sampler
    if sampler is None or args is None or not isinstance(sampler.value, Symbol) or sampler.span is None:
        return
    spec, name = args.spec, sampler.value.name
    accepted = ", ".join(spec.accepts)
    for key, span in args.keywords.items():
        if key in ("type", "dataset") or key in spec.accepts:
            continue
        always = " (it always shuffles)" if key == "shuffle" else ""
        yield Finding(
            span=span,
            message=f"{name} (line {sampler.span.line}) takes no `{key}` argument{always}",
            notes=(f"{name} accepts {accepted}", "building the sampler fails with a TypeError before training starts"),
            fix=f"remove `{key}`",
        )
    for key in spec.requires:
        if key not in args.keywords:
            yield Finding(
                span=sampler.span,
                message=f"{name} needs `{key}`, which the sampler dict (lines {args.span.line}-{args.span.end_line}) "
                        "does not give",
                notes=("building the sampler fails with a TypeError before training starts",),
                fix=f"add `{key}=batch_size * accumulative_counts`",
            )


RULE = Rule(
    code="BL332",
    name="xtuner-sampler-arguments",
    severity="error",
    summary="an XTuner train sampler given an argument its class does not take, or missing a required one",
    check=check,
    subject=XTunerSettings,
    needs=("sampler",),
    every_release=(
        "each sampler's signature is the same in every XTuner release that has it (LengthGroupedSampler from "
        "v0.1.11 length_grouped.py:73-79 to v0.2.0 :71-79, InternRepoSampler from v0.1.14, "
        "SequenceParallelSampler from v0.1.16; a config naming one imports it, so runs a release that has it), "
        "and DefaultSampler/InfiniteSampler's in every mmengine XTuner requires (>=0.8.4: v0.8.0 to v0.10.7 "
        "mmengine/dataset/sampler.py:43-47, 121-124)"),
    doc=__doc__,
    examples=(
        Example("grouped_shuffle.py", """\
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 16  # per_device
accumulative_counts = 1

llava_dataset = dict(type=LLaVADataset, max_length=2048)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=llava_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        shuffle=True,
        per_device_batch_size=batch_size * accumulative_counts,
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(13,),
                message="LengthGroupedSampler (line 12) takes no `shuffle` argument (it always shuffles)",
                fix="remove `shuffle`"),
        Example("grouped_length_property.py", """\
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 16  # per_device
accumulative_counts = 1

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
        Example("grouped_no_batch.py", """\
from xtuner.dataset import LLaVADataset
from xtuner.dataset.samplers import LengthGroupedSampler

batch_size = 16  # per_device
accumulative_counts = 1

llava_dataset = dict(type=LLaVADataset, max_length=2048)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=llava_dataset,
    sampler=dict(
        type=LengthGroupedSampler,
        length_property="modality_length",
    ),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(12,),
                message="LengthGroupedSampler needs `per_device_batch_size`, which the sampler dict (lines 11-14) "
                        "does not give",
                fix="add `per_device_batch_size=batch_size * accumulative_counts`"),
    ),
)
