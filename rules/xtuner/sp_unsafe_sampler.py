"""
## What it does
Flags an XTuner config with `sequence_parallel_size` > 1 whose train sampler
splits the data by global rank (`DefaultSampler`, `InfiniteSampler`,
`LengthGroupedSampler`) instead of by data-parallel rank
(`SequenceParallelSampler`, `InternRepoSampler`). It also names a `sampler` variable that the config
computes but never uses - the upstream slip behind most of these.

## Why is this bad?
The sp ranks of one sequence-parallel group must read the same sample, each
taking a slice of it. A sampler that hands every rank a different sample
makes the group attend across unrelated sequences: the job hangs or trains
on garbage (InternLM/xtuner#818).

## Example
```python
sequence_parallel_size = 4
train_dataloader = dict(sampler=dict(type=DefaultSampler, shuffle=True))
```

## Use instead
```python
sequence_parallel_size = 4
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(sampler=dict(type=sampler, shuffle=True))
```

## Source
Data-parallel ranks @ xtuner 0.2.0: xtuner/parallel/sequence/sampler.py:19-20,
xtuner/dataset/samplers/intern_repo.py:25-26. Global ranks (`get_dist_info`):
mmengine 0.10.6 mmengine/dataset/sampler.py:48 and 125,
xtuner/dataset/samplers/length_grouped.py:81. The same from XTuner 0.1.16, the
release that brought sequence parallelism (0.1.15 reads no sequence_parallel_size).
"""

from collections.abc import Iterator

from batchlint.document import Symbol
from batchlint.frameworks.releases import XTUNER
from batchlint.frameworks.xtuner import XTunerSettings, inherited_note
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Edit, Example, Finding, Related, Rule

SEQUENCE_PARALLEL = Premise(
    XTUNER, since="0.1.16", runs_since="0.1.16",
    source="v0.1.15 has no sequence parallelism (no xtuner/parallel/sequence; tools/train.py reads no "
           "sequence_parallel_size); v0.1.16 xtuner/parallel/sequence/sampler.py:19, xtuner/dataset/samplers/"
           "intern_repo.py:23 (dp rank), length_grouped.py:81 (global rank), tools/train.py:313-315 (first); "
           "v0.2.0 sampler.py:19, intern_repo.py:26, length_grouped.py:81, tools/train.py:364 (still)")


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    sp, sampler, spec = plan.parallel["sp"], plan.sampler, xtuner.sampler
    degree = sp.count
    if sampler is None or degree is None or degree <= 1 or spec is None or spec.spec.by_dp_rank:
        return
    if not isinstance(sampler.value, Symbol):
        return
    name = sampler.value.name
    notes = [f"with {sp.key} = {degree}, the {degree} ranks of a sequence-parallel group must read the same sample; "
             f"{name} splits the data over all W ranks: the job hangs or trains on mixed sequences"]
    unused = xtuner.unused_sampler
    edits: tuple[Edit, ...] = ()
    if unused is not None:
        notes.append(f"the `sampler` variable (line {unused.assigned.line}) is computed but not used")
        fix = "use `type=sampler`"
        if unused.follows_sp and sampler.span is not None:  # it follows sp: using it is the whole fix
            edits = (Edit(sampler.span, "sampler"),)
    else:
        fix = f"use `sampler = SequenceParallelSampler if {sp.key} > 1 else DefaultSampler` and `type=sampler`"
    note = inherited_note(sp, sampler.span, f"the sampler ({name})")
    if note is not None:  # chosen in a base, with the base's sp: choose again here, and edit nothing there
        fix = (f"set the sampler's type again in {plan.document.path}, for {sp.key} = {degree}: "
               "SequenceParallelSampler")
        edits = ()
    yield Finding(span=sampler.span, message=f"{name} splits the data by global rank at sp = {degree}; an sp group's ranks need one sample",
                  notes=tuple(notes), fix=fix, edits=edits, related=(Related(*note),) if note else ())


RULE = Rule(
    code="BL201",
    name="sp-unsafe-sampler",
    severity="error",
    summary="a sampler that splits by global rank under sequence parallelism",
    check=check,
    subject=XTunerSettings,
    needs=("parallel.sp", "sampler"),
    premises=(SEQUENCE_PARALLEL,),
    doc=__doc__,
    examples=(
        Example("sp_default_sampler.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
""",
                flagged=(9,),
                message="DefaultSampler splits the data by global rank at sp = 4; an sp group's "
                        "ranks need one sample",
                fix="use `type=sampler`",
                fixed="""\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
"""),
        Example("sp_sampler_variable.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
"""),
        Example("sp1_default_sampler.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
"""),
        Example("sp_sp_sampler.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 2
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=SequenceParallelSampler, shuffle=True))
"""),
        Example("sp_default_sampler_0_2_0.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
""",
                flagged=(9,),
                files=(("requirements.txt", "xtuner==0.2.0\n"),),
                severity='error',
                message="DefaultSampler splits the data by global rank at sp = 4; an sp group's "
                        "ranks need one sample",
                fix="use `type=sampler`",
                fixed="""\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
"""),
        # 0.1.15 has no sequence parallelism: every rank trains on its own samples.
        Example("sp_default_sampler_0_1_15.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=DefaultSampler, shuffle=True))
""",
                files=(("requirements.txt", "xtuner==0.1.15\n"),)),
    ),
)
