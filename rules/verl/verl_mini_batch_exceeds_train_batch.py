"""
## What it does
Flags a verl PPO config whose `ppo_mini_batch_size` (actor, or a critic the
run trains) is larger than `data.train_batch_size`. Values the file does not
write are verl's defaults (train batch 1024, mini batch 256; the critic
inherits the actor's). Not checked with `use_dynamic_bsz`.

## Why is this bad?
One PPO step splits its `train_batch_size` prompts into mini-batches of
`ppo_mini_batch_size` prompts, one optimizer step each; a mini-batch cannot
be larger than the step. verl raises "train_batch_size (...) must be >=
actor.ppo_mini_batch_size (...)" at start-up. It holds whatever the GPU count:
lowering the train batch of a config that keeps the default mini batch of
256 is the usual slip.

## Example
```yaml
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 256
```

## Use instead
```yaml
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
```

verl checks it from 0.3.0.post0 on (0.1 and 0.2 run such a config). A copy of
verl inside the project that predates the check (TinyZero's and its forks') is
judged by its own source: without the check, nothing is said.

## Source
verl/workers/config/actor.py:222-229 @ 0.9.1 (`ActorConfig.validate`);
verl/workers/config/critic.py:119-129 (`CriticConfig.validate`); called from
verl/utils/config.py:164-165 and 188-190. verl/trainer/ppo/ray_trainer.py:349-358
@ v0.3.0.post0 (`_validate_config`, first).
"""

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

RELEASED = Premise(
    verl.DISTRIBUTION, since="0.3.0.post0",
    source="v0.2.0.post2 verl/trainer/ppo/ray_trainer.py:433-446 (mini % micro only: no such check); "
           "v0.3.0.post0 verl/trainer/ppo/ray_trainer.py:350, 358 (actor, critic: first); "
           "0.9.1 verl/workers/config/actor.py:225-229, critic.py:124-129 (still)")
COPY = verl.copy_premise("mini_within_train")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    if not settings.checks_mini_within_train:
        return  # (a copy of verl in the project that predates the check runs such a config)
    batch = settings.train_batch
    roles = [settings.actor] + ([settings.critic] if settings.critic and settings.critic.own else [])
    for role in roles:
        mini = role.mini
        if role.dynamic is not False or batch is None or mini is None or batch.count is None or mini.count is None:
            continue
        if batch.count >= mini.count:
            continue
        at_fault, other = (mini, batch) if mini.span is not None else (batch, mini)
        if at_fault.span is None:
            continue
        yield Finding(
            span=at_fault.span,
            message=f"train_batch_size {batch.count} is smaller than the {role.name}'s mini-batch {mini.count}",
            notes=(f"{batch.describe()} prompts per step, {mini.describe()} for the {role.name}.",
                   "A mini-batch cannot hold more prompts than the step it is cut from: verl refuses to start."),
            fix=f"set {mini.key} to {batch.value} or a smaller divisor of it, or raise {batch.key} to a multiple of {mini.value}",
            related=(Related(f"{other.key} = {other.value}", other.span),) if other.span else (),
            premise=COPY.name if verl.runs_copy(plan.document.path, plan.project) else RELEASED.name,
        )


RULE = Rule(
    code="BL141",
    name="verl-mini-batch-exceeds-train-batch",
    severity="error",
    summary="verl: ppo_mini_batch_size larger than data.train_batch_size",
    check=check,
    subject=VerlSettings,
    premises=(RELEASED, COPY),
    doc=__doc__,
    examples=(
        # No release pinned: 0.1 and 0.2 run it.
        Example("mini_256.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 256
critic:
  ppo_mini_batch_size: 64
""", flagged=(8,), severity="info",
                message="train_batch_size 128 is smaller than the actor's mini-batch 256",
                fix="set actor_rollout_ref.actor.ppo_mini_batch_size to 128 or a smaller divisor of it, or "
                    "raise data.train_batch_size to a multiple of 256"),
        Example("mini_256_pinned.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 256
critic:
  ppo_mini_batch_size: 64
""", flagged=(8,),
                files=(("requirements.txt", "verl==0.3.0.post0\n"),), severity="error",
                message="train_batch_size 128 is smaller than the actor's mini-batch 256",
                fix="set actor_rollout_ref.actor.ppo_mini_batch_size to 128 or a smaller divisor of it, or "
                    "raise data.train_batch_size to a multiple of 256"),
        Example("mini_256_pinned_0_2.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 256
critic:
  ppo_mini_batch_size: 64
""",
                files=(("requirements.txt", "verl==0.2.0.post2\n"),)),
        Example("mini_64.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
critic:
  ppo_mini_batch_size: 64
"""),
        # The critic (trained: adv_estimator defaults to gae) has its own mini batch.
        Example("critic_256.yaml", """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
critic:
  ppo_mini_batch_size: 256
""", flagged=(10,),
                message="train_batch_size 128 is smaller than the critic's mini-batch 256",
                fix="set critic.ppo_mini_batch_size to 128 or a smaller divisor of it, or raise "
                    "data.train_batch_size to a multiple of 256"),
        # GRPO trains no critic: its mini batch is never checked.
        Example(
            "grpo_critic_256.yaml",
            """\
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
critic:
  ppo_mini_batch_size: 256
algorithm:
  adv_estimator: grpo
""",
        ),
        # Only the train batch is written: the default mini batch of 256 is larger.
        Example(
            "default_mini.yaml",
            "defaults:\n  - ppo_trainer\ndata:\n  train_batch_size: 128\nactor_rollout_ref:\n  hybrid_engine: true\n",
            flagged=(4,),
                message="train_batch_size 128 is smaller than the actor's mini-batch 256",
                fix="set actor_rollout_ref.actor.ppo_mini_batch_size to 128 or a smaller divisor of it, or "
                    "raise data.train_batch_size to a multiple of 256",
        ),
    ),
)
