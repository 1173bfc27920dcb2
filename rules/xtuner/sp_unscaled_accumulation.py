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

from collections.abc import Iterator

from batchlint.frameworks.xtuner import global_batch_text, inherited_note
from batchlint.plan import TrainingPlan
from batchlint.rule import Edit, Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    sp, ga, micro = plan.parallel["sp"], plan.grad_accum, plan.micro_batch
    if not sp.known or type(sp.value) is not int or sp.value <= 1 or not ga.known or ga.value < 1:
        return
    if micro is None or not micro.known or type(micro.value) is not int or micro.value < 1:
        return
    written = plan.settings.accumulation
    world = plan.world_size.value if plan.world_size is not None and plan.world_size.known else None
    now = global_batch_text(micro.value, ga.value, sp.value, world)
    if written.follows_sp:
        yield from _derived(ga, sp, micro, written, now, world, plan.document.path)
    elif written.written_for is not None and written.written_for != sp.value and written.written_for >= 1:
        yield from _stated(plan, ga, sp, micro, written.written_for, now, world)


def _derived(ga, sp, micro, written, now, world, config):
    at_sp1 = written.at_sp1
    if at_sp1 is None:
        return  # unknown at sp = 1: nothing to compare
    micro1, ga1 = at_sp1
    per_rank, per_rank1 = micro.value * ga.value, micro1 * ga1
    if per_rank == per_rank1 * sp.value or per_rank1 < 1:
        return  # the same global batch at both
    then = global_batch_text(micro1, ga1, 1, world)
    ratio = per_rank1 * sp.value / per_rank
    change = f"{_times(ratio)} smaller" if ratio > 1 else f"{_times(1 / ratio)} larger"
    if written.reset is not None and per_rank == per_rank1:
        # A base computed it from its own sp; this config raised sp and kept the value.
        message = (
            f"{ga.key} ({ga.value}) comes from {ga.span.path}, which computed it from its own {sp.key}; {config} "
            f"sets {sp.key} = {sp.value} and keeps it: the global batch is {now}, not the {then} of sp = 1: "
            f"{change} at this sp"
        )
    else:
        message = (
            f"{ga.key} is computed from {sp.key} but does not keep the global batch: at {sp.key} = {sp.value} it is "
            f"{ga.value} and the global batch is {now}; at {sp.key} = 1 it would be {ga1} and the global batch {then}: "
            f"{change} at this sp"
        )
    if written.reset is not None and micro1 == micro.value:
        fix = (f"set it again in {config}: `{written.reset.format(f'{ga1} * {sp.key}')}` keeps the global batch "
               f"of sp = 1 (or `{written.reset.format(ga.value)}`, if {now} is the batch meant)")
    elif micro1 == micro.value:
        fix = (f"write `{ga.key} = {ga1} * {sp.key}` to keep the global batch of sp = 1, "
               f"or `{ga.key} = {ga.value}` if {now} is the batch meant")
    else:
        fix = (f"make {micro.key} x {ga.key} {per_rank1 * sp.value} at {sp.key} = {sp.value} "
               f"({sp.value} x the {per_rank1} of sp = 1)")
    yield Finding(span=ga.span or sp.span, message=message, fix=fix, related=_inherited(sp, ga))


def _inherited(sp, ga) -> tuple:
    """The note at the sp this config sets, when the accumulation comes from a base."""
    note = inherited_note(sp, ga.span, f"{ga.key} ({ga.value})")
    return (Related(*note),) if note else ()


def _stated(plan, ga, sp, micro, meant_sp, now, world):
    meant = global_batch_text(micro.value, ga.value, meant_sp, world)
    add = f"`{ga.key} *= {sp.key}` after line {ga.span.line}" if ga.span else f"`{ga.key} = {ga.value} * {sp.key}`"
    fix = f"add {add}" if meant_sp == 1 else f"set {ga.key} for {sp.key} = {sp.value}, derived from {sp.key}"
    reset = plan.settings.accumulation.reset
    if reset is not None and ga.value % meant_sp == 0:  # written in a base: set again here, not there
        again = reset.format(f"{ga.value // meant_sp} * {sp.key}")
        fix = f"set it again in {plan.document.path}: `{again}` keeps the global batch of sp = {meant_sp}"
    elif reset is not None:
        fix = f"set it again in {plan.document.path}, for {sp.key} = {sp.value}"
    yield Finding(
        span=ga.span or sp.span,
        message=(
            f"{ga.key} ({ga.value}) is written for sp = {meant_sp}, {_why_meant(plan.settings.accumulation, sp)}, but "
            f"{sp.key} is {sp.value}: the global batch is {now}, not the {meant} it gives at sp = {meant_sp}"
        ),
        fix=fix,
        related=_inherited(sp, ga),
        edits=_insert_scaling(plan, ga, sp) if meant_sp == 1 else (),
    )


def _why_meant(written, sp) -> str:
    if written.written_in is not None:
        return f"the {sp.key} of {written.written_in}, which sets it"
    return "as its comment says"


def _times(ratio: float) -> str:
    return f"{ratio:g}x"


def _insert_scaling(plan, ga, sp) -> tuple:
    """`name *= sequence_parallel_size` on the line after `name = <literal>`, same indentation."""
    written = plan.settings.accumulation
    if written.line_end is None:
        return ()  # not a plain literal assignment: leave it to the author
    return (Edit(written.line_end, f"\n{written.indent}{ga.key} *= {sp.key}"),)


_CONFIG = """\
from mmengine.dataset import DefaultSampler
from mmengine.optim import AmpOptimWrapper
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = {sp}
batch_size = 1  # per_device
accumulative_counts = {ga}
{scaling}
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts)
"""

RULE = Rule(
    code="BL101",
    name="sp-unscaled-accumulation",
    severity="warning",
    summary="XTuner accumulation that does not keep the global batch of sp=1 as sequence_parallel_size changes",
    check=check,
    needs=("parallel.sp", "grad_accum", "micro_batch", "settings.accumulation"),
    unsafe_fix=True,  # it multiplies the global batch of a config that runs, on the word of a comment
    every_release=("arithmetic of the layout: XTuner's data-parallel size is W / sp in every release that has sequence "
                   "parallelism (xtuner/parallel/sequence/setup_distributed.py @ v0.1.15-v0.2.0), and the global batch "
                   "is micro x accumulation x W / sp; no start-up check is involved"),
    doc=__doc__,
    examples=(
        Example("sp8_shrunk.py", _CONFIG.format(sp=8, ga="64 // sequence_parallel_size", scaling=""),
                flagged=(7,), world_size=16),
        Example("sp8_shrunk_no_w.py", _CONFIG.format(sp=8, ga="64 // sequence_parallel_size", scaling=""), flagged=(7,)),
        Example("sp4_tuned_at_sp1.py", _CONFIG.format(sp=4, ga="6  # tuned at sp=1", scaling=""), flagged=(7,)),
        Example("sp4_scaled.py", _CONFIG.format(sp=4, ga=16, scaling="accumulative_counts *= sequence_parallel_size")),
        Example("sp4_explicit.py", _CONFIG.format(sp=4, ga="2 * sequence_parallel_size", scaling="")),
        Example("sp4_halved.py", _CONFIG.format(sp=4, ga="16 * sequence_parallel_size // 2", scaling="")),
        Example("sp4_conditional.py", _CONFIG.format(sp=4, ga="8 if sequence_parallel_size == 1 else 32", scaling="")),
        Example("sp4_literal.py", _CONFIG.format(sp=4, ga=16, scaling="")),  # BL105's, not this rule's
        Example("sp1_shrunk.py", _CONFIG.format(sp=1, ga="64 // sequence_parallel_size", scaling="")),
    ),
)
