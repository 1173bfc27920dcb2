"""
## What it does
Notes an XTuner config with `sequence_parallel_size` > 1 whose
`accumulative_counts` is a value not derived from `sequence_parallel_size`
and not explained by a comment: it states the global batch the value gives at
this sp and the one it would give at sp = 1. Information, not a warning: the
value may well be written for its sp.

A comment on the value's line, or in the comment lines right above it, that
names sequence parallelism (`sp`, `sequence parallel`, `ulysses`) says the
value is written for this sp, and nothing is reported (`# bs = 32 gpus x 1 x
8 acc / 8 sequence parallel`, as XTuner's own benchmark configs write). A
comment that says another sp (`# tuned at sp=1`) makes it BL101's warning.

## Why is this bad?
Global batch = batch_size x accumulative_counts x W / sp. A literal does not
follow the next change of `sequence_parallel_size`: raising sp later shrinks
the global batch unless the literal is changed with it.

## Example
```python
sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
```

## Use instead
```python
sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 4 * sequence_parallel_size  # the factor written out
```
or `accumulative_counts *= sequence_parallel_size` after it when 16 is the
accumulation of sp = 1, or a comment saying the literal is for this sp.

## Source
XTuner's sequence-parallel guide (docs/zh_cn/user_guides/sequence_parallel.md:40-53
@ 0.2.0) scales accumulation by sp in the config; xtuner's
configs/llama_speed_benchmark/ write the literal for its sp with a comment.
"""

from collections.abc import Iterator

from batchlint.frameworks.xtuner import XTunerSettings, global_batch_size, global_batch_text, inherited_note
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    sp, ga, micro = plan.parallel["sp"], plan.grad_accum, plan.micro_batch
    if ga is None or micro is None:
        return  # a plan mmengine refuses has neither
    degree, accumulation, written = sp.count, ga.number, xtuner.accumulation
    if degree is None or degree <= 1 or accumulation is None or written is None:
        return
    if written.follows_sp or written.written_for is not None or accumulation < 1:
        return  # derived (BL101 judges it), or a comment says which sp it is for
    per_device = micro.count
    world = plan.world_size.number if plan.world_size is not None else None
    if per_device is None:
        message = f"{ga.key} {accumulation} is not derived from {sp.key}: global batch {degree}x smaller than at sp = 1"
        arithmetic = f"the global batch is {degree}x smaller than it is at sp = 1 with the same value"
    else:
        message = (f"global batch {global_batch_size(per_device, accumulation, degree, world)} at sp = {degree}, "
                   f"{global_batch_size(per_device, accumulation, 1, world)} at sp = 1: "
                   f"{ga.key} {accumulation} is not derived from sp")
        arithmetic = (f"global batch = {micro.key} x {ga.key} x W / {sp.key}: "
                      f"{global_batch_text(per_device, accumulation, degree, world)} here, and "
                      f"{global_batch_text(per_device, accumulation, 1, world)} at sp = 1")
    if accumulation % degree == 0:
        factor = accumulation // degree
        written_out = f"{factor} * {sp.key}" if factor > 1 else sp.key
        fix = (f"if {accumulation} already counts sp = {degree}, write `{ga.key} = {written_out}` (or say so in a "
               f"comment); if {accumulation} is the accumulation of sp = 1, add `{ga.key} *= {sp.key}` after it")
    else:
        fix = (f"if {accumulation} is the accumulation of sp = 1, add `{ga.key} *= {sp.key}` after it; "
               f"else say in a comment that it is written for sp = {degree}")
    if written.reset is not None:  # written in a base: set again here, not there
        fix = (f"if {accumulation} is the accumulation of sp = 1, set it again in {plan.document.path}: "
               f"`{written.reset.format(f'{accumulation} * {sp.key}')}`; else say in a comment that it is written "
               f"for sp = {degree}")
    note = inherited_note(sp, ga.span, f"{ga.key} ({accumulation})")
    yield Finding(
        span=ga.span or sp.span,
        message=message,
        notes=(f"{ga.key} ({accumulation}) is a value, not derived from {sp.key} ({degree}): it will not follow "
               f"the next change of {sp.key}",
               arithmetic,
               "it may well be written for this sp: XTuner trains with it either way"),
        fix=fix,
        related=(Related(*note),) if note else (),
    )


RULE = Rule(
    code="BL105",
    name="sp-accumulation-literal",
    severity="info",
    summary="XTuner accumulation under sequence parallelism that is not derived from sequence_parallel_size",
    check=check,
    subject=XTunerSettings,
    needs=("parallel.sp", "grad_accum", "micro_batch"),
    every_release=("arithmetic of the layout, as BL101: a literal accumulation under sp > 1 shrinks the global batch by "
                   "sp in every XTuner release with sequence parallelism; an info, never a refusal"),
    doc=__doc__,
    examples=(
        Example("sp4_literal.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(6,),
                world_size=8,
                message="global batch 32 at sp = 4, 128 at sp = 1: accumulative_counts 16 is not derived from sp",
                fix="if 16 already counts sp = 4, write `accumulative_counts = 4 * sequence_parallel_size` (or say "
                    "so in a comment); if 16 is the accumulation of sp = 1, add `accumulative_counts *= "
                    "sequence_parallel_size` after it"),
        Example("sp4_literal_no_w.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 6
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(6,),
                message="global batch 6 x W/4 at sp = 4, 6 x W at sp = 1: accumulative_counts 6 is "
                        "not derived from sp",
                fix="if 6 is the accumulation of sp = 1, add `accumulative_counts *= sequence_parallel_size` after "
                    "it; else say in a comment that it is written for sp = 4"),
        Example("sp8_commented.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 8
batch_size = 1  # per_device
# bs = 32 gpus * 1 batch_size_per_device * 8 acc / 8 sequence parallel
accumulative_counts = 8
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("sp4_trailing_comment.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16  # 4 x sp
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("sp4_derived.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 4 * sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("sp1_literal.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1  # per_device
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
    ),
)
