"""
## What it does
Checks that EasyR1 can split its batches evenly over the W workers: the
prompts of each generation call (`data.mini_rollout_batch_size` when set,
else `data.rollout_batch_size`) and the sequences of each update
(`data.rollout_batch_size` x `worker.rollout.n`) must be multiples of W
(`trainer.n_gpus_per_node` x `trainer.nnodes`, or the W you give). Silent
while W is unknown.

## Why is this bad?
Generation and the actor update run on all W workers, each given an equal
share of the batch: `DataProto.chunk` asserts "only support equal chunk",
and the job dies at its first training step, after the model was loaded and
the first validation ran. A rollout batch of 512 on 6 GPUs is the usual slip.

## Example
```yaml
data:
  rollout_batch_size: 512   # 512 prompts over 6 GPUs
trainer:
  n_gpus_per_node: 6
```

## Use instead
```yaml
data:
  rollout_batch_size: 510
trainer:
  n_gpus_per_node: 6
```

By release: the equal split is asserted in every EasyR1 layout, from its first
commit on; `data.mini_rollout_batch_size` (online filtering) is new in v0.3.1,
and a config that sets it is judged from v0.3.1 on.

## Source
EasyR1 verl/trainer/ray_trainer.py:497 @ v0.3.2 (`generate_sequences` on the
generation batch), 599 (`_balance_batch`, equal shares), 661 (`update_actor`);
verl/workers/fsdp_workers.py:491, 552, 573 (`Dispatch.DP_COMPUTE_PROTO`);
verl/single_controller/base/decorator.py:48-59, 106-108; verl/protocol.py:555-556
(the assertion); verl/trainer/data_loader.py:53-56.
"""

from collections.abc import Iterator

from batchlint.frameworks.easyr1 import EasyR1Settings
from batchlint.frameworks.releases import EASYR1
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

SPLIT = Premise(
    EASYR1, name="split",
    source="b3d72a7 (EasyR1's first commit) verl/protocol.py:472-473 and verl/workers/fsdp_workers.py:357, 397 "
           "(DP_COMPUTE_PROTO); v0.3.0 verl/protocol.py:497-498; v0.3.2 verl/protocol.py:555-556 (still)")
# data.mini_rollout_batch_size is new in v0.3.1: no earlier release runs a config that sets it.
ROUNDS = Premise(
    EASYR1, since="0.3.1", runs_since="0.3.1", name="rounds",
    source="v0.3.0 verl/trainer/config.py:41-43 (no mini_rollout_batch_size); v0.3.1 verl/trainer/config.py:45, "
           "verl/trainer/data_loader.py:50-51 (first); v0.3.2 verl/trainer/config.py:47, data_loader.py:53-54 (still)")

_EQUAL_SHARES = "EasyR1 gives each worker an equal share and asserts it at the first step: the job dies there."


def check(plan: TrainingPlan, settings: EasyR1Settings) -> Iterator[Finding]:
    world = plan.world_size
    prompts, n = settings.round_prompts, settings.actor.rollout_n
    gpus = world.count if world is not None else None
    if world is None or gpus is None or prompts is None or prompts.count is None:
        return
    where = (Related(f"W = {gpus} ({world.key})", world.span),) if world.span else ()
    if prompts.count % gpus:
        rounds = prompts.key == "data.mini_rollout_batch_size"  # online filtering's rounds (new in v0.3.1)
        lower = prompts.count // gpus * gpus
        options = " or ".join(str(v) for v in (lower, lower + gpus) if v > 0)
        yield Finding(
            span=prompts.span or world.span,
            message=f"{prompts.describe()} prompts per generation call do not split evenly over W {gpus}",
            notes=(_EQUAL_SHARES,),
            fix=f"set {prompts.key} to a multiple of {gpus} ({options}), or run on a GPU count that divides it",
            related=where,
            premise=(ROUNDS if rounds else SPLIT).name,
        )
        return
    batch = settings.train_batch
    if batch is None or n is None or batch.count is None or n.count is None or batch.count * n.count % gpus == 0:
        return
    yield Finding(
        span=batch.span or n.span or world.span,
        message=f"{batch.count * n.count} sequences per update do not split evenly over W {gpus}",
        notes=(f"The sequences of an update are {batch.describe()} x {n.describe()} = {batch.count * n.count}.",
               _EQUAL_SHARES),
        fix=f"make {batch.key} x {n.key} a multiple of {gpus}",
        related=where,
        premise=SPLIT.name,
    )


RULE = Rule(
    code="BL161",
    name="easyr1-generation-split",
    severity="error",
    summary="EasyR1: a generation or update batch that does not split evenly over the GPUs",
    check=check,
    subject=EasyR1Settings,
    needs=("world_size",),
    premises=(SPLIT, ROUNDS),
    doc=__doc__,
    examples=(
        Example("512_on_6.yaml", """\
data:
  rollout_batch_size: 512
  mini_rollout_batch_size: null
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 6
""", flagged=(2,),
                message="data.rollout_batch_size (512) prompts per generation call do not split evenly over W "
                        "6",
                fix="set data.rollout_batch_size to a multiple of 6 (510 or 516), or run on a GPU count that "
                    "divides it"),
        Example("480_on_6.yaml", """\
data:
  rollout_batch_size: 480
  mini_rollout_batch_size: null
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 6
"""),
        # Online filtering generates 100 prompts a call: not a multiple of 8.
        Example("mini_100_on_8.yaml", """\
data:
  rollout_batch_size: 512
  mini_rollout_batch_size: 100
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", flagged=(3,), severity="error",
                message="data.mini_rollout_batch_size (100) prompts per generation call do not split evenly "
                        "over W 8",
                fix="set data.mini_rollout_batch_size to a multiple of 8 (96 or 104), or run on a GPU count "
                    "that divides it"),
        # v0.3.0 has no mini_rollout_batch_size: a config that sets it is not one it runs.
        Example("mini_100_on_8_v0_3_0.yaml", """\
data:
  rollout_batch_size: 512
  mini_rollout_batch_size: 100
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""",
                files=(("verl/__init__.py", '__version__ = "0.3.0"\n'),)),
        Example("mini_128_on_8.yaml", """\
data:
  rollout_batch_size: 512
  mini_rollout_batch_size: 128
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
"""),
        # Calls of 96 prompts split over 6, but the 64 x 5 = 320 sequences kept do not.
        Example("kept_320_on_6.yaml", """\
data:
  rollout_batch_size: 64
  mini_rollout_batch_size: 96
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 6
""", flagged=(2,),
                message="320 sequences per update do not split evenly over W 6",
                fix="make data.rollout_batch_size x worker.rollout.n a multiple of 6"),
        Example("w7.yaml", """\
data:
  rollout_batch_size: 512
  mini_rollout_batch_size: null
worker:
  actor:
    global_batch_size: 32
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", flagged=(2,), world_size=7,
                message="data.rollout_batch_size (512) prompts per generation call do not split evenly over W "
                        "7",
                fix="set data.rollout_batch_size to a multiple of 7 (511 or 518), or run on a GPU count that "
                    "divides it"),
    ),
)
