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

A copy of verl inside the project that predates the check (an early copy such
as SkyThought's or TinyZero's lets the deprecated key win) is judged by its own
source: without the check, nothing is said.

## Source
verl/workers/config/actor.py:178-184 @ b178a3c (actor);
verl/workers/config/critic.py:104-105 and 143-153 (critic);
verl/utils/config.py:117-168 (rollout `log_prob_micro_batch_size`).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    if not plan.settings.checks_micro_set_once:
        return  # a copy of verl in the project that predates the check takes the deprecated key
    for keys in plan.settings.micro_batch_keys:
        old, new = keys.deprecated, keys.per_gpu
        if keys.role.dynamic is not False or old is None or new is None:
            continue
        yield Finding(
            span=old.span,
            message=f"{old.key} ({old.value}, deprecated, global) and {new.key} ({new.value}) are both set: verl refuses to start",
            fix=f"remove {old.key} (or set it to null) and keep {keys.per_gpu_name}",
            related=(Related(f"{keys.per_gpu_name} = {new.value}", new.span),),
        )


_CONFIG = """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: {old}
    ppo_micro_batch_size_per_gpu: 8
"""

RULE = Rule(
    code="BL143",
    name="verl-micro-batch-set-twice",
    severity="error",
    summary="verl: a deprecated micro batch key set together with its _per_gpu replacement",
    check=check,
    needs=("settings.micro_batch_keys",),
    doc=__doc__,
    examples=(
        Example("both.yaml", _CONFIG.format(old=64), flagged=(6,)),
        Example("new_only.yaml", _CONFIG.format(old="null")),
        Example(
            "rollout_both.yaml",
            "defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  rollout:\n"
            "    log_prob_micro_batch_size: 128\n    log_prob_micro_batch_size_per_gpu: 16\n",
            flagged=(5,),
        ),
        Example(
            "dynamic_both.yaml",
            _CONFIG.format(old=64) + "    use_dynamic_bsz: true\n",
        ),
    ),
)
