"""
## What it does
Flags a verl PPO config that sets a micro batch twice: the deprecated global
key (`ppo_micro_batch_size`, `log_prob_micro_batch_size`) together with its
per-GPU replacement (`..._per_gpu`), for the actor, the rollout or a critic
the run trains. Not checked with `use_dynamic_bsz`.

## Why is this bad?
verl refuses the pair at start-up ("You have set both ... Please remove
...") rather than guess which one you meant - typically after an old script
override re-adds the deprecated key to a config that moved on.

## Example
```yaml
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: 64
    ppo_micro_batch_size_per_gpu: 8
```

## Use instead
```yaml
actor_rollout_ref:
  actor:
    ppo_micro_batch_size_per_gpu: 8
```

The `_per_gpu` keys and the check are new in verl 0.2 (0.1 has only the
global keys). A copy of verl inside the project that predates the check (an
early copy such as SkyThought's or TinyZero's lets the deprecated key win) is
judged by its own source: without the check, nothing is said.

## Source
verl/workers/config/actor.py:199-205 @ 0.9.1 (actor);
verl/workers/config/critic.py:107-108 and 150-156 (critic);
verl/utils/config.py:131-182 (rollout `log_prob_micro_batch_size`).
verl/trainer/ppo/ray_trainer.py:395-425 @ v0.2 (`check_mutually_exclusive`, first).
"""

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# The _per_gpu keys are new in 0.2: no earlier release runs a config that writes one.
RELEASED = Premise(
    verl.DISTRIBUTION, since="0.2", runs_since="0.2",
    source="v0.1 verl/trainer/config/ppo_trainer.yaml:23 (ppo_micro_batch_size only, no _per_gpu keys); "
           "v0.2 verl/trainer/ppo/ray_trainer.py:395-425 (check_mutually_exclusive, first); "
           "0.9.1 verl/workers/config/actor.py:199-205, critic.py:107-108, verl/utils/config.py:131-182 (still)")
COPY = verl.copy_premise("micro_set_once")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    if not settings.checks_micro_set_once:
        return  # a copy of verl in the project that predates the check takes the deprecated key
    premise = COPY if verl.runs_copy(plan.document.path, plan.project) else RELEASED
    for keys in settings.micro_batch_keys:
        old, new = keys.deprecated, keys.per_gpu
        if keys.role.dynamic is not False or old is None or new is None:
            continue
        yield Finding(
            span=old.span,
            message=f"{old.key.rpartition('.')[2]} ({old.value}) and {keys.per_gpu_name} ({new.value}) are both set",
            notes=(f"{old.key} ({old.value}) is the deprecated, global form of {new.key} ({new.value}): verl refuses "
                   "to start when both are set.",),
            fix=f"remove {old.key} (or set it to null) and keep {keys.per_gpu_name}",
            related=(Related(f"{keys.per_gpu_name} = {new.value}", new.span),),
            premise=premise.name,
        )


RULE = Rule(
    code="BL143",
    name="verl-micro-batch-set-twice",
    severity="error",
    summary="verl: a deprecated micro batch key set together with its _per_gpu replacement",
    check=check,
    subject=VerlSettings,
    premises=(RELEASED, COPY),
    doc=__doc__,
    examples=(
        Example("both.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: 64
    ppo_micro_batch_size_per_gpu: 8
""", flagged=(6,), severity="error",
                message="ppo_micro_batch_size (64) and ppo_micro_batch_size_per_gpu (8) are both set",
                fix="remove actor_rollout_ref.actor.ppo_micro_batch_size (or set it to null) and keep "
                    "ppo_micro_batch_size_per_gpu"),
        Example("both_pinned.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: 64
    ppo_micro_batch_size_per_gpu: 8
""", flagged=(6,),
                files=(("requirements.txt", "verl==0.9.1\n"),), severity="error",
                message="ppo_micro_batch_size (64) and ppo_micro_batch_size_per_gpu (8) are both set",
                fix="remove actor_rollout_ref.actor.ppo_micro_batch_size (or set it to null) and keep "
                    "ppo_micro_batch_size_per_gpu"),
        # verl 0.1 has no _per_gpu keys: a config that writes one is not one it runs.
        Example("both_pinned_0_1.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: 64
    ppo_micro_batch_size_per_gpu: 8
""", files=(("requirements.txt", "verl==0.1\n"),)),
        Example("new_only.yaml", """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: null
    ppo_micro_batch_size_per_gpu: 8
"""),
        Example(
            "rollout_both.yaml",
            "defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  rollout:\n"
            "    log_prob_micro_batch_size: 128\n    log_prob_micro_batch_size_per_gpu: 16\n",
            flagged=(5,),
                message="log_prob_micro_batch_size (128) and log_prob_micro_batch_size_per_gpu (16) are both "
                        "set",
                fix="remove actor_rollout_ref.rollout.log_prob_micro_batch_size (or set it to null) and keep "
                    "log_prob_micro_batch_size_per_gpu",
        ),
        Example(
            "dynamic_both.yaml",
            """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: 64
    ppo_micro_batch_size_per_gpu: 8
    use_dynamic_bsz: true
""",
        ),
    ),
)
