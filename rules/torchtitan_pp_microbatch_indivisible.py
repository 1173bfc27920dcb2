"""
## What it does
With pipeline parallelism (`pipeline_parallel_degree` > 1), checks that
`[training] local_batch_size` is a multiple of
`[parallelism] pipeline_parallel_microbatch_size` (default 1), the size of
one pipeline microbatch.

## Why is this bad?
TorchTitan cuts each local batch into `local_batch_size //
pipeline_parallel_microbatch_size` microbatches and refuses a remainder
("Batch size 6 must be divisible by microbatch_size 4") when it builds the
pipeline schedule, after the model has been created on every GPU.

## Example
```toml
[training]
local_batch_size = 6

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 4
```

## Use instead
```toml
[training]
local_batch_size = 8

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 4
```

## Source
torchtitan/distributed/pipeline_parallel.py:186-194 @ v0.2.2
(`build_pipeline_schedule`, reached from train.py:218-239 when pp > 1).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule, largest_divisor


def check(plan: TrainingPlan) -> Iterator[Finding]:
    pp, local, titan = plan.parallel["pp"], plan.micro_batch, plan.settings
    if not (pp.known and pp.value > 1 and local.known and local.value > 0) or not titan.model_support.pipelining:
        return
    written = titan.pp_microbatch_size
    size, key = written.value, written.key
    if written.span is None or not isinstance(size, int) or isinstance(size, bool):
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (local, pp) if f.span)
    if size < 1:
        yield Finding(
            span=written.span,
            message=f"{key} is {size}; with {pp.describe()} TorchTitan divides {local.describe()} by it and the job fails",
            fix=f"set {key} to a divisor of {local.value} (1 gives {local.value} microbatches)",
            related=related,
        )
    elif local.value % size:
        nearest = largest_divisor(local.value, size - 1)
        yield Finding(
            span=written.span,
            message=(
                f"{local.describe()} is not divisible by {key} ({size}) = {local.value / size:g} microbatches; "
                f"with {pp.describe()} TorchTitan refuses to build the pipeline schedule"
            ),
            fix=f"set {key} to a divisor of {local.value} (e.g. {nearest}), or {local.key} to a multiple of {size}",
            related=related,
        )


_TITAN = """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = {local}
seq_len = 8192

[parallelism]
pipeline_parallel_degree = {pp}
pipeline_parallel_microbatch_size = 4
pipeline_parallel_schedule = "GPipe"
"""

RULE = Rule(
    code="BL110",
    name="torchtitan-pp-microbatch-indivisible",
    severity="error",
    summary="TorchTitan: local_batch_size not a multiple of pipeline_parallel_microbatch_size under pipeline parallelism",
    check=check,
    needs=("parallel.pp", "micro_batch", "settings.model_support", "settings.pp_microbatch_size"),
    doc=__doc__,
    examples=(
        Example("titan_pp_6_by_4.toml", _TITAN.format(local=6, pp=2), flagged=(11,)),
        Example("titan_pp_8_by_4.toml", _TITAN.format(local=8, pp=2)),
        # Without pipeline parallelism the microbatch size is never read.
        Example("titan_no_pp.toml", _TITAN.format(local=6, pp=1)),
    ),
)
