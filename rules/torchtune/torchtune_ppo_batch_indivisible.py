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
from batchlint.frameworks.torchtune import TorchtuneSettings
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

RECIPE = Premise(
    TORCHTUNE, since="0.3.0", runs_since="0.3.0",  # the recipe's first release
    source="v0.2.1 has no recipes/ppo_full_finetune_single_device.py; v0.3.0 "
           "recipes/ppo_full_finetune_single_device.py:295-309, 322-325 (first); v0.6.1 "
           "recipes/ppo_full_finetune_single_device.py:394-408, 421-424 (still)")


def check(plan: TrainingPlan, torchtune: TorchtuneSettings) -> Iterator[Finding]:
    rl, schedule = plan.rl, torchtune.ppo_schedule
    if rl is None or schedule is None:
        return
    batch, ga, ppo = rl.prompts_per_step, plan.grad_accum, rl.mini_batch
    forward, steps = rl.micro_batch.get("policy"), schedule.num_steps
    for whole, part in ((batch, forward), (batch, ppo), (ppo, ga)):
        if whole is None or part is None or not _known(whole, part) or part.span is None:
            continue
        total, size = whole.count, part.count
        if total is not None and size is not None and total % size:
            yield Finding(
                span=part.span,
                message=f"{whole.key} ({whole.value}) is not divisible by {part.key} ({part.value})",
                notes=("the PPO recipe refuses to start",),
                fix=f"set {part.key} to a divisor of {whole.value}, or {whole.key} to a multiple of {part.value}",
                related=(Related(f"{whole.key} = {whole.value}", whole.span),) if whole.span else (),
            )
    if steps is None or batch is None or not _known(steps, batch) or steps.span is None:
        return
    trajectories, prompts = steps.count, batch.count
    if trajectories is not None and prompts is not None and trajectories < prompts:
        yield Finding(
            span=steps.span,
            message=f"{steps.key} ({steps.value}) is below {batch.key} ({batch.value}): no PPO step runs",
            notes=(f"{steps.key} // {batch.key} = {steps.value} // {batch.value} = 0 PPO steps "
                   f"({steps.key} counts trajectories, not steps): the recipe refuses to start",),
            fix=f"set {steps.key} to at least {batch.value} (it counts trajectories, not steps)",
            related=(Related(f"{batch.key} = {batch.value}", batch.span),) if batch.span else (),
        )


def _known(*facts: Fact) -> bool:
    """Each a positive int written in the file."""
    return all(f.count is not None and f.span is not None for f in facts)


RULE = Rule(
    code="BL112",
    name="torchtune-ppo-batch-indivisible",
    severity="error",
    summary="torchtune PPO: batch_size, forward_batch_size, ppo_batch_size and accumulation that do not divide",
    check=check,
    subject=TorchtuneSettings,
    needs=("rl",),
    premises=(RECIPE,),
    doc=__doc__,
    examples=(
        # No release pinned: torchtune before 0.3.0 has no PPO recipe.
        Example("tune_ppo_48.yaml", """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: 10000
ppo_epochs: 1
ppo_batch_size: 48
gradient_accumulation_steps: 1
forward_batch_size: 16
""", flagged=(8,),
                message="batch_size (64) is not divisible by ppo_batch_size (48)",
                fix="set ppo_batch_size to a divisor of 64, or batch_size to a multiple of 48",
                severity="error"),
        Example("tune_ppo_32.yaml", """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: 10000
ppo_epochs: 1
ppo_batch_size: 32
gradient_accumulation_steps: 1
forward_batch_size: 16
"""),
        Example("tune_ppo_steps.yaml", """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: 32
ppo_epochs: 1
ppo_batch_size: 32
gradient_accumulation_steps: 1
forward_batch_size: 16
""", flagged=(6,),
                message="num_steps (32) is below batch_size (64): no PPO step runs",
                fix="set num_steps to at least 64 (it counts trajectories, not steps)",
                severity="error"),
        Example("tune_ppo_48_pinned.yaml", """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: 10000
ppo_epochs: 1
ppo_batch_size: 48
gradient_accumulation_steps: 1
forward_batch_size: 16
""", flagged=(8,),
                message="batch_size (64) is not divisible by ppo_batch_size (48)",
                fix="set ppo_batch_size to a divisor of 64, or batch_size to a multiple of 48",
                files=(("requirements.txt", "torchtune==0.3.0\n"),),
                severity="error"),
        Example("tune_ppo_steps_pinned.yaml", """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: 32
ppo_epochs: 1
ppo_batch_size: 32
gradient_accumulation_steps: 1
forward_batch_size: 16
""", flagged=(6,),
                message="num_steps (32) is below batch_size (64): no PPO step runs",
                fix="set num_steps to at least 64 (it counts trajectories, not steps)",
                files=(("requirements.txt", "torchtune==0.6.1\n"),),
                severity="error"),
        Example("tune_ppo_48_before.yaml", """\
policy_model:
  _component_: torchtune.models.llama2.llama2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 64
num_steps: 10000
ppo_epochs: 1
ppo_batch_size: 48
gradient_accumulation_steps: 1
forward_batch_size: 16
""", files=(("requirements.txt", "torchtune==0.2.1\n"),)),
    ),
)
