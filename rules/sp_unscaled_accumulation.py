"""
## What it does
Flags an XTuner config with `sequence_parallel_size` > 1 whose
`accumulative_counts` is not derived from `sequence_parallel_size`.

## Why is this bad?
Sequence parallelism splits every sequence over `sp` GPUs, so only W / sp
ranks read distinct data: global batch = batch_size x accumulative_counts x
W / sp. Raising `sp` without scaling accumulation trains with a global batch
`sp` times smaller than the same config at sp = 1, with no error. A literal
that happens to be a multiple of `sp` may already include the factor, but it
will not follow the next change of `sp`.

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
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size
```

## Source
XTuner's sequence-parallel guide: "raise gradient accumulation by
sequence_parallel_world_size, since data_parallel_world_size drops to 1/sp"
(docs/zh_cn/user_guides/sequence_parallel.md:40-53, at docs/zh_cn/legacy/ on
main @ b934f46); 214 of xtuner 0.2.0's configs write
`accumulative_counts *= sequence_parallel_size`.
"""

from batchlint.rule import Edit, Example, Finding, Rule


def check(plan):
    sp, ga, micro = plan.parallel["sp"], plan.grad_accum, plan.micro_batch
    if not sp.known or sp.value <= 1 or not ga.known or ga.value < 1:
        return
    if plan.settings.accumulation.follows_sp:
        return  # derived from sp: scaled (or deliberately not) in the open
    per_device = micro.value if micro is not None and micro.known else None
    batch = _batches(plan, per_device, ga.value, sp.value)
    add = f"add `{ga.key} *= {sp.key}` after line {ga.span.line}" if ga.span else f"set {ga.key} = {ga.value} * {sp.key}"
    if ga.value % sp.value == 0:
        message = (
            f"{ga.key} ({ga.value}) is not derived from {sp.key} ({sp.value}): unless the factor is already in it, "
            f"{batch}; as a multiple of {sp.value} it may include the factor, but a literal will not follow the next "
            f"change of {sp.key}"
        )
        fix = f"{add}, or if the factor is in it write `{ga.key} = {ga.value // sp.value} * {sp.key}`"
    else:
        message = f"{ga.key} ({ga.value}) is not scaled by {sp.key} ({sp.value}): {batch}"
        fix = add
    edits = () if ga.value % sp.value == 0 else _insert_scaling(plan, ga, sp)
    yield Finding(span=ga.span or sp.span, message=message, fix=fix, edits=edits)


def _insert_scaling(plan, ga, sp) -> tuple:
    """`name *= sequence_parallel_size` on the line after `name = <literal>`, same indentation."""
    written = plan.settings.accumulation
    if written.line_end is None:
        return ()  # not a plain literal assignment: leave it to the author
    return (Edit(written.line_end, f"\n{written.indent}{ga.key} *= {sp.key}"),)


def _batches(plan, per_device, ga, sp):
    if per_device is None:
        return f"the global batch is {sp}x smaller than at sp=1"
    world = plan.world_size
    if world is not None and world.known and world.value % sp == 0:
        now = per_device * ga * world.value // sp
        scaled = per_device * ga * world.value
        return (
            f"the global batch is {now} sequences ({per_device} x {ga} x dp {world.value // sp} = W {world.value} / sp {sp}), "
            f"{sp}x smaller than the {scaled} it is with the scaling"
        )
    per_rank = per_device * ga
    return (
        f"the global batch is {per_rank} x W/{sp} sequences ({per_device} x {ga} on each of W/{sp} data-parallel ranks), "
        f"{sp}x smaller than the {per_rank} x W it is with the scaling"
    )


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
    summary="XTuner accumulation is not scaled by sequence_parallel_size",
    check=check,
    needs=("parallel.sp", "grad_accum", "settings.accumulation"),
    doc=__doc__,
    examples=(
        Example("sp4_unscaled.py", _CONFIG.format(sp=4, ga=16, scaling=""), flagged=(7,), world_size=8),
        Example("sp4_unscaled_no_w.py", _CONFIG.format(sp=4, ga=16, scaling=""), flagged=(7,)),
        Example("sp4_hand_scaled.py", _CONFIG.format(sp=4, ga=8, scaling=""), flagged=(7,)),
        Example("sp4_scaled.py", _CONFIG.format(sp=4, ga=16, scaling="accumulative_counts *= sequence_parallel_size")),
        Example("sp4_explicit.py", _CONFIG.format(sp=4, ga="2 * sequence_parallel_size", scaling="")),
        Example("sp1_unscaled.py", _CONFIG.format(sp=1, ga=16, scaling="")),
    ),
)
