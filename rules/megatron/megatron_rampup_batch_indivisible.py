"""
## What it does
Checks Megatron-LM's batch-size ramp-up, `--rampup-batch-size START INCREMENT
SAMPLES`: the ramp from START to `--global-batch-size` must be a whole number
of INCREMENTs, and every batch on the way (START, START + INCREMENT, ...) must
be a multiple of `--micro-batch-size` x dp, dp = W / (tp x pp x cp). Where the
world size is unknown it reports only what fails for every world size (a START
or an INCREMENT the micro batch does not divide).

## Why is this bad?
Megatron asserts "expected global batch size interval (N) to be divisible by
global batch size increment (M)" while it initialises, and "current global
batch size (N) is not divisible by micro-batch-size (M) times data parallel
size (D)" at the first step of the ramp whose batch does not split: a START
fails at the first iteration, an INCREMENT when the batch first ramps up, after
SAMPLES / ((global - START) / INCREMENT) samples, hours into the run.

## Example
```bash
# W = 8, tp 2: dp 4, micro 4 x dp 4 = 16
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 \\
    --micro-batch-size 4 --global-batch-size 512 --rampup-batch-size 24 8 300000
```

## Use instead
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 \\
    --micro-batch-size 4 --global-batch-size 512 --rampup-batch-size 32 32 300000
```
or `--decrease-batch-size-if-needed` (Megatron core 0.9.0 on), which rounds each
batch of the ramp down to a multiple of micro x dp instead.

## Source
megatron-core 0.1.0 (tag 23.04): megatron/microbatches.py:113 (the interval),
:136-141 (each batch of the ramp, checked by `update_num_microbatches`, whose
`consistency_check` defaults to True: megatron/global_vars.py:42, called at
every iteration by megatron/training.py:696). core_v0.16.1:
megatron/core/num_microbatches_calculator.py:429-433 and :474-482 (skipped with
`--decrease-batch-size-if-needed`, from core_v0.9.0), called with
`consistency_check=True` at every iteration by megatron/training/training.py:2736.
The flag is gone from core_v0.18.0 (`--step-batch-size-schedule` replaces it).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks.megatron import MegatronSettings
from batchlint.frameworks.releases import MEGATRON
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

RAMPUP = Premise(
    MEGATRON, name="Megatron-LM",
    source="0.1.0 (tag 23.04) megatron/microbatches.py:113, :136-141, megatron/global_vars.py:42, "
           "megatron/training.py:696 (first); core_v0.16.1 megatron/core/num_microbatches_calculator.py:429-433, "
           ":474-482, megatron/training/training.py:2736 (still; core_v0.17.1 too, core_v0.18.0 removed the flag)")


def check(plan: TrainingPlan, megatron: MegatronSettings) -> Iterator[Finding]:
    rampup, decrease = megatron.rampup, megatron.decrease_if_needed
    micro, declared = plan.micro_batch, plan.declared_global_batch
    micro_size = micro.count if micro is not None else None
    if rampup is None or micro is None or micro_size is None:
        return
    start, increment, samples = rampup
    first, step, total = start.count, increment.count, samples.count
    if first is None or step is None or total is None:
        return
    target = declared.count if declared is not None else None
    if declared is not None and target is not None:
        interval = target - first
        if interval > 0 and interval % step:
            yield Finding(
                span=increment.span,
                message=f"the ramp from {first} to the global batch {target} is {interval}, not a whole number of "
                        f"increments of {step}",
                notes=(f"{start.describe()} to {declared.describe()} is {interval} sequences; "
                       f"{increment.describe()}.",
                       f"Megatron-LM asserts \"expected global batch size interval ({interval}) to be divisible by "
                       f"global batch size increment ({step})\" while it initialises."),
                fix=f"set the increment to a divisor of {interval}, or {declared.key} to "
                    f"{first + (interval // step + 1) * step}",
                related=_related(declared),
            )
            return
    if decrease is not None and decrease.value is True:
        return  # each batch of the ramp is rounded down to a multiple of micro x dp
    multiple, parts, every_w = _multiple(plan, micro, micro_size)
    if first % multiple:
        yield Finding(
            span=start.span,
            message=f"the ramp's start {first} is not a multiple of micro batch x dp = {multiple}{every_w}",
            notes=(f"{start.describe()}; {parts} = {multiple}{every_w}.",
                   f"Megatron-LM asserts \"current global batch size ({first}) is not divisible by "
                   f"micro-batch-size ({micro_size}) times data parallel size\" at the first iteration."),
            fix=f"start the ramp at a multiple of {multiple} ({_near(first, multiple)}), with an increment "
                f"that is one too",
            related=_related(micro),
        )
        return
    if declared is None or target is None or step % multiple == 0:
        return
    steps = (target - first) // step
    # Each iteration consumes at most the global batch; when an increment's share of SAMPLES is at least that,
    # the ramp takes every step, the first (START + INCREMENT) included. Otherwise it may skip steps: not judged.
    if steps < 2 or total < steps * target:
        return
    ramped = first + step
    yield Finding(
        span=increment.span,
        message=f"the ramp's increment {step} is not a multiple of micro batch x dp = {multiple}{every_w}",
        notes=(f"{increment.describe()}; {parts} = {multiple}{every_w}.",
               f"The first ramp step, {first} + {step} = {ramped}, does not split: Megatron-LM asserts \"current "
               f"global batch size ({ramped}) is not divisible by micro-batch-size ({micro_size}) times data "
               f"parallel size\" after about {total // steps} samples."),
        fix=f"set the increment to a multiple of {multiple} ({_near(step, multiple)}) that divides "
            f"{target - first}",
        related=_related(micro),
    )


def _multiple(plan: TrainingPlan, micro: Fact, size: int) -> tuple[int, str, str]:
    """(micro x dp, how it reads, "" or " for any world size") as global_batch_indivisible says it."""
    dp = plan.data_parallel
    degree = dp.count if dp is not None else None
    if degree is not None:
        return size * degree, f"{micro.describe()} x dp ({degree})", ""
    return size, micro.describe(), " for any world size"


def _near(value: int, multiple: int) -> str:
    lower = value // multiple * multiple
    return " or ".join(str(v) for v in (lower, lower + multiple) if v > 0)


def _related(fact: Optional[Fact]) -> tuple[Related, ...]:
    return (Related(f"{fact.key} = {fact.value}", fact.span),) if fact is not None and fact.span else ()


RULE = Rule(
    code="BL190",
    name="megatron-rampup-batch-indivisible",
    severity="error",
    summary="Megatron-LM: a batch-size ramp-up whose steps micro batch x dp cannot split",
    check=check,
    subject=MegatronSettings,
    needs=("micro_batch",),
    premises=(RAMPUP,),
    doc=__doc__,
    examples=(
        # dp = 8 / 2 = 4, micro 4 x 4 = 16: 24 is not a multiple.
        Example("start_24.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 512 --rampup-batch-size 24 8 300000 --train-samples 5000000
""", flagged=(3,), severity="error",
                message="the ramp's start 24 is not a multiple of micro batch x dp = 16",
                fix="start the ramp at a multiple of 16 (16 or 32), with an increment that is one too"),
        Example("start_32.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 512 --rampup-batch-size 32 32 300000 --train-samples 5000000
"""),
        # 16 x 30 steps x 512 = 245760 <= 300000 samples: every step is taken, 16 + 8 = 24 first.
        Example("increment_8.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 256 --rampup-batch-size 16 8 300000 --train-samples 5000000
""", flagged=(3,), severity="error",
                message="the ramp's increment 8 is not a multiple of micro batch x dp = 16",
                fix="set the increment to a multiple of 16 (16) that divides 240"),
        Example("increment_16.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 256 --rampup-batch-size 16 16 300000 --train-samples 5000000
"""),
        # The interval 512 - 32 = 480 is not a whole number of 100s.
        Example("interval.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 512 --rampup-batch-size 32 100 300000 --train-samples 5000000
""", flagged=(3,), severity="error",
                message="the ramp from 32 to the global batch 512 is 480, not a whole number of increments of 100",
                fix="set the increment to a divisor of 480, or --global-batch-size to 532"),
        # Rounded down instead of asserted.
        Example("decrease.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 512 --rampup-batch-size 24 8 300000 --train-samples 5000000 --decrease-batch-size-if-needed
"""),
        # The values through a variable: not read.
        Example("variable.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 4 \\
    --global-batch-size 512 --rampup-batch-size $RAMPUP 24 300000 --train-samples 5000000
"""),
    ),
)
