"""
## What it does
Flags an XTuner config at `sequence_parallel_size = 1` that computes a
`sampler` variable from `sequence_parallel_size` but never uses it: the train
dataloader names a sampler that splits by global rank (`DefaultSampler`)
directly.

## Why is this bad?
Nothing is wrong yet. But the config looks ready for sequence parallelism, and
raising `sequence_parallel_size` will keep the hard-coded sampler, which hands
each rank of a sequence-parallel group a different sample: the job then hangs
or trains on mixed sequences (BL201). At sp > 1, BL201 reports it instead.

## Example
```python
sequence_parallel_size = 1
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(sampler=dict(type=DefaultSampler, shuffle=True))
```

## Use instead
```python
sequence_parallel_size = 1
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(sampler=dict(type=sampler, shuffle=True))
```

## Source
xtuner 0.2.0: configs/orpo/internlm/internlm2_chat_1_8b_orpo_full_varlenattn_jsonl_dataset.py:91,118
(the upstream instance); the samplers' ranks as in BL201.
"""

from collections.abc import Iterator

from batchlint.document import Symbol
from batchlint.frameworks.xtuner import XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    sp, used, variable, spec = plan.parallel["sp"], plan.sampler, xtuner.unused_sampler, xtuner.sampler
    if variable is None or not variable.follows_sp or spec is None:
        return
    if used is None or sp.number != 1 or spec.spec.by_dp_rank or not isinstance(used.value, Symbol):
        return
    yield Finding(
        span=used.span,
        message=f"`sampler` (line {variable.assigned.line}) is computed from {sp.key} but never used",
        notes=(f"train_dataloader names {used.value.name} directly, so raising {sp.key} above 1 keeps a sampler "
               "that splits by global rank",),
        fix="use `type=sampler`",
        related=(Related("`sampler` computed here", variable.assigned),),
    )


RULE = Rule(
    code="BL334",
    name="xtuner-unused-sampler",
    severity="info",
    summary="XTuner sampler variable computed for sequence parallelism but not used",
    check=check,
    subject=XTunerSettings,
    needs=("parallel.sp", "sampler"),
    every_release=(
        "a note on the config as written: it names SequenceParallelSampler, so it runs v0.1.16 or later "
        "(xtuner/parallel/sequence/sampler.py, which splits by data-parallel rank there and in v0.2.0), where "
        "DefaultSampler splits by global rank"),
    doc=__doc__,
    examples=(
        Example("sampler_hard_coded.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(10,),
                message="`sampler` (line 9) is computed from sequence_parallel_size but never used",
                fix="use `type=sampler`"),
        Example("sampler_used.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("sampler_hard_coded_sp4.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
    ),
)
