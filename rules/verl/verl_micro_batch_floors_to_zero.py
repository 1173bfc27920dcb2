"""
## What it does
Checks verl's deprecated global `actor_rollout_ref.actor.ppo_micro_batch_size`
and `critic.ppo_micro_batch_size` (set without their `_per_gpu` replacement): the workers turn it into a per-GPU
micro batch by floor division over dp = W / `ulysses_sequence_parallel_size`.
A value smaller than dp gives 0 sequences per GPU. Silent while W is unknown,
and with `use_dynamic_bsz` (the micro batch is then counted in tokens).

## Why is this bad?
From 0.2 verl refuses such a config at start-up (`ppo_micro_batch_size *
sp_size >= n_gpus`, an assertion without a message; from 0.7.0 a ValueError).
verl 0.1, and early copies of verl that projects vendor (TinyZero's and its
forks'), make no such check: the micro batch floors to 0 and the first update
divides by it (`mini % micro`, `mini // micro`): "ZeroDivisionError: integer
division or modulo by zero" after the first rollout, minutes or hours into the
job. The classic slip is a config written for one GPU (`ppo_micro_batch_size:
4`) launched on 8.

## Example
```yaml
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size: 4   # // 8 GPUs = 0 per GPU
trainer:
  n_gpus_per_node: 8
```

## Use instead
```yaml
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size_per_gpu: 4
```

## Source
verl/trainer/ppo/workers/fsdp_workers.py:85 @ v0.1 (`ppo_micro_batch_size //= W`) and
verl/trainer/ppo/actor/dp_actor.py:116-117 @ v0.1 (`mini % micro` in `update_policy`);
verl/trainer/ppo/ray_trainer.py:439 (actor) and :446 (critic) @ v0.2 (the start-up assertions,
first), :496 and :514 @ v0.4.0; verl/workers/config/actor.py:214 and critic.py:220 @ v0.7.0,
actor.py:216 and critic.py:220 @ b178a3c. A copy of verl in the project
is judged by its own source (lint/frameworks/verl.py `refuses`).
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.releases import VERL_RELEASES
from batchlint.frameworks.verl import MicroBatchKeys, VerlSettings
from batchlint.frameworks.verl_keys import KEY_SETS
from batchlint.keysets import in_force
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

RELEASED = Premise(
    verl.DISTRIBUTION, until="0.7.1", name="released",
    source="v0.1 verl/trainer/ppo/workers/fsdp_workers.py:85, actor/dp_actor.py:116 (floors to 0, modulo by zero "
           "at the first update); v0.2 verl/trainer/ppo/ray_trainer.py:439 (refused at start-up); v0.7.0 "
           "verl/workers/config/actor.py:214; 0.7.1 = b178a3c actor.py:216 (last legacy workers)")
COPY = verl.copy_premise("micro_at_least_dp")
COPY_FLOOR = Premise(
    verl.DISTRIBUTION, name="copy floor",
    source="the copy's own verl/workers/fsdp_workers.py floors the micro batch over dp and its actor divides by it "
           f"(no start-up check in its source), for any release from {VERL_RELEASES[0]} to {VERL_RELEASES[-1]}")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    world = plan.world_size
    if world is None or world.count is None:
        return
    copy = verl.runs_copy(plan.document.path, plan.project)
    checked = verl.refuses(plan.document.path, "micro_at_least_dp", plan.project)
    force = in_force(verl.DISTRIBUTION, KEY_SETS, plan.document.path, verl.keys_from_source, plan.project)
    known = force.keys if force is not None and force.known else None  # the keys of the release or copy in force
    for keys in settings.micro_batch_keys:
        finding = _check_role(keys, world, checked, copy, known)
        if finding is not None:
            yield finding


def _check_role(keys: MicroBatchKeys, world: Fact, checked: bool, copy: bool,
                known: Optional[frozenset[str]]) -> Optional[Finding]:
    """The actor's or the critic's deprecated ppo_micro_batch_size (not the rollout's log-prob one)."""
    role, micro = keys.role, keys.deprecated
    if micro is None or keys.per_gpu is not None or not micro.key.endswith(".ppo_micro_batch_size"):
        return None
    sp, ranks, value = role.sp.count if role.sp is not None else None, world.count, micro.number
    if role.dynamic is not False or not role.fsdp or sp is None or ranks is None or value is None:
        return None
    if ranks % sp or value < 1:
        return None
    dp = ranks // sp
    if value >= dp:
        return None
    how = (f"verl asserts ppo_micro_batch_size x sp >= the GPU count and refuses to start (0.1 and early copies "
           f"fail when the {role.name} first divides by it: a modulo by zero)." if checked else
           f"This copy of verl makes no start-up check, and the {role.name} divides by it: "
           "'ZeroDivisionError: integer division or modulo by zero'.")
    return Finding(
        span=micro.span,
        message=f"{micro.describe()} over dp {dp} is 0 sequences per GPU",
        notes=(f"{micro.key} is a global micro batch, floor-divided over dp ({dp}): {value} // {dp} = 0.", how),
        # The per-GPU key only where the verl in force has it (0.1 and its copies, TinyZero's, do not).
        fix=(f"set {micro.key}_per_gpu to {micro.value} in its place (a per-GPU micro batch), or {micro.key} to a "
             f"multiple of {dp}" if known is None or f"{micro.key}_per_gpu" in known
             else f"set {micro.key} to a multiple of {dp}"),
        related=(Related(f"W = {world.value} ({world.key})", world.span),) if world.span else (),
        premise=(COPY.name if checked else COPY_FLOOR.name) if copy else RELEASED.name,
    )


RULE = Rule(
    code="BL181",
    name="verl-micro-batch-floors-to-zero",
    severity="error",
    summary="verl: a deprecated global ppo_micro_batch_size smaller than dp (0 per GPU)",
    check=check,
    subject=VerlSettings,
    premises=(RELEASED, COPY, COPY_FLOOR),
    doc=__doc__,
    examples=(
        Example("micro_4_on_8.yaml", """\
data:
  train_batch_size: 64
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size: 4
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 8
""", flagged=(6,),
                files=(("requirements.txt", "verl==0.2\n"),), severity="error",
                message="actor_rollout_ref.actor.ppo_micro_batch_size (4) over dp 8 is 0 sequences per GPU",
                fix="set actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu to 4 in its place (a per-GPU "
                    "micro batch), or actor_rollout_ref.actor.ppo_micro_batch_size to a multiple of 8"),
        # verl 0.1 has no per-GPU key: the fix names only the one it reads.
        Example("micro_4_on_8_v01.yaml", """\
data:
  train_batch_size: 64
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size: 4
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 8
""", flagged=(6,),
                files=(("requirements.txt", "verl==0.1\n"),), severity="error",
                message="actor_rollout_ref.actor.ppo_micro_batch_size (4) over dp 8 is 0 sequences per GPU",
                fix="set actor_rollout_ref.actor.ppo_micro_batch_size to a multiple of 8"),
        Example("micro_8_on_8.yaml", """\
data:
  train_batch_size: 64
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size: 8
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.2\n"),)),
        Example("micro_4_on_4.yaml", """\
data:
  train_batch_size: 64
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size: 4
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 8
""", world_size=4, files=(("requirements.txt", "verl==0.1\n"),)),
        # The critic (trained: gae is the default estimator) has its own.
        Example("critic_2_on_8.yaml", """\
data:
  train_batch_size: 64
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
    ppo_micro_batch_size: 8
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 8
critic:
  ppo_micro_batch_size: 2
""", flagged=(12,),
                files=(("requirements.txt", "verl==0.2\n"),), severity="error",
                message="critic.ppo_micro_batch_size (2) over dp 8 is 0 sequences per GPU",
                fix="set critic.ppo_micro_batch_size_per_gpu to 2 in its place (a per-GPU micro batch), or "
                    "critic.ppo_micro_batch_size to a multiple of 8"),
    ),
)
