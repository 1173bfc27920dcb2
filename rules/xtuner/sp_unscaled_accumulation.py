"""
## What it does
Flags an XTuner config with `sequence_parallel_size` > 1 whose global batch is
not the one the same config gives at sp = 1: an accumulation computed from
`sequence_parallel_size` in a way that does not keep it (`64 // sp`), or a
literal whose own comment says it is for another sp (`# tuned at sp=1`).

It judges values, not spelling: the config is evaluated again with every read
of `sequence_parallel_size` at 1, and the global batch there (micro x
accumulation x W) is compared with the one at the configured sp (micro x
accumulation x W / sp). `16 * sp`, `acc *= sp`, `base * sp // 2` and
`8 if sp == 1 else 32` (at sp 4) keep it and are clean. A plain literal with no
such comment is BL105 (info): it may well be written for its sp.

A config that inherits (`_base_`, `with read_base()`) is judged as mmengine
builds it: a base is evaluated on its own, so a child that raises
`sequence_parallel_size` keeps the accumulation its base computed with the
base's sp (and a literal of a base that sets its own sp is written for that sp).
The finding is at the base's line, with a note at the child's sp; the fix sets
the value again in the child, never in a base other configs share.

## Why is this bad?
Sequence parallelism splits every sequence over `sp` GPUs, so only W / sp
ranks read distinct data: global batch = batch_size x accumulative_counts x
W / sp. A derivation that shrinks the accumulation as sp grows makes the
global batch sp^2 times smaller than at sp = 1, with no error.

## Example
```python
sequence_parallel_size = 8
batch_size = 1
accumulative_counts = 64 // sequence_parallel_size
```

## Use instead
```python
sequence_parallel_size = 8
batch_size = 1
accumulative_counts = 64 * sequence_parallel_size
```
or, when the batch at this sp is the one meant, `accumulative_counts = 8`.

## Fix
For a literal its comment says is for sp = 1, `--fix --unsafe-fixes` adds
`accumulative_counts *= sequence_parallel_size` after it: the global batch it
was tuned with. The fix is unsafe: the config runs as it is, and the edit
multiplies its global batch by sp on the word of a comment, so it is applied
only when asked. A derivation is left to its author.

## Source
XTuner's sequence-parallel guide: "raise gradient accumulation by
sequence_parallel_world_size, since data_parallel_world_size drops to 1/sp"
(docs/zh_cn/user_guides/sequence_parallel.md:40-53, at docs/zh_cn/legacy/ on
main @ b934f46); 214 of xtuner 0.2.0's configs write
`accumulative_counts *= sequence_parallel_size`.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator

from batchlint.frameworks.xtuner import (
    Accumulation,
    XTunerSettings,
    global_batch_size,
    global_batch_text,
    inherited_note,
)
from batchlint.plan import Fact, TrainingPlan
from batchlint.rule import Edit, Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Optional

# What the framework does with it: nothing refuses a global batch.
_SILENT = "nothing refuses it: XTuner trains with this global batch and says nothing"


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    sp, ga, micro, written = plan.parallel["sp"], plan.grad_accum, plan.micro_batch, xtuner.accumulation
    if ga is None or micro is None or written is None:
        return  # a plan mmengine refuses has no accumulation
    degree, accumulation, per_device = sp.count, ga.count, micro.count
    if degree is None or degree <= 1 or accumulation is None or per_device is None:
        return
    world = plan.world_size.number if plan.world_size is not None else None
    batch = _Batch(sp, ga, micro, degree, accumulation, per_device, world)
    if written.follows_sp:
        yield from _derived(plan, written, batch)
    elif written.written_for is not None and written.written_for != degree and written.written_for >= 1:
        yield from _stated(plan, written, written.written_for, batch)


# The facts of the global batch and their values, all known: a NamedTuple to the type checker, made by
# collections.namedtuple at run time (typing.NamedTuple would import `typing`: lint/annotations.py).
if TYPE_CHECKING:
    class _Batch(NamedTuple):
        sp: Fact
        ga: Fact
        micro: Fact
        degree: int
        accumulation: int
        per_device: int
        world: Optional[int]
else:
    _Batch = namedtuple("_Batch", ("sp", "ga", "micro", "degree", "accumulation", "per_device", "world"))


def _derived(plan: TrainingPlan, written: Accumulation, batch: _Batch) -> Iterator[Finding]:
    sp, ga, micro, degree, accumulation, per_device, world = batch
    at_sp1 = written.at_sp1
    if at_sp1 is None:
        return  # unknown at sp = 1: nothing to compare
    micro1, ga1 = at_sp1
    per_rank, per_rank1 = per_device * accumulation, micro1 * ga1
    if per_rank == per_rank1 * degree or per_rank1 < 1:
        return  # the same global batch at both
    now, then = global_batch_text(per_device, accumulation, degree, world), global_batch_text(micro1, ga1, 1, world)
    ratio = per_rank1 * degree / per_rank
    change = f"{_times(ratio)} smaller" if ratio > 1 else f"{_times(1 / ratio)} larger"
    config = plan.document.path
    if written.reset is not None and per_rank == per_rank1 and ga.span is not None:
        # A base computed it from its own sp; this config raised sp and kept the value.
        origin = (f"{ga.key} ({accumulation}) comes from {ga.span.path}, which computed it from its own {sp.key}; "
                  f"{config} sets {sp.key} = {degree} and keeps it")
    else:
        origin = (f"{ga.key} is computed from {sp.key}: {accumulation} at sp = {degree}, {ga1} at sp = 1, "
                  "which does not keep the global batch")
    if written.reset is not None and micro1 == per_device:
        fix = (f"set it again in {config}: `{written.reset.format(f'{ga1} * {sp.key}')}` keeps the global batch "
               f"of sp = 1 (or `{written.reset.format(accumulation)}`, if {now} is the batch meant)")
    elif micro1 == per_device:
        fix = (f"write `{ga.key} = {ga1} * {sp.key}` to keep the global batch of sp = 1, "
               f"or `{ga.key} = {accumulation}` if {now} is the batch meant")
    else:
        fix = (f"make {micro.key} x {ga.key} {per_rank1 * degree} at {sp.key} = {degree} "
               f"({degree} x the {per_rank1} of sp = 1)")
    yield Finding(
        span=ga.span or sp.span,
        message=(f"global batch {global_batch_size(per_device, accumulation, degree, world)} at sp = {degree}, "
                 f"was {global_batch_size(micro1, ga1, 1, world)} at sp = 1"),
        notes=(origin,
               f"{micro.key} x {ga.key} x W / sp: {now} at sp = {degree}, {then} at sp = 1 ({change})",
               _SILENT),
        fix=fix,
        related=_inherited(sp, ga),
    )


def _inherited(sp: Fact, ga: Fact) -> tuple[Related, ...]:
    """The note at the sp this config sets, when the accumulation comes from a base."""
    note = inherited_note(sp, ga.span, f"{ga.key} ({ga.value})")
    return (Related(*note),) if note else ()


def _stated(plan: TrainingPlan, written: Accumulation, meant_sp: int, batch: _Batch) -> Iterator[Finding]:
    sp, ga, micro, degree, accumulation, per_device, world = batch
    now = global_batch_text(per_device, accumulation, degree, world)
    meant = global_batch_text(per_device, accumulation, meant_sp, world)
    add = f"`{ga.key} *= {sp.key}` after line {ga.span.line}" if ga.span else f"`{ga.key} = {accumulation} * {sp.key}`"
    fix = f"add {add}" if meant_sp == 1 else f"set {ga.key} for {sp.key} = {degree}, derived from {sp.key}"
    if written.reset is not None and accumulation % meant_sp == 0:  # written in a base: set again here, not there
        again = written.reset.format(f"{accumulation // meant_sp} * {sp.key}")
        fix = f"set it again in {plan.document.path}: `{again}` keeps the global batch of sp = {meant_sp}"
    elif written.reset is not None:
        fix = f"set it again in {plan.document.path}, for {sp.key} = {degree}"
    yield Finding(
        span=ga.span or sp.span,
        message=(f"global batch {global_batch_size(per_device, accumulation, degree, world)} at sp = {degree}: "
                 f"{ga.key} {accumulation} is for sp = {meant_sp}, where it gives "
                 f"{global_batch_size(per_device, accumulation, meant_sp, world)}"),
        notes=(f"{ga.key} ({accumulation}) is written for sp = {meant_sp}, {_why_meant(written, sp)}, but "
               f"{sp.key} is {degree}",
               f"{micro.key} x {ga.key} x W / sp: {now} at sp = {degree}, not the {meant} it gives at sp = {meant_sp}",
               _SILENT),
        fix=fix,
        related=_inherited(sp, ga),
        edits=_insert_scaling(written, ga, sp) if meant_sp == 1 else (),
    )


def _why_meant(written: Accumulation, sp: Fact) -> str:
    if written.written_in is not None:
        return f"the {sp.key} of {written.written_in}, which sets it"
    return "as its comment says"


def _times(ratio: float) -> str:
    return f"{ratio:g}x"


def _insert_scaling(written: Accumulation, ga: Fact, sp: Fact) -> tuple[Edit, ...]:
    """`name *= sequence_parallel_size` on the line after `name = <literal>`, same indentation."""
    if written.line_end is None:
        return ()  # not a plain literal assignment: leave it to the author
    return (Edit(written.line_end, f"\n{written.indent}{ga.key} *= {sp.key}"),)


RULE = Rule(
    code="BL101",
    name="sp-unscaled-accumulation",
    severity="warning",
    summary="XTuner accumulation that does not keep the global batch of sp=1 as sequence_parallel_size changes",
    check=check,
    subject=XTunerSettings,
    needs=("parallel.sp", "grad_accum", "micro_batch"),
    unsafe_fix=True,  # it multiplies the global batch of a config that runs, on the word of a comment
    every_release=("arithmetic of the layout: XTuner's data-parallel size is W / sp in every release that has sequence "
                   "parallelism (xtuner/parallel/sequence/setup_distributed.py @ v0.1.15-v0.2.0), and the global batch "
                   "is micro x accumulation x W / sp; no start-up check is involved"),
    doc=__doc__,
    examples=(
        Example("sp8_shrunk.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 8
batch_size = 1  # per_device
accumulative_counts = 64 // sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
""",
                flagged=(7,),
                world_size=16,
                message="global batch 16 at sp = 8, was 1024 at sp = 1",
                fix="write `accumulative_counts = 64 * sequence_parallel_size` to keep the global batch of sp = 1, "
                    "or `accumulative_counts = 8` if 16 sequences (1 x 8 x dp 2 = W 16 / sp 8) is the batch meant"),
        Example("sp8_shrunk_no_w.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 8
batch_size = 1  # per_device
accumulative_counts = 64 // sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
""",
                flagged=(7,),
                message="global batch 8 x W/8 at sp = 8, was 64 x W at sp = 1",
                fix="write `accumulative_counts = 64 * sequence_parallel_size` to keep the global batch of sp = 1, "
                    "or `accumulative_counts = 8` if 1 x 8 x W/8 sequences is the batch meant"),
        Example("sp4_tuned_at_sp1.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 6  # tuned at sp=1

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
""",
                flagged=(7,),
                message="global batch 6 x W/4 at sp = 4: accumulative_counts 6 is for sp = 1, where it gives "
                        "6 x W",
                fix="add `accumulative_counts *= sequence_parallel_size` after line 7",
                fixed="""\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 6  # tuned at sp=1
accumulative_counts *= sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
        Example("sp4_scaled.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
        Example("sp4_explicit.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 2 * sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
        Example("sp4_halved.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16 * sequence_parallel_size // 2

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
        Example("sp4_conditional.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 8 if sequence_parallel_size == 1 else 32

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
        Example("sp4_literal.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
        Example("sp1_shrunk.py", """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1  # per_device
accumulative_counts = 64 // sequence_parallel_size

sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""),
    ),
)
