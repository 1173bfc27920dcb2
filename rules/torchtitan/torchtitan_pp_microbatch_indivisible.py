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

A local batch written as `[training] batch_size` (its name before PR #1238)
is not judged: main before 0.1.0 read it, 0.1.0 drops it (then the local
batch is 8) and 0.2.0 on refuse the key (BL510).

## Source
torchtitan/distributed/pipeline_parallel.py:189-194 @ v0.2.2
(`build_pipeline_schedule`, reached from train.py:218-239 when pp > 1); the
same check since the key itself (5e2033c75, main before 0.1.0) and in 0.1.0
(pipeline.py:155-159, whose message raises UnboundLocalError instead). See
"When it holds".
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window, old_batch_name
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule, largest_divisor

# pipeline_parallel_microbatch_size is new at 5e2033c75 (2025-04-07), which checks it; main before
# it read no such key, so only main from it on counts for 0.0.2.
PREMISES = model_premises({
    "0.0.2": "torchtitan/distributed/pipeline.py:145-149 @ 5e2033c75 (the commit that added the key)",
    "0.1.0": "torchtitan/distributed/pipeline.py:155-159 (its message names n_microbatches before it is set: "
             "UnboundLocalError, still at start-up)",
    "0.2.0": "torchtitan/distributed/pipeline_parallel.py:187-192",
    "0.2.1": "torchtitan/distributed/pipeline_parallel.py:189-194",
    "0.2.2": "torchtitan/distributed/pipeline_parallel.py:189-194",
})


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    pp, local = plan.parallel["pp"], plan.micro_batch
    stages, batch = pp.number, local.count if local is not None else None
    if local is None or stages is None or stages <= 1 or batch is None or not titan.model_support.pipelining:
        return
    written = titan.pp_microbatch_size
    size, key = written.number, written.key
    if written.span is None or size is None or old_batch_name(plan.document):
        return
    window = model_window(titan.model_support)
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (local, pp) if f.span)
    if size < 1:
        yield Finding(
            span=written.span,
            message=f"pipeline_parallel_microbatch_size is {size}; with pp = {stages} TorchTitan divides the local "
                    f"batch {batch} by it",
            notes=(f"{key} is {size}; with {pp.describe()} TorchTitan divides {local.describe()} by it and the "
                   "job fails.",),
            fix=f"set {key} to a divisor of {batch} (1 gives {batch} microbatches)",
            related=related,
            premise=window,
        )
    elif batch % size:
        nearest = largest_divisor(batch, size - 1)
        yield Finding(
            span=written.span,
            message=f"local batch {batch} is not a multiple of the pipeline microbatch size {size} with pp = {stages}",
            notes=(f"{local.describe()} / {key} ({size}) = {batch / size:g} microbatches.",
                   f"With {pp.describe()} TorchTitan refuses to build the pipeline schedule."),
            fix=f"set {key} to a divisor of {batch} (e.g. {nearest}), or {local.key} to a multiple of {size}",
            related=related,
            premise=window,
        )


_DSV3_6_BY_4 = """\
[model]
name = "deepseek_v3"
flavor = "8B"

[training]
local_batch_size = 6
seq_len = 8192

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 4
pipeline_parallel_schedule = "GPipe"
"""


RULE = Rule(
    code="BL110",
    name="torchtitan-pp-microbatch-indivisible",
    severity="error",
    summary="TorchTitan: local_batch_size not a multiple of pipeline_parallel_microbatch_size under pipeline parallelism",
    check=check,
    subject=TitanSettings,
    needs=("parallel.pp", "micro_batch"),
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("titan_pp_6_by_4.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 6
seq_len = 8192

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 4
pipeline_parallel_schedule = "GPipe"
""", flagged=(11,), severity="error",
                message="local batch 6 is not a multiple of the pipeline microbatch size 4 with pp = 2",
                fix="set [parallelism] pipeline_parallel_microbatch_size to a divisor of 6 (e.g. 3), or [training] "
                    "local_batch_size to a multiple of 4"),
        Example("titan_pp_8_by_4.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 8
seq_len = 8192

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 4
pipeline_parallel_schedule = "GPipe"
"""),
        # Without pipeline parallelism the microbatch size is never read.
        Example("titan_no_pp.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 6
seq_len = 8192

[parallelism]
pipeline_parallel_degree = 1
pipeline_parallel_microbatch_size = 4
pipeline_parallel_schedule = "GPipe"
"""),
        # The name before PR #1238: 0.1.0 drops it and divides its default 8, so the verdict differs by release.
        Example("titan_pp_old_batch_name.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
batch_size = 6
seq_len = 8192

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 4
pipeline_parallel_schedule = "GPipe"
"""),
        # A model new in 0.2.0 (deepseek_v3): 0.1.0 cannot run the config, so it is not weighed.
        Example("titan_pp_dsv3_pinned_010.toml", _DSV3_6_BY_4,
                files=(('requirements.txt', 'torchtitan==0.1.0\n'),)),
        Example("titan_pp_dsv3.toml", _DSV3_6_BY_4, flagged=(11,), severity="error",
                message="local batch 6 is not a multiple of the pipeline microbatch size 4 with pp = 2",
                fix="set [parallelism] pipeline_parallel_microbatch_size to a divisor of 6 (e.g. 3), or [training] "
                    "local_batch_size to a multiple of 4"),
    ),
)
