"""
## What it does
Checks that verl's `data.train_batch_size` is a multiple of the actor's
`ppo_mini_batch_size` (both count prompts; each is repeated
`actor_rollout_ref.rollout.n` times). Reports the remainder: with an FSDP
actor it becomes one more, smaller optimizer step per PPO step (warning); a
Megatron actor refuses it at its first update (error).

## Why is this bad?
The FSDP actor splits each rank's share of the step into mini-batches with
`split(ppo_mini_batch_size)`: 96 prompts in mini-batches of 64 give one update
on 64 and a second on 32, and the second's loss keeps the scale of a full
mini-batch (divided by the full gradient accumulation), so it counts half. No
check says so: the step count and the weighting differ from what the numbers
seem to say. The Megatron actor iterates with `make_iterator`, which asserts
an even split, after the first rollout.

## Example
```yaml
data:
  train_batch_size: 96
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
```

## Use instead
```yaml
data:
  train_batch_size: 128   # two mini-batches of 64
```

By release: verl 0.1 asserts an even split for every actor (protocol.py:351
`make_iterator`, a failure at the first update, not judged here); from 0.2 the
FSDP actor splits with a remainder, to 0.7.1 (the legacy workers' dp_actor).
Dynamic batching splits the same way and is judged too.

## Source
verl/workers/actor/dp_actor.py:216 and :226/:274 @ v0.2 (`batch.split`, `loss /
gradient_accumulation`); :377 @ v0.5.0; :430 and :465-467 @ v0.7.0
(`loss_scale_factor`); :541 and :576-578 @ b178a3c. Megatron:
verl/workers/actor/megatron_actor.py:219 @ v0.2, :369 @ v0.7.0 with
verl/protocol.py:464 @ v0.2, :827 @ v0.7.0 (`assert ... % mini_batch_size == 0`).
"""

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

FSDP = Premise(
    verl.DISTRIBUTION, since="0.2", until="0.7.1", name="fsdp", frameworks=("verl",),
    source="v0.1 verl/protocol.py:351 (make_iterator asserts an even split); v0.2 verl/workers/actor/dp_actor.py:216 "
           "(batch.split, first); v0.7.0 dp_actor.py:430, 465-467; 0.7.1 = b178a3c dp_actor.py:541, 576-578 (last "
           "legacy workers)")
MEGATRON = Premise(
    verl.DISTRIBUTION, since="0.2", until="0.7.1", name="megatron", frameworks=("verl",),
    source="v0.2 verl/workers/actor/megatron_actor.py:219, verl/protocol.py:464 (first); v0.7.0 megatron_actor.py:369, "
           "protocol.py:827; 0.7.1 = b178a3c megatron_actor.py:385, protocol.py:827 (last)")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    if not settings.legacy_workers:
        return
    actor, train, written = settings.actor, settings.step_prompts, settings.train_batch
    mini = actor.mini
    if actor.strategy not in verl.FSDP + ("megatron",) or train is None or written is None or mini is None \
            or train.count is None or written.count is None or mini.count is None:
        return
    if train.count < mini.count or train.count % mini.count == 0:
        return  # a mini-batch larger than the step: BL141
    at_fault, other = (train, mini) if train.span is not None else (mini, train)
    if at_fault.span is None:
        return
    full, rest = divmod(train.count, mini.count)
    step = settings.train_multiple(mini.count)  # the step's prompts must be whole mini-batches
    lower = written.count // step * step
    options = " or ".join(str(v) for v in (lower, lower + step) if v > 0)
    fix = f"set {written.key} to a multiple of {step} ({options}), or {mini.key} to a divisor of {train.count}"
    related = (Related(f"{other.key} = {other.value}", other.span),) if other.span else ()
    if actor.fsdp:
        steps = plan.rl.optimizer_steps if plan.rl is not None else None
        count = f"{steps.value if steps is not None else full + 1} optimizer steps"
        yield Finding(
            span=at_fault.span,
            message=f"{_prompts(train, written)} is no multiple of the actor's mini-batch {mini.count}",
            notes=(f"{train.describe()} prompts per step, {mini.describe()} per mini-batch.",
                   f"Each PPO step makes {count}: {full} on {mini.count} prompts' sequences and one more on the "
                   f"remaining {rest}.",
                   f"The last update's loss keeps a full mini-batch's scale, so it weighs {rest}/{mini.count}."),
            fix=fix, related=related, premise=FSDP.name)
    else:
        yield Finding(
            span=at_fault.span, severity="error",
            message=f"{_prompts(train, written)} is no multiple of the actor's mini-batch {mini.count}",
            notes=(f"{train.describe()} prompts per step, {mini.describe()} per mini-batch.",
                   "The Megatron actor asserts an even split into mini-batches (make_iterator): the job fails at "
                   "its first update.",),
            fix=fix, related=related, premise=MEGATRON.name)


def _prompts(step: Fact, written: Fact) -> str:
    """The step's prompts as the message names them: train_batch_size, or its product with n_agent."""
    return f"train_batch_size {written.count}" if step is written else f"the step's {step.count} prompts"


RULE = Rule(
    code="BL180",
    name="verl-mini-batch-remainder",
    severity="warning",
    summary="verl: train_batch_size no multiple of ppo_mini_batch_size (a smaller, down-weighted extra update)",
    check=check,
    subject=VerlSettings,
    premises=(FSDP, MEGATRON),
    doc=__doc__,
    examples=(
        Example("train_96.yaml", """\
data:
  train_batch_size: 96
actor_rollout_ref:
  actor:
    strategy: fsdp
    ppo_mini_batch_size: 64
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""", flagged=(2,),
                files=(("requirements.txt", "verl==0.4.1\n"),), severity="warning",
                message="train_batch_size 96 is no multiple of the actor's mini-batch 64",
                fix="set data.train_batch_size to a multiple of 64 (64 or 128), or "
                    "actor_rollout_ref.actor.ppo_mini_batch_size to a divisor of 96"),
        Example("train_128.yaml", """\
data:
  train_batch_size: 128
actor_rollout_ref:
  actor:
    strategy: fsdp
    ppo_mini_batch_size: 64
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""",
                files=(("requirements.txt", "verl==0.4.1\n"),)),
        Example("train_96_megatron.yaml", """\
data:
  train_batch_size: 96
actor_rollout_ref:
  actor:
    strategy: megatron
    ppo_mini_batch_size: 64
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""", flagged=(2,),
                files=(("requirements.txt", "verl==0.6.0\n"),), severity="error",
                message="train_batch_size 96 is no multiple of the actor's mini-batch 64",
                fix="set data.train_batch_size to a multiple of 64 (64 or 128), or "
                    "actor_rollout_ref.actor.ppo_mini_batch_size to a divisor of 96"),
        # verl 0.1 refuses at the first update instead: outside this rule's window.
        Example("train_96_0_1.yaml", """\
data:
  train_batch_size: 96
actor_rollout_ref:
  actor:
    strategy: fsdp
    ppo_mini_batch_size: 64
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""",
                files=(("requirements.txt", "verl==0.1\n"),)),
    ),
)
