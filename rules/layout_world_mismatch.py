"""
## What it does
Checks the parallel layout against the world size W: where the framework
requires the product of its parallel degrees to equal W (TorchTitan,
torchtune, nanotron) or to divide it (Megatron, NeMo, sequence parallelism), and a
degree of -1 takes the ranks left over, that this works out. Silent while W
is unknown.

## Why is this bad?
The framework builds its device mesh from these degrees at start-up and
asserts they fit the GPUs it was given: a layout written for 32 GPUs and
launched on 8 dies after the job waited for its allocation.

## Example
```toml
[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4   # 32 GPUs, launched with NGPU=8
```

## Use instead
```toml
[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 1
```
or launch on 32 GPUs.

## Source
torchtitan/distributed/parallel_dims.py `_validate` (dp_shard = -1 resolution,
product == world size); megatron/core/parallel_state.py (world size divisible
by tp x pp x cp); nanotron src/nanotron/parallel/context.py:26-28, 62-70
(tp x pp x cp x dp == WORLD_SIZE, ranks reshaped with ep too).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    world, layout = plan.world_size, plan.layout
    if world is None or not world.known or not layout or not all(f.known for f in layout):
        return
    rest = [f for f in layout if f.value != -1]
    wildcard = [f for f in layout if f.value == -1]
    if any(f.value < 1 for f in rest) or len(wildcard) > 1:
        return  # non-positive degrees are another finding
    product = 1
    for f in rest:
        product *= f.value
    shown = " x ".join(f.describe() for f in rest if f.value != 1) or "1"
    if wildcard:
        if world.value % product == 0:
            return
        fills = world.value // product
        message = (
            f"{wildcard[0].key} = -1 takes the ranks left over, but W ({world.value}) is not a multiple of "
            f"{shown} = {product}" + (f" (it would be {fills}, leaving {world.value - fills * product} GPUs idle)" if fills else "")
            + ": the job refuses to start"
        )
        fix = f"run on a multiple of {product} GPUs, or change the degrees so their product divides {world.value}"
    elif plan.layout_exact and product != world.value:
        message = f"the parallel degrees multiply to {shown} = {product}, but the job has W = {world.value} GPUs: the job refuses to start"
        fix = f"launch on {product} GPUs, or set the degrees so their product is {world.value}"
    elif not plan.layout_exact and world.value % product:
        message = f"W ({world.value}) is not divisible by {shown} = {product}: the job refuses to start"
        fix = f"launch on a multiple of {product} GPUs, or lower the degrees"
    else:
        return
    at_fault = max((f for f in rest if f.span is not None), key=lambda f: f.value, default=None)
    span = at_fault.span if at_fault else (world.span or layout[0].span)
    if span is None:
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in layout if f.span and f is not at_fault and f.value != 1)
    if world.span is not None:
        related += (Related(f"world size {world.value} set here", world.span),)
    yield Finding(span=span, message=message, fix=fix, related=related)


_TITAN = """\
[training]
local_batch_size = 1

[parallelism]
data_parallel_shard_degree = {shard}
tensor_parallel_degree = 8
pipeline_parallel_degree = {pp}
"""

RULE = Rule(
    code="BL202",
    name="layout-world-mismatch",
    severity="error",
    summary="parallel degrees that do not fit the world size",
    check=check,
    needs=("world_size", "layout"),
    doc=__doc__,
    examples=(
        Example("titan_32_on_8.toml", _TITAN.format(shard=-1, pp=4), flagged=(6,), world_size=8),
        Example("titan_32_on_32.toml", _TITAN.format(shard=-1, pp=4), world_size=32),
        Example("titan_exact_wrong.toml", _TITAN.format(shard=2, pp=1), flagged=(6,), world_size=8),
        Example("titan_exact_right.toml", _TITAN.format(shard=2, pp=1), world_size=16),
        Example("titan_unknown_w.toml", _TITAN.format(shard=-1, pp=4)),
    ),
)
