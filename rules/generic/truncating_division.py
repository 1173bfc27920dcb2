"""
## What it does
Flags a launch-script division in `$(( ... ))` that drops a remainder when its
result is the micro batch, the gradient accumulation or the global batch of
the launch line that uses it (`GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`
passed, unchanged, as `--gradient_accumulation_steps ${GRADIENT_ACC}`), with
the global batch the job then trains with.

Only a division whose operands the script sets is judged (a `$1` or an
unknown variable leaves it alone), and only one whose result reaches a batch
setting: `NNODES=$((GPUS / GPUS_PER_NODE))` is not a batch. A dividend that
adds or subtracts (`$(( (A + B - 1) / B ))`, the ceiling idiom) rounds on
purpose and is not flagged: it rounds up, knowingly. The setting must be one
the global batch scales with, as the framework computes it: a micro batch the
framework derives the accumulation from (verl's `ppo_micro_batch_size_per_gpu`)
only splits the batch differently.

## Why is this bad?
Bash divides integers towards zero and drops the remainder without a word.
With `BATCH_SIZE=128`, `PER_DEVICE_BATCH_SIZE=4` and 24 GPUs,
`128 / 4 / 24` is 1: the job trains with a global batch of 4 x 1 x 24 = 96,
not the 128 the script states, for as long as it runs.

## Example
```bash
GPUS=24
BATCH_SIZE=128
PER_DEVICE_BATCH_SIZE=4
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))
torchrun --nproc_per_node=${GPUS} train.py \\
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \\
  --gradient_accumulation_steps ${GRADIENT_ACC}
```

## Use instead
```bash
GPUS=24
BATCH_SIZE=192  # a multiple of PER_DEVICE_BATCH_SIZE x GPUS = 96
PER_DEVICE_BATCH_SIZE=4
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))
torchrun --nproc_per_node=${GPUS} train.py \\
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \\
  --gradient_accumulation_steps ${GRADIENT_ACC}
```

## Source
bash(1), ARITHMETIC EVALUATION: "Evaluation is done in fixed-width integers
... `/` division", which truncates towards zero as C does. Upstream shape:
InternVL internvl_chat/shell/internvl2.0/2nd_finetune/*.sh
(`GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.plan import Fact, Origin, TrainingPlan
from batchlint.rule import Example, Finding, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from batchlint.sources.shell import Truncation


def check(plan: TrainingPlan) -> Iterator[Finding]:
    seen: set[int] = set()
    scaling = _scaling(plan)
    for fact in scaling:
        # A value a launch line gives is a launch.Computed node when bash's division dropped a remainder.
        cut: Optional[Truncation] = getattr(fact.node, "truncation", None)
        if cut is None or id(fact.node) in seen or not fact.positive or fact.value != cut.value:
            continue  # the value a setting has is not the division's (changed on the way, or read elsewhere)
        seen.add(id(fact.node))
        name = cut.name or fact.key
        numerator, denominator = cut.exact
        exact = f"{numerator}/{denominator} ({numerator / denominator:.2f}".rstrip("0").rstrip(".") + ")"
        if len(cut.steps) == 1 and cut.shown == "{} / {}".format(*cut.steps[0]):
            dropped = f"the remainder {cut.steps[0][3]}"
        else:
            dropped = "the remainder of " + ", then of ".join(f"{a} / {b} ({r})" for a, b, _, r in cut.steps)
        said, full = _global(plan, fact, cut, scaling)
        yield Finding(
            span=fact.span,
            message=f"{name} = {cut.value}, not {exact}{said}",
            notes=(f"`{cut.written}` is {cut.shown} = {cut.value} in bash, which drops {dropped}: "
                   f"{name} = {cut.value}, not {exact}{full}",),
            fix=_fix(cut, name),
        )


def _scaling(plan: TrainingPlan) -> tuple[Fact, ...]:
    """The settings the global batch is proportional to, as the framework computes it: the declared
    global batch where the framework derives the rest from it, else the micro batch and the accumulation
    when neither is derived from the other (written, or a constant default: verl derives accumulation
    from the micro batch, ms-swift's default from it and W, so there the micro batch sets no batch)."""
    declared, micro, accumulation = plan.declared_global_batch, plan.micro_batch, plan.grad_accum
    if declared is not None and declared.known and plan.derived_from_global:
        return (declared,)
    if micro is not None and accumulation is not None and all(
            f.origin is Origin.FILE or f.origin is Origin.DEFAULT and not f.detail for f in (micro, accumulation)):
        return micro, accumulation
    return ()


def _global(plan: TrainingPlan, fact: Fact, cut: Truncation, scaling: tuple[Fact, ...]) -> tuple[str, str]:
    """The global batch with the framework's own formula, and what it would be without the truncation:
    (as the message says it, as the note says it with the formula)."""
    effective = plan.effective_global_batch()
    if effective is None:
        unknown = plan.data_parallel is None or not plan.data_parallel.known
        return "", " (the global batch is not known here: dp is not)" if unknown else ""
    value, formula = effective
    said, full = f", so the global batch is {value}", f", so the global batch is {value} ({formula})"
    numerator, denominator = cut.exact
    meant, rest = divmod(value * numerator, denominator * fact.value)
    if rest or not any(fact is factor for factor in scaling):
        return said, full
    dividend = cut.chain[0] if cut.chain else None
    meant_text = f", not {dividend[0]} ({meant})" if dividend is not None and dividend[1] == meant \
        and not dividend[0].isdigit() else f", not {meant}"
    return said + meant_text, full + meant_text


def _fix(cut: Truncation, name: str) -> str:
    if not cut.chain:
        a, b = cut.steps[0][:2]
        return f"change the values so that each division is exact ({a} is not a multiple of {b}), or set {name} directly"
    (dividend, value), divisors = cut.chain
    product = 1
    for _, divisor in divisors:
        product *= divisor
    below = value // product * product
    multiples = " or ".join(str(m) for m in (below, below + product) if m > 0)
    names, values = [written for written, _ in divisors], [str(divisor) for _, divisor in divisors]
    of = " x ".join(names) + (f" = {' x '.join(values)}" if len(names) > 1 else "") if names != values \
        else " x ".join(values) if len(names) > 1 else ""
    of = f" ({of})" if of else ""
    other = f"{names[0]} to a divisor of {value}" if len(divisors) == 1 else \
        f"{' and '.join(names)} so that their product divides {value}"
    target = dividend if not dividend.isdigit() else f"the dividend {value}"
    return f"set {target} to a multiple of {product}{of}: {multiples}; or change {other}"


RULE = Rule(
    code="BL604",
    name="truncating-division",
    severity="warning",
    summary="a launch script's `$(( ... ))` that drops a remainder from a batch setting",
    check=check,
    every_release=("the arithmetic of bash's $(( )) and of Python's //, which truncate in every release of each"),
    doc=__doc__,
    examples=(
        Example("run_ga_24.sh", """\
GPUS=${GPUS:-24}
BATCH_SIZE=${BATCH_SIZE:-128}
PER_DEVICE_BATCH_SIZE=${PER_DEVICE_BATCH_SIZE:-4}
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))
torchrun --nnodes=1 --nproc_per_node=${GPUS} internvl/train/finetune.py \\
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \\
  --gradient_accumulation_steps ${GRADIENT_ACC}
""", flagged=(4,),
                message="GRADIENT_ACC = 1, not 4/3 (1.33), so the global batch is 96, not BATCH_SIZE (128)",
                fix="set BATCH_SIZE to a multiple of 96 (PER_DEVICE_BATCH_SIZE x GPUS = 4 x 24): 96 or 192; or change "
                    "PER_DEVICE_BATCH_SIZE and GPUS so that their product divides 128"),
        Example("run_ga_8.sh", """\
GPUS=${GPUS:-8}
BATCH_SIZE=${BATCH_SIZE:-128}
PER_DEVICE_BATCH_SIZE=${PER_DEVICE_BATCH_SIZE:-4}
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))
torchrun --nnodes=1 --nproc_per_node=${GPUS} internvl/train/finetune.py \\
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \\
  --gradient_accumulation_steps ${GRADIENT_ACC}
"""),
        Example("run_per_gpu_100.sh", """\
NGPU=8
EFFECTIVE_BATCH_SIZE=100
PER_GPU_BATCH_SIZE=$((EFFECTIVE_BATCH_SIZE/NGPU))
deepspeed --num_gpus ${NGPU} train.py --per_device_train_batch_size ${PER_GPU_BATCH_SIZE}
""", flagged=(3,),
                message="PER_GPU_BATCH_SIZE = 12, not 25/2 (12.5), so the global batch is 96, not EFFECTIVE_BATCH_SIZE (100)",
                fix="set EFFECTIVE_BATCH_SIZE to a multiple of 8 (NGPU): 96 or 104; or change NGPU to a divisor of 100"),
        Example("run_per_gpu_96.sh", """\
NGPU=8
EFFECTIVE_BATCH_SIZE=96
PER_GPU_BATCH_SIZE=$((EFFECTIVE_BATCH_SIZE/NGPU))
deepspeed --num_gpus ${NGPU} train.py --per_device_train_batch_size ${PER_GPU_BATCH_SIZE}
"""),
        # A node count is no batch: its remainder is another matter.
        Example("run_nodes.sh", """\
GPUS=24
GPUS_PER_NODE=16
NNODES=$((GPUS / GPUS_PER_NODE))
torchrun --nnodes=${NNODES} --nproc_per_node=8 train.py --per_device_train_batch_size 4
"""),
    ),
)
