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

from batchlint.frameworks.xtuner import global_batch_text, inherited_note
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    sp, ga, micro = plan.parallel["sp"], plan.grad_accum, plan.micro_batch
    if not sp.known or type(sp.value) is not int or sp.value <= 1 or not ga.known or type(ga.value) is not int:
        return
    written = plan.settings.accumulation
    if written.follows_sp or written.written_for is not None or ga.value < 1:
        return  # derived (BL101 judges it), or a comment says which sp it is for
    per_device = micro.value if micro.known and type(micro.value) is int and micro.value >= 1 else None
    world = plan.world_size.value if plan.world_size is not None and plan.world_size.known else None
    if per_device is None:
        batches = f"the global batch is {sp.value}x smaller than it is at sp = 1 with the same value"
    else:
        batches = (
            f"the global batch is {global_batch_text(per_device, ga.value, sp.value, world)} here, and would be "
            f"{global_batch_text(per_device, ga.value, 1, world)} at sp = 1"
        )
    if ga.value % sp.value == 0:
        factor = ga.value // sp.value
        written_out = f"{factor} * {sp.key}" if factor > 1 else sp.key
        fix = (f"if the factor is in it, write `{ga.key} = {written_out}` (or say so in a comment); "
               f"if {ga.value} is the accumulation of sp = 1, add `{ga.key} *= {sp.key}` after it")
    else:
        fix = (f"if {ga.value} is the accumulation of sp = 1, add `{ga.key} *= {sp.key}` after it; "
               f"else say in a comment that it is written for sp = {sp.value}")
    if written.reset is not None:  # written in a base: set again here, not there
        fix = (f"if {ga.value} is the accumulation of sp = 1, set it again in {plan.document.path}: "
               f"`{written.reset.format(f'{ga.value} * {sp.key}')}`; else say in a comment that it is written "
               f"for sp = {sp.value}")
    note = inherited_note(sp, ga.span, f"{ga.key} ({ga.value})")
    yield Finding(
        span=ga.span or sp.span,
        message=f"{ga.key} ({ga.value}) is not derived from {sp.key} ({sp.value}): {batches}; "
                f"it will not follow the next change of {sp.key}",
        fix=fix,
        related=(Related(*note),) if note else (),
    )


_CONFIG = """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = {sp}
batch_size = 1  # per_device
{comment}accumulative_counts = {ga}
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

RULE = Rule(
    code="BL105",
    name="sp-accumulation-literal",
    severity="info",
    summary="XTuner accumulation under sequence parallelism that is not derived from sequence_parallel_size",
    check=check,
    needs=("parallel.sp", "grad_accum", "micro_batch", "settings.accumulation"),
    every_release=("arithmetic of the layout, as BL101: a literal accumulation under sp > 1 shrinks the global batch by "
                   "sp in every XTuner release with sequence parallelism; an info, never a refusal"),
    doc=__doc__,
    examples=(
        Example("sp4_literal.py", _CONFIG.format(sp=4, ga=16, comment=""), flagged=(6,), world_size=8),
        Example("sp4_literal_no_w.py", _CONFIG.format(sp=4, ga=6, comment=""), flagged=(6,)),
        Example("sp8_commented.py", _CONFIG.format(
            sp=8, ga=8, comment="# bs = 32 gpus * 1 batch_size_per_device * 8 acc / 8 sequence parallel\n")),
        Example("sp4_trailing_comment.py", _CONFIG.format(sp=4, ga="16  # 4 x sp", comment="")),
        Example("sp4_derived.py", _CONFIG.format(sp=4, ga="4 * sequence_parallel_size", comment="")),
        Example("sp1_literal.py", _CONFIG.format(sp=1, ga=16, comment="")),
    ),
)
