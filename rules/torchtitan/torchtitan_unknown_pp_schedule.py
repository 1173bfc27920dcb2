"""
## What it does
With pipeline parallelism, checks that `[parallelism]
pipeline_parallel_schedule` names a schedule PyTorch knows (the comparison
ignores case): 1F1B, Interleaved1F1B, GPipe, LoopedBFS,
InterleavedZeroBubble, ZBVZeroBubble, DualPipeV, PipelineScheduleSingle,
PipelineScheduleMulti.

## Why is this bad?
TorchTitan looks the name up when it splits the model into stages and raises
"Unknown schedule name", after the job has its GPUs. The TOML loader accepts
any string, so a typo survives until then.

## Example
```toml
[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved-1F1B"
```

## Use instead
```toml
[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
```

## Source
torchtitan/distributed/pipeline_parallel.py:55-57 @ v0.2.2 (`pipeline_llm`);
torch/distributed/pipelining/schedules.py:3620-3645 @ torch 2.13.0
(`get_schedule_class`). Every release that reads `[parallelism]` looks the
name up (see "When it holds"); an older PyPI torch may know fewer names
(DualPipeV is recent), which only makes the rule miss.
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule, closest

PREMISES = model_premises({
    "0.0.2": "torchtitan/models/llama/pipeline_llama.py:144 @ 785c34c99 (the first to read [parallelism])",
    "0.1.0": "torchtitan/models/llama3/infra/pipeline.py:142",
    "0.2.0": "torchtitan/distributed/pipeline_parallel.py:53-55",
    "0.2.1": "torchtitan/distributed/pipeline_parallel.py:55-57, "
             "experiments/transformers_modeling_backend/infra/pipeline.py:293-295",
    "0.2.2": "torchtitan/distributed/pipeline_parallel.py:55-57",
})

SCHEDULES = (
    "1F1B", "Interleaved1F1B", "GPipe", "LoopedBFS", "InterleavedZeroBubble", "PipelineScheduleSingle",
    "PipelineScheduleMulti", "ZBVZeroBubble", "DualPipeV",
)


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    pp, written = plan.parallel["pp"], titan.pp_schedule
    stages = pp.number
    if stages is None or stages <= 1 or not titan.model_support.pipelining:
        return
    schedule = written.value
    if written.span is None or not isinstance(schedule, str) or schedule.lower() in {s.lower() for s in SCHEDULES}:
        return
    close = closest(schedule, SCHEDULES, 0.5)
    yield Finding(
        premise=model_window(titan.model_support),
        span=written.span,
        message=f"pipeline_parallel_schedule {schedule!r} is not a schedule PyTorch knows (pp = {stages})",
        notes=(f"With {pp.describe()} the job fails when it builds the pipeline.",),
        fix=f"use {close!r}" if close else f"use one of {', '.join(SCHEDULES)}",
    )


RULE = Rule(
    code="BL214",
    name="torchtitan-unknown-pp-schedule",
    severity="error",
    summary="TorchTitan: a pipeline_parallel_schedule PyTorch does not know",
    check=check,
    subject=TitanSettings,
    needs=("parallel.pp",),
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("titan_typo_schedule.toml", """\
[training]
local_batch_size = 8

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved-1F1B"
""", flagged=(6,), severity="error",
                message="pipeline_parallel_schedule 'Interleaved-1F1B' is not a schedule PyTorch knows (pp = 2)",
                fix="use 'Interleaved1F1B'"),
        Example("titan_schedule.toml", """\
[training]
local_batch_size = 8

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "interleaved1f1b"
"""),
    ),
)
