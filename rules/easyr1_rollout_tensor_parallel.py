"""
## What it does
Checks that the rollout's `worker.rollout.tensor_parallel_size` divides the
world size W (`trainer.n_gpus_per_node` x `trainer.nnodes`, or the W you
give). Silent while W is unknown.

## Why is this bad?
EasyR1 runs vLLM inside the training workers, on a (W / tp, tp) device mesh:
its FSDP worker raises "rollout world size ... is not divisible by tp size"
while building the rollout, after Ray placed the job and loaded the model. The
default tensor_parallel_size is 2, so a config moved to one GPU (or to an odd
number) without setting it fails.

## Example
```yaml
worker:
  rollout:
    tensor_parallel_size: 2
trainer:
  n_gpus_per_node: 1
```

## Use instead
```yaml
worker:
  rollout:
    tensor_parallel_size: 1
trainer:
  n_gpus_per_node: 1
```

## Source
EasyR1 verl/workers/fsdp_workers.py:331-335 @ v0.3.2 (`_build_rollout`);
verl/workers/rollout/vllm_rollout_spmd.py:94-95 (tp larger than W);
verl/workers/rollout/config.py:36 (default 2); verl/trainer/main.py:58-61 (W).
The same assertion is in fsdp_workers.py:252-256 @ b3d72a7, EasyR1's first commit.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule, largest_divisor


def check(plan: TrainingPlan) -> Iterator[Finding]:
    tp, world = plan.settings.rollout_tp, plan.world_size
    if not (tp.positive and world.positive) or world.value % tp.value == 0:
        return
    fits = largest_divisor(world.value, tp.value)
    span = tp.span or world.span
    yield Finding(
        span=span,
        message=(f"{tp.describe()} does not divide W ({world.value}): the rollout's (W / tp, tp) device mesh "
                 f"cannot be built, and EasyR1 refuses to start"),
        fix=f"set {tp.key} to a divisor of {world.value} (e.g. {fits}), or run on a multiple of {tp.value} GPUs",
        related=(Related(f"W = {world.value} ({world.key})", world.span),) if world.span and world.span != span else (),
    )


_CONFIG = """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    tensor_parallel_size: {tp}
trainer:
  n_gpus_per_node: {gpus}
"""

RULE = Rule(
    code="BL261",
    name="easyr1-rollout-tensor-parallel",
    severity="error",
    summary="EasyR1: a rollout tensor_parallel_size that does not divide the GPUs",
    check=check,
    needs=("settings.rollout_tp", "world_size"),
    every_release=("EasyR1 builds its rollout on a (W / tp, tp) mesh and asserts W % tp == 0 in every layout, from "
                   "its first commit (b3d72a7 verl/workers/fsdp_workers.py:252-256) to v0.3.2 (:331-335); the "
                   "default tensor_parallel_size is 2 throughout"),
    doc=__doc__,
    examples=(
        Example("tp2_on_1.yaml", _CONFIG.format(tp=2, gpus=1), flagged=(8,)),
        Example("tp1_on_1.yaml", _CONFIG.format(tp=1, gpus=1)),
        Example("tp4_on_6.yaml", _CONFIG.format(tp=4, gpus=6), flagged=(8,)),
        Example("tp2_on_6.yaml", _CONFIG.format(tp=2, gpus=6)),
        # The W you give wins over the file's.
        Example("tp2_w7.yaml", _CONFIG.format(tp=2, gpus=8), flagged=(8,), world_size=7),
    ),
)
