"""
## What it does
Checks that the rollout's tensor parallel degree divides the world size W
(`trainer.n_gpus_per_node` x `trainer.nnodes`, or the W you give): EasyR1's
`worker.rollout.tensor_parallel_size`, verl's
`actor_rollout_ref.rollout.tensor_model_parallel_size`. Both default to 2, so
an unwritten degree is judged as 2. Silent while W is unknown.

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

verl: verl/workers/fsdp_workers.py:293 @ v0.2 (first), :384 @ v0.4.0, :465-466 @ v0.5.0,
:614-619 @ v0.7.0, :622-627 @ b178a3c (legacy workers, to 0.7.1); the Megatron workers from
0.4.0 (megatron_workers.py:227 @ v0.4.0, :506 @ v0.7.0). verl 0.1 asserts only tp <= W
(verl/trainer/ppo/rollout/vllm_rollout/vllm_rollout.py:75 @ v0.1). The default 2:
verl/trainer/config/ppo_trainer.yaml:63 @ v0.1, rollout/rollout.yaml:50 @ v0.7.0.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.releases import EASYR1
from batchlint.frameworks.verl import PPOSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule, largest_divisor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

EASYR1_MESH = Premise(
    EASYR1, name="EasyR1", frameworks=("easyr1",),
    source="EasyR1 builds its rollout on a (W / tp, tp) mesh and asserts W % tp == 0 from its first commit "
           "(b3d72a7 verl/workers/fsdp_workers.py:252-256) to v0.3.2 (:331-335); default 2 throughout")
VERL_FSDP = Premise(
    verl.DISTRIBUTION, since="0.2", until="0.7.1", name="verl fsdp", frameworks=("verl",),
    source="v0.1 verl/trainer/ppo/rollout/vllm_rollout/vllm_rollout.py:75 (only tp <= W); v0.2 "
           "verl/workers/fsdp_workers.py:293 (W % infer_tp, first); v0.7.0 :614-619; 0.7.1 = b178a3c "
           "fsdp_workers.py:622-627 (last: 0.8.0 drops the legacy workers)")
VERL_MEGATRON = Premise(
    verl.DISTRIBUTION, since="0.4.0", until="0.7.1", name="verl megatron", frameworks=("verl",),
    source="v0.3.0.post1 verl/workers/megatron_workers.py (no assertion); v0.4.0 megatron_workers.py:227 "
           "(first); v0.7.0 :506; 0.7.1 = b178a3c megatron_workers.py:520 (last)")


def check(plan: TrainingPlan, settings: PPOSettings) -> Iterator[Finding]:
    world, tp = plan.world_size, settings.rollout_tp
    if world is None or tp is None or world.count is None or tp.count is None or world.count % tp.count == 0:
        return
    premise = _premise(plan, settings)
    if premise is None:
        return
    fits = largest_divisor(world.count, tp.count)
    span = tp.span or world.span
    yield Finding(
        span=span,
        message=f"{tp.describe()} does not divide W {world.count}",
        notes=(f"The rollout's (W / tp, tp) device mesh cannot be built: {settings.label} refuses to start.",),
        fix=f"set {tp.key} to a divisor of {world.count} (e.g. {fits}), or run on a multiple of {tp.count} GPUs",
        related=(Related(f"W = {world.count} ({world.key})", world.span),) if world.span and world.span != span else (),
        premise=premise.name,
    )


def _premise(plan: TrainingPlan, settings: PPOSettings) -> Optional[Premise]:
    """EasyR1's check, or verl's legacy workers' (FSDP, or Megatron from 0.4.0); None where verl's
    actor runs otherwise (engine workers, an unknown strategy)."""
    if plan.framework == "easyr1":
        return EASYR1_MESH
    if not settings.legacy_workers:
        return None
    strategy = settings.actor.strategy
    return VERL_FSDP if strategy in verl.FSDP else VERL_MEGATRON if strategy == "megatron" else None


RULE = Rule(
    code="BL261",
    name="easyr1-rollout-tensor-parallel",
    severity="error",
    summary="EasyR1, verl: a rollout tensor parallel degree that does not divide the GPUs",
    check=check,
    subject=PPOSettings,
    needs=("world_size",),
    premises=(EASYR1_MESH, VERL_FSDP, VERL_MEGATRON),
    doc=__doc__,
    examples=(
        Example("tp2_on_1.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    tensor_parallel_size: 2
trainer:
  n_gpus_per_node: 1
""", flagged=(8,),
                message="worker.rollout.tensor_parallel_size (2) does not divide W 1",
                fix="set worker.rollout.tensor_parallel_size to a divisor of 1 (e.g. 1), or run on a multiple "
                    "of 2 GPUs"),
        Example("tp1_on_1.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    tensor_parallel_size: 1
trainer:
  n_gpus_per_node: 1
"""),
        Example("tp4_on_6.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    tensor_parallel_size: 4
trainer:
  n_gpus_per_node: 6
""", flagged=(8,),
                message="worker.rollout.tensor_parallel_size (4) does not divide W 6",
                fix="set worker.rollout.tensor_parallel_size to a divisor of 6 (e.g. 3), or run on a multiple "
                    "of 4 GPUs"),
        Example("tp2_on_6.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    tensor_parallel_size: 2
trainer:
  n_gpus_per_node: 6
"""),
        # The W you give wins over the file's.
        Example("tp2_w7.yaml", """\
data:
  rollout_batch_size: 64
worker:
  actor:
    global_batch_size: 16
  rollout:
    n: 4
    tensor_parallel_size: 2
trainer:
  n_gpus_per_node: 8
""", flagged=(8,), world_size=7,
                message="worker.rollout.tensor_parallel_size (2) does not divide W 7",
                fix="set worker.rollout.tensor_parallel_size to a divisor of 7 (e.g. 1), or run on a multiple "
                    "of 2 GPUs"),
        # verl: the default 2 on one GPU (the finding stands at the GPU count); pinned, an error.
        Example("verl_default_on_1.yaml", """\
data:
  train_batch_size: 48
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 48
  rollout:
    n: 1
trainer:
  n_gpus_per_node: 1
""", flagged=(9,),
                files=(("requirements.txt", "verl==0.4.1\n"),), severity="error",
                message="actor_rollout_ref.rollout.tensor_model_parallel_size (default 2) does not divide W 1",
                fix="set actor_rollout_ref.rollout.tensor_model_parallel_size to a divisor of 1 (e.g. 1), or "
                    "run on a multiple of 2 GPUs"),
        Example("verl_tp1_on_1.yaml", """\
data:
  train_batch_size: 48
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 48
  rollout:
    n: 1
    tensor_model_parallel_size: 1
trainer:
  n_gpus_per_node: 1
""",
                files=(("requirements.txt", "verl==0.4.1\n"),)),
        Example("verl_tp4_on_6.yaml", """\
data:
  train_batch_size: 48
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 48
  rollout:
    n: 1
    tensor_model_parallel_size: 4
trainer:
  n_gpus_per_node: 6
""", flagged=(8,),
                files=(("requirements.txt", "verl==0.7.0\n"),), severity="error",
                message="actor_rollout_ref.rollout.tensor_model_parallel_size (4) does not divide W 6",
                fix="set actor_rollout_ref.rollout.tensor_model_parallel_size to a divisor of 6 (e.g. 3), or "
                    "run on a multiple of 4 GPUs"),
        # No release pinned: 0.8.0 on has no legacy workers, so nothing is said.
        Example("verl_tp4_on_6_unpinned.yaml", """\
data:
  train_batch_size: 48
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 48
  rollout:
    n: 1
    tensor_model_parallel_size: 4
trainer:
  n_gpus_per_node: 6
"""),
        Example("verl_0_1.yaml", """\
data:
  train_batch_size: 48
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 48
  rollout:
    n: 1
    tensor_model_parallel_size: 4
trainer:
  n_gpus_per_node: 6
""",
                files=(("requirements.txt", "verl==0.1\n"),)),
    ),
)
