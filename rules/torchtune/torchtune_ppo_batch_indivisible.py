"""
## What it does
Checks the batch arithmetic of torchtune's PPO recipe: `batch_size` (the
trajectories generated per step) must be a multiple of `forward_batch_size`
and of `ppo_batch_size`; `ppo_batch_size` must be a multiple of
`gradient_accumulation_steps`; and `num_steps` must reach at least one
`batch_size`.

## Why is this bad?
The recipe splits each batch into forward and PPO minibatches with integer
division and raises "batch_size (N) must be exactly divisible by ..." or
"num_steps N must be greater than the batch size M." when it sets up, after
loading four models (policy, reference, value, reward).

## Example
```yaml
batch_size: 64
ppo_batch_size: 48
gradient_accumulation_steps: 1
forward_batch_size: 16
```

## Use instead
```yaml
batch_size: 64
ppo_batch_size: 32
gradient_accumulation_steps: 1
forward_batch_size: 16
```

The PPO recipe first shipped in torchtune 0.3.0 and has made these checks,
unchanged, in every release since; a project pinning an older release has no
such recipe and is not told about its arithmetic.

## Source
recipes/ppo_full_finetune_single_device.py:295-309 and 322-325 @ v0.3.0 (the
first release with the recipe), :394-408 and 421-424 @ v0.6.1
(`_setup_training_parameters`, `_setup_training_hyperparameters`).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import TORCHTUNE
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

RECIPE = Premise(
    TORCHTUNE, since="0.3.0", runs_since="0.3.0",  # the recipe's first release
    source="v0.2.1 has no recipes/ppo_full_finetune_single_device.py; v0.3.0 "
           "recipes/ppo_full_finetune_single_device.py:295-309, 322-325 (first); v0.6.1 "
           "recipes/ppo_full_finetune_single_device.py:394-408, 421-424 (still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    batch, ga, ppo = plan.rl.prompts_per_step, plan.grad_accum, plan.rl.mini_batch
    forward, steps = plan.rl.micro_batch.get("policy"), plan.settings.ppo_schedule.num_steps
    for whole, part in ((batch, forward), (batch, ppo), (ppo, ga)):
        if _known(whole, part) and whole.value % part.value:
            yield Finding(
                span=part.span,
                message=f"{whole.key} ({whole.value}) is not divisible by {part.key} ({part.value}): the PPO recipe refuses to start",
                fix=f"set {part.key} to a divisor of {whole.value}, or {whole.key} to a multiple of {part.value}",
                related=(Related(f"{whole.key} = {whole.value}", whole.span),) if whole.span else (),
            )
    if _known(steps, batch) and steps.value < batch.value:
        yield Finding(
            span=steps.span,
            message=f"{steps.key} ({steps.value}) // {batch.key} ({batch.value}) = 0 PPO steps: the recipe refuses to start",
            fix=f"set {steps.key} to at least {batch.value} (it counts trajectories, not steps)",
            related=(Related(f"{batch.key} = {batch.value}", batch.span),) if batch.span else (),
        )


def _known(*facts):
    return all(f is not None and f.known and f.value > 0 and f.span is not None for f in facts)


_TUNE = """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: {steps}
ppo_epochs: 1
ppo_batch_size: {ppo}
gradient_accumulation_steps: 1
forward_batch_size: 16
"""

RULE = Rule(
    code="BL112",
    name="torchtune-ppo-batch-indivisible",
    severity="error",
    summary="torchtune PPO: batch_size, forward_batch_size, ppo_batch_size and accumulation that do not divide",
    check=check,
    needs=("rl", "settings.ppo_schedule"),
    premises=(RECIPE,),
    doc=__doc__,
    examples=(
        # No release pinned: torchtune before 0.3.0 has no PPO recipe.
        Example("tune_ppo_48.yaml", _TUNE.format(steps=10000, ppo=48), flagged=(8,), severity="error"),
        Example("tune_ppo_32.yaml", _TUNE.format(steps=10000, ppo=32)),
        Example("tune_ppo_steps.yaml", _TUNE.format(steps=32, ppo=32), flagged=(6,), severity="error"),
        Example("tune_ppo_48_pinned.yaml", _TUNE.format(steps=10000, ppo=48), flagged=(8,),
                files=(("requirements.txt", "torchtune==0.3.0\n"),), severity="error"),
        Example("tune_ppo_steps_pinned.yaml", _TUNE.format(steps=32, ppo=32), flagged=(6,),
                files=(("requirements.txt", "torchtune==0.6.1\n"),), severity="error"),
        Example("tune_ppo_48_before.yaml", _TUNE.format(steps=10000, ppo=48),
                files=(("requirements.txt", "torchtune==0.2.1\n"),)),
    ),
)
