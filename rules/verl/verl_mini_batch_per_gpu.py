"""
## What it does
Recomputes how verl's FSDP workers normalise a PPO mini-batch per GPU:
`ppo_mini_batch_size` x `rollout.n` // (W / `ulysses_sequence_parallel_size`),
for the actor and for a critic the run trains. Reports (error) a per-GPU
mini-batch of 0 or one that `ppo_micro_batch_size_per_gpu` does not divide,
and (warning) a mini-batch that does not divide over the data-parallel ranks,
which the floor division silently shrinks. Silent while W is unknown.

## Why is this bad?
The workers assert the normalised mini-batch is > 0 and a multiple of the
micro batch, after Ray placed them on their GPUs. A remainder is worse: it is
dropped without a word, so every optimizer step sees fewer sequences than
written (and a PPO step is cut into more mini-batches than planned). verl's own
`examples/rollout_correction/run_with_rollout_corr*.sh`, on its main branch
after 0.7.1 (b178a3c, legacy workers still the default), failed the
divisibility check at launch (32 x 1 // 8 = 4 is no multiple of 8).

## Example
```yaml
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8   # 32 x 1 // 8 GPUs = 4 per GPU
trainer:
  n_gpus_per_node: 8
```

## Use instead
```yaml
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 4
```

By release: these are verl's legacy FSDP workers (verl/workers/fsdp_workers.py),
which verl 0.8.0 removed (its engine workers count the mini-batch otherwise): the
verl checks hold to 0.7.1. The floor is 0.2's on (0.1 does not multiply by n);
the assertion of a per-GPU mini-batch above 0 is new in 0.3.0.post0, that of a
multiple of a `ppo_micro_batch_size_per_gpu` as written in 0.4.0 (0.2 and 0.3
assert it only for a micro batch derived from the deprecated key); the critic's
mini-batch is multiplied by n from 0.4.0 on. EasyR1's checks are in every tag
(0.3.0-0.3.2); its `ulysses_size` is new in 0.3.1 (0.3.0 calls it
`ulysses_sequence_parallel_size` and rounds `global_batch_size // W x sp`).
A copy of verl in the project is judged by its own workers' source (whatever
its version file says): TinyZero's divides by dp before multiplying by n, and
asserts nothing.

## Source
verl/workers/fsdp_workers.py:249-266 @ 0.7.1 (actor normalisation and
asserts), 1338-1355 (critic); the legacy FSDP workers are the default
(verl/trainer/main_ppo.py:128-170 @ 0.7.1, `use_legacy_worker_impl: auto`).
EasyR1 (a fork of verl) normalises its `worker.actor.global_batch_size` and
`worker.critic.global_batch_size` the same way, with `ulysses_size` and
`micro_batch_size_per_device_for_update`: EasyR1 verl/workers/fsdp_workers.py:132-141
@ v0.3.2 ("global batch size * ulysses size must be larger than num gpus",
"global batch size per device must be divisible by the micro batch size").
"""

from __future__ import annotations

from collections.abc import Iterator
from math import gcd

from batchlint.frameworks import verl
from batchlint.frameworks.releases import EASYR1
from batchlint.frameworks.verl import PPOSettings, Role
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule, largest_divisor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_LEGACY_GONE = "0.8.0 has no verl/workers/fsdp_workers.py (engine workers only)"
ZERO = Premise(
    verl.DISTRIBUTION, since="0.3.0.post0", until="0.7.1", name="verl zero", frameworks=("verl",),
    source="v0.2.0.post2 verl/workers/fsdp_workers.py:121-122 (normalised, no > 0 assertion); v0.3.0.post0 "
           f"verl/workers/fsdp_workers.py:119 (first); 0.7.1 verl/workers/fsdp_workers.py:251-254 (last); {_LEGACY_GONE}")
MICRO = Premise(
    verl.DISTRIBUTION, since="0.4.0", until="0.7.1", name="verl micro", frameworks=("verl",),
    source="v0.3.0.post1 verl/workers/fsdp_workers.py:120-128 (asserted only for the deprecated key); v0.4.0 "
           f"verl/workers/fsdp_workers.py:152-154 (first); 0.7.1 verl/workers/fsdp_workers.py:262-266 (last); {_LEGACY_GONE}")
FLOOR = Premise(
    verl.DISTRIBUTION, since="0.2", until="0.7.1", name="verl floor", frameworks=("verl",),
    source="v0.1 verl/trainer/ppo/workers/fsdp_workers.py:84 (mini //= dp, no x n); v0.2 verl/workers/fsdp_workers.py:121-122 "
           f"(x n // dp, first); 0.7.1 verl/workers/fsdp_workers.py:249-250 (last); {_LEGACY_GONE}")
CRITIC = Premise(
    verl.DISTRIBUTION, since="0.4.0", until="0.7.1", name="verl critic", frameworks=("verl",),
    source="v0.3.0.post1 verl/workers/fsdp_workers.py:647 (critic mini // dp, no x n); v0.4.0 "
           f"verl/workers/fsdp_workers.py:800-812 (first); 0.7.1 verl/workers/fsdp_workers.py:1338-1355 (last); {_LEGACY_GONE}")
# A copy of verl in the project: judged by its own legacy workers' source (lint/frameworks/verl.py `refuses`).
_COPY_CHECKS = {ZERO.name: "mini_positive", MICRO.name: "mini_micro_multiple", FLOOR.name: "mini_times_n",
                CRITIC.name: "critic_mini_times_n"}
COPIES = {name: verl.copy_premise(check, name=f"{name} (copy)") for name, check in _COPY_CHECKS.items()}
EASYR1_CHECKS = Premise(
    EASYR1, since="0.3.0", name="EasyR1", frameworks=("easyr1",),
    source="EasyR1 before v0.3.0: the checks land 2025-03-14 (178d460) and 2025-03-27 (e0cedd7); v0.3.0 "
           "verl/workers/fsdp_workers.py:128-139 (first tag); v0.3.2 verl/workers/fsdp_workers.py:132-141 (still; "
           "b44b311 :142-151)")
EASYR1_ULYSSES = Premise(
    EASYR1, since="0.3.1", runs_since="0.3.1", name="EasyR1 ulysses", frameworks=("easyr1",),
    source="v0.3.0 verl/workers/actor/config.py:87 (ulysses_sequence_parallel_size; fsdp_workers.py:132-134 "
           "global_batch_size // W x sp); v0.3.1 verl/workers/actor/config.py:99 (ulysses_size, first), "
           "fsdp_workers.py:136-138; v0.3.2 verl/workers/fsdp_workers.py:136 (// (W // ulysses_size), still)")


def check(plan: TrainingPlan, settings: PPOSettings) -> Iterator[Finding]:
    world = plan.world_size
    if not settings.legacy_workers or world is None or world.count is None:
        return
    roles = [settings.actor] + ([settings.critic] if settings.critic and settings.critic.own else [])
    for role in roles:
        finding = _check_role(role, world, settings.label, plan)
        if finding is not None:
            yield finding


def _premise(framework: str, role: Role, sp: int, severity: str, zero: bool) -> Premise:
    """The premise a finding rests on: EasyR1's (with Ulysses, from 0.3.1), or the verl check it reports."""
    if framework == "easyr1":
        return EASYR1_ULYSSES if sp > 1 else EASYR1_CHECKS
    if role.name == "critic":
        return CRITIC
    return FLOOR if severity == "warning" else ZERO if zero else MICRO


def _check_role(role: Role, world: Fact, label: str, plan: TrainingPlan) -> Optional[Finding]:
    framework = plan.framework
    mini, n, sp, micro = role.mini, role.rollout_n, role.sp, role.micro
    if not role.fsdp or mini is None or n is None or sp is None or world.count is None:
        return None
    minis, samples, split, gpus = mini.count, n.count, sp.count, world.count
    if minis is None or samples is None or split is None:
        return None
    if gpus % split:
        return None  # the (W // sp, sp) mesh does not fit: BL202
    dp = gpus // split
    sequences = minis * samples
    per_gpu = sequences // dp
    micro = micro if micro is not None and micro.count is not None else None
    ranks = f"dp {dp} (W {gpus} / sp {split})" if split > 1 else f"W ({gpus})"
    short = f"dp {dp}" if split > 1 else f"W {gpus}"
    made = f"{mini.describe()} x {n.describe()} // {ranks}"
    facts = (mini, n, sp, world) + ((micro,) if micro else ())
    if per_gpu == 0:
        at_fault, severity = mini, "error"
        message = f"the {role.name}'s per-GPU mini-batch is 0 ({sequences} sequences over {short})"
        notes = (f"The per-GPU mini-batch is {made} = 0.", f"{label} asserts it is larger than 0 and refuses to start.")
        fix = f"set {mini.key} to at least {-(-dp // samples)}, or run on fewer GPUs"
    elif micro is not None and micro.count is not None and per_gpu % micro.count:
        at_fault, severity = micro, "error"
        message = f"the {role.name}'s per-GPU mini-batch {per_gpu} is not a multiple of its micro batch {micro.count}"
        notes = (f"The per-GPU mini-batch is {made} = {per_gpu}; the micro batch is {micro.describe()}.",
                 f"{label} asserts it is a multiple of the micro batch and refuses to start.")
        fix = (
            f"set {micro.key} to a divisor of {per_gpu} (e.g. {largest_divisor(per_gpu, micro.count)}), "
            f"or {mini.key} to a multiple of {_multiple(micro.count * dp, samples)}"
        )
    elif sequences % dp:
        at_fault, severity = mini, "warning"
        message = f"the {role.name}'s mini-batch of {sequences} sequences is floored to {per_gpu * dp} over {short}"
        notes = (f"The {role.name}'s mini-batch {mini.describe()} x {n.describe()} = {sequences} sequences is not "
                 f"divisible by {ranks}.",
                 f"Each GPU's share is floored to {per_gpu}, so every optimizer step sees {per_gpu * dp} sequences, "
                 f"not {sequences}.")
        step = _multiple(dp, samples)
        fix = f"set {mini.key} to a multiple of {step} ({minis // step * step or step} or {minis // step * step + step})"
    else:
        return None
    if at_fault.span is None:
        located = next((f for f in facts if f.span is not None), None)
        if located is None:
            return None
        at_fault = located
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in facts if f.span and f is not at_fault)
    premise = _premise(framework, role, split, severity, per_gpu == 0)
    if framework == "verl" and verl.runs_copy(plan.document.path, plan.project):
        if not verl.refuses(plan.document.path, _COPY_CHECKS[premise.name], plan.project):
            return None  # a copy whose workers do not normalise (or assert) the mini-batch this way
        premise = COPIES[premise.name]
    return Finding(span=at_fault.span, message=message, notes=notes, fix=fix, severity=severity, related=related,
                   premise=premise.name)


def _multiple(sequences: int, n: int) -> int:
    """The smallest step of ppo_mini_batch_size for which mini x n is a multiple of `sequences`."""
    return sequences // gcd(sequences, n)


_VERL_0_7 = (("requirements.txt", "verl==0.7.1\n"),)
# An EasyR1 checkout or fork: its verl/__init__.py says the release.
_EASYR1_0_3_2 = (("verl/__init__.py", '__version__ = "0.3.2"\n'),)

RULE = Rule(
    code="BL142",
    name="verl-mini-batch-per-gpu",
    severity="error",
    summary="verl: a per-GPU PPO mini-batch that is 0, not a multiple of the micro batch, or floored",
    check=check,
    subject=PPOSettings,
    premises=(ZERO, MICRO, FLOOR, CRITIC, *COPIES.values(), EASYR1_CHECKS, EASYR1_ULYSSES),
    doc=__doc__,
    examples=(
        # The rollout-correction examples: 32 x 1 // 8 = 4, not a multiple of 8.
        Example("rollout_corr.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(9,), files=_VERL_0_7, severity="error",
                message="the actor's per-GPU mini-batch 4 is not a multiple of its micro batch 8",
                fix="set actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu to a divisor of 4 (e.g. 4), or "
                    "actor_rollout_ref.actor.ppo_mini_batch_size to a multiple of 64"),
        Example("rollout_corr_fixed.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 4
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", files=_VERL_0_7),
        # 0.3 asserts it only for a micro batch derived from the deprecated key; 0.8.0 has no such workers;
        # with no release pinned, neither is ruled out.
        Example("rollout_corr_0_3.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.3.0.post1\n"),)),
        Example("rollout_corr_0_8.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.8.0\n"),)),
        Example("rollout_corr_unpinned.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""),
        # 4 x 1 // 8 = 0.
        Example("mini_4.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 4
    ppo_micro_batch_size_per_gpu: 1
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(8,), files=_VERL_0_7, severity="error",
                message="the actor's per-GPU mini-batch is 0 (4 sequences over W 8)",
                fix="set actor_rollout_ref.actor.ppo_mini_batch_size to at least 8, or run on fewer GPUs"),
        Example("mini_4_0_2.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 4
    ppo_micro_batch_size_per_gpu: 1
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.2.0.post2\n"),)),
        # 36 // 8 = 4 (a multiple of 2), but 4 sequences per step are silently dropped.
        Example("mini_36.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 36
    ppo_micro_batch_size_per_gpu: 2
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(8,), files=_VERL_0_7, severity="warning",
                message="the actor's mini-batch of 36 sequences is floored to 32 over W 8",
                fix="set actor_rollout_ref.actor.ppo_mini_batch_size to a multiple of 8 (32 or 40)"),
        Example("mini_36_0_9.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 36
    ppo_micro_batch_size_per_gpu: 2
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.9.1\n"),)),
        # On 6 GPUs 36 // 6 = 6 exactly.
        Example("mini_36_w6.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 36
    ppo_micro_batch_size_per_gpu: 2
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", world_size=6, files=_VERL_0_7),
        # Unknown world size: nothing to say.
        Example("mini_unknown_w.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 288
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 1
algorithm:
  adv_estimator: grpo
trainer:
  nnodes: 1
""",
                files=_VERL_0_7),
        # EasyR1: its checks are in every tag; a fork from before v0.3.0 may predate them.
        Example("easyr1_micro_4.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
    micro_batch_size_per_device_for_update: 4
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", flagged=(6,), files=_EASYR1_0_3_2, severity="error",
                message="the actor's per-GPU mini-batch 10 is not a multiple of its micro batch 4",
                fix="set worker.actor.micro_batch_size_per_device_for_update to a divisor of 10 (e.g. 2), or "
                    "worker.actor.global_batch_size to a multiple of 32"),
        Example("easyr1_micro_4_unpinned.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
    micro_batch_size_per_device_for_update: 4
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", flagged=(6,), severity="info",
                message="the actor's per-GPU mini-batch 10 is not a multiple of its micro batch 4",
                fix="set worker.actor.micro_batch_size_per_device_for_update to a divisor of 10 (e.g. 2), or "
                    "worker.actor.global_batch_size to a multiple of 32"),
        Example("easyr1_micro_4_early.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
    micro_batch_size_per_device_for_update: 4
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""",
                files=(("verl/__init__.py", '__version__ = "0.2.0.dev"\n'),)),
        Example("easyr1_micro_2.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
    micro_batch_size_per_device_for_update: 2
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", files=_EASYR1_0_3_2),
    ),
)
