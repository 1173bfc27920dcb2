"""
## What it does
With `check --since REV` (the pre-commit hook compares the staged files with `HEAD`), flags a
change that moves only the parallel layout of a job (sequence, context, tensor, pipeline or expert
parallelism, the GPUs per node, the nodes, a launcher's process count) when that moves its global
batch: the sequences (or tokens, for a token-budget trainer) per optimizer step. The finding is at
the line that changed, with the global batch before and after.

There is no finding when the same change also sets the batch on purpose: it changes the micro
batch, the accumulation or a declared global batch, or a target is stated (a `global-batch`
directive, `--global-batch`, the project config), which BL102 then judges. Where a framework
derives the accumulation from a declared global batch (DeepSpeed's `train_batch_size` alone,
TorchTitan's `global_batch_size`), the layout does not move it and nothing is reported; nor for RL
trainers whose optimizer step is a declared global mini-batch (verl's `ppo_mini_batch_size`, ms-swift
Megatron's `global_batch_size`), while a Trainer-based one (TRL's DPO or GRPO through axolotl) moves
with dp as supervised training does.

Where no side knows W (a config that no launch line in view runs, without `-w`), both sides are
planned at the least W both layouts run on: the global batch is linear in W, so the change moves it
by the same factor at every W, and the message says so.

## Why is this bad?
dp = W / (the degrees that split a sequence or a model), and the global batch is micro x
accumulation x dp. Raising `sequence_parallel_size` from 1 to 4, or halving the GPUs, cuts dp and the
global batch 4x or 2x with no error: the run trains, slower to converge, with a learning rate tuned
for another batch. Which batch a config alone was meant for cannot be told (BL105 is an info for that
reason); a change that moves the layout and leaves the batch is certain evidence.

## Example
Before (at `HEAD`):
```python
sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
```
Staged:
```python
sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
```

## Use instead
```python
sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16 * sequence_parallel_size
```
or state the new batch, when it is the one meant: `# batchlint: global-batch=4`.

## When it holds
Arithmetic on the two plans of one job; no framework check is involved, so it holds for every release
the job's own plan holds for.

## Source
The global batch of each framework as its adapter plans it (micro x accumulation x dp, dp = W over
the degrees that split a sequence or a model); XTuner's sequence-parallel guide: "raise gradient
accumulation by sequence_parallel_world_size, since data_parallel_world_size drops to 1/sp"
(docs/zh_cn/user_guides/sequence_parallel.md:40-53).
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from batchlint.change import Change
from batchlint.plan import Fact, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    _Moved = tuple[str, object, object, Optional[Fact]]

# The facts that set the batch: a change to any of them is a change of the batch on purpose.
_BATCH = ("micro_batch", "grad_accum", "declared_global_batch", "step_batch", "micro_tokens")


def check(plan: TrainingPlan, change: Change) -> Iterator[Finding]:
    before, after = change.before, change.after
    if after.target_global_batch is not None:
        return  # a stated target is BL102's to judge
    if any(_value(getattr(before, name)) != _value(getattr(after, name)) for name in _BATCH):
        return  # the change sets the batch too
    moved = _moved(before, after, plan)
    old, new = before.effective_global_batch(), after.effective_global_batch()
    if not moved or old is None or new is None or old[0] == new[0] or min(old[0], new[0]) < 1:
        return
    unit = after.unit or "sequences"
    what = ", ".join(f"{key} {a} -> {b}" for key, a, b, _ in moved)
    ratio = Fraction(new[0], old[0])
    factor = f"{_times(1 / ratio)} fewer" if ratio < 1 else f"{_times(ratio)} more"
    at = f" at W = {change.world} ({factor} at every W)" if change.world else f" ({factor})"
    span = next((fact.span for _, _, _, fact in moved if fact is not None and fact.span is not None), None)
    others = tuple(Related(f"{key} {a} -> {b}", fact.span) for key, a, b, fact in moved
                   if fact is not None and fact.span is not None and fact.span != span)
    yield Finding(
        span=span,
        message=f"{what} moves the global batch from {old[0]} to {new[0]} {unit}",
        notes=(f"{old[0]} -> {new[0]} {unit} per optimizer step{at}: the micro batch and the accumulation did not "
               f"change since {change.since}",),
        fix=_fix(after, old[0], new[0]),
        related=others,
    )




def _moved(before: TrainingPlan, after: TrainingPlan, plan: TrainingPlan) -> list[_Moved]:
    """(key, old, new, the fact as the plan judged holds it) of each layout fact whose value changed."""
    found: list[_Moved] = []
    if _value(before.world_size) != _value(after.world_size):
        world = plan.world_size
        how = f" ({world.detail})" if world is not None and world.detail else ""
        found.append(("W", _value(before.world_size), f"{_value(after.world_size)}{how}", world))
    for short in sorted(set(before.parallel) | set(after.parallel)):
        a, b = before.parallel.get(short), after.parallel.get(short)
        if _value(a) != _value(b):
            found.append((_key(b, a, short), _value(a) if a is not None else 1, _value(b) if b is not None else 1,
                          plan.parallel.get(short)))
    return found


def _fix(after: TrainingPlan, old: int, new: int) -> str:
    """Scale the accumulation (else the micro batch) back to the batch before, or state the new one."""
    keep = f"or, if {new} is the batch meant now, state it: `# batchlint: global-batch={new}`"
    ratio = Fraction(old, new)
    for fact in (after.grad_accum, after.micro_batch):
        count = fact.count if fact is not None else None
        if fact is not None and count is not None and (count * ratio).denominator == 1:
            return f"set {fact.key} to {int(count * ratio)} ({count} x {_times(ratio)[:-1]}) to keep {old}; {keep}"
    return f"scale the accumulation or the micro batch by {_times(ratio)} to keep {old}; {keep}"


def _value(fact: Optional[Fact]) -> object:
    return None if fact is None else fact.value


def _key(fact: Optional[Fact], other: Optional[Fact], short: str) -> str:
    for one in (fact, other):
        if one is not None and one.key:
            return one.key
    return short


def _times(ratio: Fraction) -> str:
    return f"{ratio.numerator}x" if ratio.denominator == 1 else f"{float(ratio):.3g}x"


RULE = Rule(
    code="BL106",
    name="layout-change-moves-global-batch",
    severity="warning",
    summary="a change to the parallel layout alone moves the global batch",
    check=check,
    subject=Change,
    needs=("change",),  # filled under `check --since` only: the rule is not imported otherwise
    every_release="arithmetic on the plans of one job before and after a change (micro x accumulation x dp); "
                  "no start-up check is involved",
    doc=__doc__,
    examples=(
        Example("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""", flagged=(4,), severity="warning", before=(("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),),
                message="sequence_parallel_size 1 -> 4 moves the global batch from 64 to 16 sequences",
                fix="set accumulative_counts to 64 (16 x 4) to keep 64; or, if 16 is the batch meant now, state it: `# "
                    "batchlint: global-batch=16`"),
        Example("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16 * sequence_parallel_size
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""", before=(("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),)),
        Example("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""", flagged=(4,), world_size=8, before=(("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),),
                message="sequence_parallel_size 1 -> 4 moves the global batch from 128 to 32 sequences",
                fix="set accumulative_counts to 64 (16 x 4) to keep 128; or, if 32 is the batch meant now, state it: `# "
                    "batchlint: global-batch=32`"),
        Example("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""", before=(("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),)),
        Example("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 4
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
# batchlint: global-batch=4
""", before=(("sft.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.parallel.sequence import SequenceParallelSampler

sequence_parallel_size = 1
batch_size = 1
accumulative_counts = 16
sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler
train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),)),
        Example("run.sh", """\
#!/bin/bash
torchrun --nproc_per_node 4 train.py --deepspeed ds.json
""", flagged=(2,), files=(("ds.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8
}
"""), ("train.py", """\
import transformers
"""),), before=(("run.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 train.py --deepspeed ds.json
"""),),
                message="W 8 -> 4 (--nproc_per_node 4) moves the global batch from 256 to 128 sequences",
                fix="set gradient_accumulation_steps to 16 (8 x 2) to keep 256; or, if 128 is the batch meant now, state "
                    "it: `# batchlint: global-batch=128`"),
        Example("run.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 train.py --deepspeed ds.json
""", files=(("ds.json", """\
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8
}
"""), ("train.py", """\
import transformers
"""),), before=(("run.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 train.py --deepspeed ds.json
"""),)),
        # A Trainer-based RL step (TRL's DPO through axolotl) is micro x accumulation x dp too.
        Example("train.sh", """\
#!/bin/bash
accelerate launch --num_processes 4 -m axolotl.cli.train dpo.yaml
""", flagged=(2,), files=(("dpo.yaml", """\
base_model: meta-llama/Llama-3.1-8B
rl: dpo
micro_batch_size: 2
gradient_accumulation_steps: 4
datasets:
  - path: argilla/ultrafeedback-binarized-preferences
    type: chatml.argilla
"""),), before=(("train.sh", """\
#!/bin/bash
accelerate launch --num_processes 8 -m axolotl.cli.train dpo.yaml
"""),),
                message="W 8 -> 4 (--num_processes 4) moves the global batch from 64 to 32 sequences",
                fix="set gradient_accumulation_steps to 8 (4 x 2) to keep 64; or, if 32 is the batch meant now, state it: "
                    "`# batchlint: global-batch=32`"),
        # verl's optimizer step is the global mini-batch x n, whatever the GPUs: fewer GPUs move nothing.
        Example("ppo.yaml", """\
data:
  train_batch_size: 256
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 128
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 4
  nnodes: 1
""", before=(("ppo.yaml", """\
data:
  train_batch_size: 256
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 128
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
  nnodes: 1
"""),)),
    ),
)
