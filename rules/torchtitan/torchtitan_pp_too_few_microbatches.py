"""
## What it does
With pipeline parallelism, checks the number of microbatches per step,
`local_batch_size // pipeline_parallel_microbatch_size`, against what the
chosen `pipeline_parallel_schedule` accepts:
- `1F1B` (the default): at least one microbatch per stage, i.e. at least
  `pipeline_parallel_degree`;
- `DualPipeV`: at least the number of stages, 2 x `pipeline_parallel_degree`;
- `Interleaved1F1B`, `InterleavedZeroBubble`: a multiple of the number of
  rounds, max(1, microbatches // `pipeline_parallel_degree`).

`GPipe`, `LoopedBFS` and `ZBVZeroBubble` accept any count (TorchTitan only
logs that fewer microbatches than stages leave a bubble), so they are not
flagged.

## Why is this bad?
TorchTitan itself only warns ("may result in a bubble in the pipeline"), but
the schedule it then builds raises, e.g. "Number of microbatches (1) must be
greater than or equal to the number of stages (4)", after the model has been
created on every GPU.

## Example
```toml
[training]
local_batch_size = 1     # 1 microbatch

[parallelism]
pipeline_parallel_degree = 4   # 4 stages with the default 1F1B schedule
```

## Use instead
```toml
[training]
local_batch_size = 4

[parallelism]
pipeline_parallel_degree = 4
```

A local batch written as `[training] batch_size` (its name before PR #1238)
is not judged (0.1.0 drops it: 8 then). Main before 0.1.0 counted
microbatches this way only from 5e2033c75 (2025-04-07), which added
`pipeline_parallel_microbatch_size`: before it the count was
`pipeline_parallel_microbatches`, by default the stages. So a config that
writes neither that key nor `local_batch_size` (a key main read from
2025-06-05) holds from 0.1.0 on: an info unless the release is known.

## Source
torchtitan/distributed/pipeline_parallel.py:189-208 @ v0.2.2 (microbatch count,
warning, schedule construction); torch/distributed/pipelining/schedules.py
@ torch 2.13.0: Schedule1F1B 1020-1024, ScheduleInterleaved1F1B 2935-2942,
ScheduleInterleavedZeroBubble 3046-3053, ScheduleDualPipeV 3439-3443.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window, old_batch_name
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# The count (local // microbatch size) and the schedule built with it; the schedule's own check is
# PyTorch's (torch/distributed/pipelining/schedules.py).
_LINES = {
    "0.0.2": "torchtitan/distributed/pipeline.py:150-163 @ 5e2033c75 (which added pipeline_parallel_microbatch_size)",
    "0.1.0": "torchtitan/distributed/pipeline.py:160-173",
    "0.2.0": "torchtitan/distributed/pipeline_parallel.py:192-205",
    "0.2.1": "torchtitan/distributed/pipeline_parallel.py:194-208",
    "0.2.2": "torchtitan/distributed/pipeline_parallel.py:194-208",
}
# A config that writes local_batch_size or pipeline_parallel_microbatch_size: keys main read only from
# 5e2033c75 / 8570415c3 on, which count as the rule does.
COUNTED = model_premises(_LINES)
# One that writes neither: main from 785c34c99 to 5e2033c75 read its [parallelism] too, and counted otherwise.
DEFAULTS = model_premises(
    _LINES, since="0.1.0", what="defaults, ",
    before="0.0.2: main from 785c34c99 to 5e2033c75 counted pipeline_parallel_microbatches, by default the stages "
           "(torchtitan/distributed/pipeline.py:107-111 @ 785c34c99)")


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    pp, local = plan.parallel["pp"], plan.micro_batch
    stages, batch = pp.number, local.count if local is not None else None
    if local is None or stages is None or stages <= 1 or batch is None or not titan.model_support.pipelining:
        return
    size, schedule = titan.pp_microbatch_size.number, titan.pp_schedule.value
    if (titan.pp_schedule_csv.value != "" or not isinstance(schedule, str) or size is None or size < 1
            or batch % size or old_batch_name(plan.document)):
        return  # a CSV schedule is loaded at run time; a bad microbatch size is BL110's finding
    count = batch // size
    problem = _refusal(schedule, count, stages)
    if problem is None:
        return
    needed, why = problem
    counted = f"{local.describe()}" + (f" / microbatch size {size}" if size != 1 else "")
    span = local.span or pp.span
    if span is None:
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (pp,) if f.span)
    if titan.pp_schedule.span is not None:
        related += (Related(f"pipeline_parallel_schedule = {schedule!r}", titan.pp_schedule.span),)
    if titan.pp_microbatch_size.span is not None:
        related += (Related(f"pipeline_parallel_microbatch_size = {size}", titan.pp_microbatch_size.span),)
    written = local.span is not None or titan.pp_microbatch_size.span is not None
    yield Finding(
        premise=model_window(titan.model_support, "" if written else "defaults, "),
        span=span,
        message=f"{count} microbatch{'es' if count != 1 else ''} per step, but {why}",
        notes=(f"{counted} gives {count} microbatch{'es' if count != 1 else ''} with {pp.describe()}.",
               "PyTorch's schedule refuses the count: the job refuses to start."),
        fix=f"set {local.key} to {needed * size}" + (" (or lower the microbatch size)" if size > 1 else "")
        + f", or lower {pp.key}",
        related=related,
    )


def _refusal(schedule: str, count: int, pp: int) -> Optional[tuple[int, str]]:
    """(a microbatch count the schedule accepts, why this one is refused), or None.
    PyTorch matches schedule names without regard to case."""
    name = schedule.lower()
    if name == "1f1b" and count < pp:
        return pp, f"the 1F1B schedule needs at least one per stage ({pp} stages)"
    if name == "dualpipev" and count < 2 * pp:
        return 2 * pp, f"DualPipeV needs at least one per stage ({2 * pp} stages: 2 per rank x {pp})"
    if name in ("interleaved1f1b", "interleavedzerobubble"):
        rounds = max(1, count // pp)
        if count % rounds:
            # the multiple below keeps the same number of rounds
            return count // rounds * rounds, f"{schedule} needs a multiple of its {rounds} rounds (max(1, {count} // {pp}))"
    return None


_DUALPIPEV_DEFAULTS = """\
[model]
name = "llama3"

[parallelism]
pipeline_parallel_degree = 8
pipeline_parallel_schedule = "DualPipeV"
"""


RULE = Rule(
    code="BL111",
    name="torchtitan-pp-too-few-microbatches",
    severity="error",
    summary="TorchTitan: a microbatch count the pipeline schedule refuses (fewer than the stages for 1F1B)",
    check=check,
    subject=TitanSettings,
    needs=("parallel.pp", "micro_batch"),
    premises=COUNTED + DEFAULTS,
    doc=__doc__,
    examples=(
        Example("titan_1f1b_1_of_4.toml", """\
[model]
name = "llama4"
flavor = "17bx128e"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
""", flagged=(6,), severity="error",
                message="1 microbatch per step, but the 1F1B schedule needs at least one per stage (4 stages)",
                fix="set [training] local_batch_size to 4, or lower [parallelism] pipeline_parallel_degree"),
        Example("titan_1f1b_4_of_4.toml", """\
[model]
name = "llama4"
flavor = "17bx128e"

[training]
local_batch_size = 4
seq_len = 8192

[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
"""),
        # GPipe runs with a bubble; it does not refuse.
        Example("titan_gpipe_1_of_4.toml", """\
[model]
name = "llama4"
flavor = "17bx128e"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "GPipe"
"""),
        # Interleaved1F1B: 9 microbatches over 4 ranks = 2 rounds, and 9 is odd.
        Example("titan_interleaved_9.toml", """\
[model]
name = "llama4"
flavor = "17bx128e"

[training]
local_batch_size = 9
seq_len = 8192

[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "Interleaved1F1B"
""", flagged=(6,),
                message="9 microbatches per step, but Interleaved1F1B needs a multiple of its 2 rounds (max(1, 9 // 4))",
                fix="set [training] local_batch_size to 8, or lower [parallelism] pipeline_parallel_degree"),
        Example("titan_interleaved_8.toml", """\
[model]
name = "llama4"
flavor = "17bx128e"

[training]
local_batch_size = 8
seq_len = 8192

[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "Interleaved1F1B"
"""),
        # The default local batch (8) for DualPipeV's 2 x 8 stages: main before 5e2033c75 counted otherwise.
        Example("titan_dualpipev_default.toml", _DUALPIPEV_DEFAULTS, flagged=(5,), severity="info",
                message="8 microbatches per step, but DualPipeV needs at least one per stage (16 stages: 2 per rank x 8)",
                fix="set [training] batch_size to 16, or lower [parallelism] pipeline_parallel_degree"),
        Example("titan_dualpipev_default_010.toml", _DUALPIPEV_DEFAULTS, flagged=(5,),
                files=(('requirements.txt', 'torchtitan==0.1.0\n'),), severity="error",
                message="8 microbatches per step, but DualPipeV needs at least one per stage (16 stages: 2 per rank x 8)",
                fix="set [training] batch_size to 16, or lower [parallelism] pipeline_parallel_degree"),
        # The name before PR #1238: 0.1.0 drops it (8 microbatches then).
        Example("titan_1f1b_old_batch_name.toml", """\
[model]
name = "llama4"
flavor = "17bx128e"

[training]
batch_size = 1
seq_len = 8192

[parallelism]
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
"""),
    ),
)
