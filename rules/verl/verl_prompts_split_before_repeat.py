"""
## What it does
Checks, for verl up to 0.3 and early copies of verl, that `data.train_batch_size`
itself divides over the W GPUs (`trainer.n_gpus_per_node` x `trainer.nnodes`):
those trainers hand the step's prompts to the rollout before repeating them
`actor_rollout_ref.rollout.n` times, so the split is of prompts, not of
sequences. Reported where train_batch_size x n divides W but the prompts do not
(where neither does, BL140 reports it). Silent while W is unknown.

## Why is this bad?
`generate_sequences` is dispatched over the rollout workers with an even split
of its input (protocol.py `DataProto.chunk`: "only support equal chunk"): 60
prompts over 8 GPUs fail at the first step, after the model is loaded and the
dataloader built, although 60 x 4 = 240 sequences would divide evenly. The
start-up check of 0.2 and 0.3 (`train_batch_size x n % W`) passes it.

## Example
```yaml
data:
  train_batch_size: 60   # 60 prompts over 8 GPUs
actor_rollout_ref:
  rollout:
    n: 4                 # 240 sequences would divide
trainer:
  n_gpus_per_node: 8
```

## Use instead
```yaml
data:
  train_batch_size: 64
```

By release: verl 0.1 to 0.3.0.post1 (0.4 adds auto-padding to the dispatch, and
0.5.0 repeats the prompts before generating). A copy of verl in the project is
judged by its own trainer's source.

## Source
verl/trainer/ppo/ray_trainer.py:436 @ v0.1 (`generate_sequences(gen_batch)`, no repeat);
:854 and :875 @ v0.2; :817 and :838 @ v0.3.0.post1 (generate, then `batch.repeat`);
verl/single_controller/base/decorator.py:45-57 and verl/protocol.py:500 @ v0.3.0.post1
(the even split). v0.5.0 ray_trainer.py:1163 repeats first.
"""

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

RELEASED = Premise(
    verl.DISTRIBUTION, until="0.3.0.post1", name="released",
    source="v0.1 verl/trainer/ppo/ray_trainer.py:436 (prompts to generate_sequences, first); v0.3.0.post1 "
           "ray_trainer.py:817, 838 and protocol.py:500 (last); v0.4.0 decorator.py:93 (auto padding); v0.5.0 "
           "ray_trainer.py:1163 (repeats first)")
COPY = verl.copy_premise("generates_unrepeated")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    if not settings.generates_unrepeated or not settings.actor.fsdp:
        return
    world, batch, n = plan.world_size, settings.step_prompts, settings.actor.rollout_n
    written = settings.train_batch
    if world is None or batch is None or written is None or n is None or world.count is None \
            or batch.count is None or written.count is None or n.count is None:
        return
    if batch.count % world.count == 0 or (batch.count * n.count) % world.count:
        return  # even, or BL140's
    span = batch.span or world.span
    if span is None:
        return
    step = settings.train_multiple(world.count)  # the step's prompts must divide by W
    lower = written.count // step * step
    options = " or ".join(str(v) for v in (lower, lower + step) if v > 0)
    yield Finding(
        span=span,
        message=(f"{batch.describe()} prompts" if batch is written else f"the step's {batch.count} prompts")
        + f" do not split evenly over W {world.count}",
        notes=(f"This verl hands the prompts to the rollout before repeating them {n.count} times, although "
               f"{batch.count * n.count} sequences would divide.",
               "Its first step fails (DataProto.chunk: 'only support equal chunk')."),
        fix=f"set {written.key} to a multiple of {step} ({options})",
        related=(Related(f"W = {world.value} ({world.key})", world.span),) if world.span and world.span != span else (),
        premise=COPY.name if verl.runs_copy(plan.document.path, plan.project) else RELEASED.name,
    )


RULE = Rule(
    code="BL182",
    name="verl-prompts-split-before-repeat",
    severity="error",
    summary="verl up to 0.3: train_batch_size prompts not divisible by W (split before rollout.n repeats them)",
    check=check,
    subject=VerlSettings,
    premises=(RELEASED, COPY),
    doc=__doc__,
    examples=(
        Example("prompts_60.yaml", """\
data:
  train_batch_size: 60
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 60
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""", flagged=(2,),
                files=(("requirements.txt", "verl==0.3.0.post1\n"),), severity="error",
                message="data.train_batch_size (60) prompts do not split evenly over W 8",
                fix="set data.train_batch_size to a multiple of 8 (56 or 64)"),
        Example("prompts_64.yaml", """\
data:
  train_batch_size: 64
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 64
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.3.0.post1\n"),)),
        # 0.5.0 repeats before generating: 240 sequences split evenly.
        Example("prompts_60_0_5.yaml", """\
data:
  train_batch_size: 60
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 60
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.5.0\n"),)),
    ),
)
