"""
## What it does
Checks verl's first start-up assertion: the sequences of one PPO step,
`data.train_batch_size` x `actor_rollout_ref.rollout.n`, must divide evenly
over the GPUs - over W = `trainer.n_gpus_per_node` x `trainer.nnodes` for an
FSDP actor, over dp x `ppo_micro_batch_size_per_gpu` for a Megatron actor
(dp = W / (tp x pp x cp)). Silent while W is unknown, and with
`use_dynamic_bsz`, which skips the check.

## Why is this bad?
`validate_config` asserts "real_train_batch_size (...) must be divisible by
minimal possible batch size (...)" before any worker starts: the job dies
after Ray has its GPUs. The usual slip is changing the GPU count (or the
GRPO group size n) without the batch.

## Example
```yaml
data:
  train_batch_size: 100   # x n 1 = 100 sequences over 8 GPUs
actor_rollout_ref:
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
```

## Use instead
```yaml
data:
  train_batch_size: 96
```

By release: verl 0.1 has no such check; 0.2 and 0.3 assert divisibility by W
for every actor; from 0.4.0 a Megatron actor's divisor is dp x its micro batch
(judged from 0.4.0 on only). An early copy of verl in the project (TinyZero's
and its forks') has no such check: there an FSDP job fails at its first step
instead, when the prompts are split over the W ranks (train_batch_size x n
not divisible by W means train_batch_size is not either), and a Megatron one
is not judged.

## Source
verl/utils/config.py:98-127 @ 0.9.1 (`validate_config`: n_gpus, Megatron
minimal_bsz, the assertion); verl/trainer/ppo/ray_trainer.py:417-432 @ v0.4.0;
ray_trainer.py:383-391 @ v0.2 (`% n_gpus`); verl/trainer/main_ppo.py (resource
pool = n_gpus_per_node x nnodes). Early copies: single_controller/base/decorator.py
`_split_args_kwargs_data_proto` chunks `generate_sequences`' prompts by the
worker group's world size, and protocol.py `DataProto.chunk` asserts an even split.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks import verl
from batchlint.frameworks.verl import VerlSettings
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

FSDP = Premise(
    verl.DISTRIBUTION, since="0.2", name="fsdp",
    source="v0.1 verl/trainer/ppo/ray_trainer.py (no _validate_config: no check); v0.2 verl/trainer/ppo/ray_trainer.py:390 "
           "(real_train_batch_size % n_gpus, first); v0.4.0 ray_trainer.py:432 (% minimal_bsz = n_gpus); "
           "0.9.1 verl/utils/config.py:120-127 (still)")
MEGATRON = Premise(
    verl.DISTRIBUTION, since="0.4.0", name="megatron",
    source="v0.3.0.post1 verl/trainer/ppo/ray_trainer.py:303 (% n_gpus: no dp x micro batch); v0.4.0 "
           "verl/trainer/ppo/ray_trainer.py:421-432 (minimal_bsz = megatron_dp x ppo_micro_batch_size_per_gpu, first); "
           "0.9.1 verl/utils/config.py:104-127 (still)")
COPY = verl.copy_premise("train_batch_divisible")


def check(plan: TrainingPlan, settings: VerlSettings) -> Iterator[Finding]:
    if settings.actor.dynamic is not False:
        return
    world, written, n = plan.world_size, settings.train_batch, settings.actor.rollout_n
    # The start-up check reads train_batch_size as written; without it, the split that fails is of the step's
    # data, which a copy that repeats the prompts n_agent times holds n_agent times over.
    batch = written if settings.checks_train_batch_divisible else settings.step_prompts
    if world is None or batch is None or written is None or n is None or world.count is None \
            or batch.count is None or written.count is None or n.count is None:
        return
    minimal = _minimal_batch(settings, world.count)
    if minimal is None or not (settings.checks_train_batch_divisible or settings.actor.fsdp):
        return  # an early copy of verl without the check: only the FSDP split below is known to fail
    divisor, described, short, parts = minimal
    sequences = batch.count * n.count
    if sequences % divisor == 0:
        return
    step = settings.train_multiple(divisor, n.count, agents=batch is not written)
    lower = written.count // step * step
    options = " or ".join(str(v) for v in (lower, lower + step) if v > 0)
    at_fault = next((f for f in (batch, n) if f.span is not None), None)
    span = at_fault.span if at_fault else world.span
    if span is None:
        return
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (n, world, *parts) if f.span and f is not at_fault)
    fails = ("verl's validate_config refuses to start." if settings.checks_train_batch_divisible else
             f"This copy of verl makes no start-up check of it, and its first step fails when the "
             f"{batch.count} prompts are split over the {world.count} ranks (DataProto.chunk: 'only support equal chunk').")
    premise = COPY if verl.runs_copy(plan.document.path, plan.project) else FSDP if settings.actor.fsdp else MEGATRON
    yield Finding(
        span=span,
        message=f"{sequences} sequences per step ({batch.count} prompts x n {n.count}) is not a multiple of {short}",
        notes=(f"{batch.describe()} x {n.describe()} = {sequences} sequences per step must divide by {described}.",
               fails),
        fix=f"set {written.key} to a multiple of {step} ({options}), or run on a GPU count that divides {sequences}",
        related=related,
        premise=premise.name,
    )


def _minimal_batch(settings: VerlSettings, world: int) -> Optional[tuple[int, str, str, tuple[Fact, ...]]]:
    """(divisor, how it is made, in short, the facts in it) as validate_config computes it."""
    actor = settings.actor
    if actor.fsdp:
        return world, f"W ({world})", f"W {world}", ()
    if actor.strategy != "megatron":
        return None
    tp, pp, cp = (settings.megatron.get(k) for k in ("tp", "pp", "cp"))
    micro = actor.micro
    if micro is None or micro.count is None or tp is None or pp is None or cp is None:
        return None
    if tp.count is None or pp.count is None or cp.count is None:
        return None
    model = tp.count * pp.count * cp.count
    if world % model:
        return None  # the layout itself does not fit W: BL202
    dp = world // model
    divisor = dp * micro.count
    return (divisor, f"dp ({dp} = W {world} / {model}) x {micro.describe()} = {divisor}",
            f"{divisor} (dp {dp} x micro {micro.count})", (micro, tp, pp, cp))


RULE = Rule(
    code="BL140",
    name="verl-train-batch-indivisible",
    severity="error",
    summary="verl: train_batch_size x rollout.n not divisible over the GPUs",
    check=check,
    subject=VerlSettings,
    premises=(FSDP, MEGATRON, COPY),
    doc=__doc__,
    examples=(
        # No release pinned: verl 0.1 makes no such check.
        Example("grpo_100.yaml", """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 100
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(8,), severity="info",
                message="100 sequences per step (100 prompts x n 1) is not a multiple of W 8",
                fix="set data.train_batch_size to a multiple of 8 (96 or 104), or run on a GPU count that "
                    "divides 100"),
        Example("grpo_100_pinned.yaml", """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 100
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(8,),
                files=(("requirements.txt", "verl==0.2\n"),), severity="error",
                message="100 sequences per step (100 prompts x n 1) is not a multiple of W 8",
                fix="set data.train_batch_size to a multiple of 8 (96 or 104), or run on a GPU count that "
                    "divides 100"),
        Example("grpo_100_pinned_0_1.yaml", """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 100
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", files=(("requirements.txt", "verl==0.1\n"),)),
        Example("grpo_96.yaml", """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 96
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""),
        # 100 x 2 = 200 is a multiple of 8: the group size makes it fit.
        Example("grpo_100_n2.yaml", """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 100
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
  rollout:
    n: 2
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""),
        # The user's W wins over the file's 8: 96 over 64 GPUs.
        Example("grpo_96_w64.yaml", """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 96
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(8,), world_size=64,
                files=(("requirements.txt", "verl==0.9.1\n"),), severity="error",
                message="96 sequences per step (96 prompts x n 1) is not a multiple of W 64",
                fix="set data.train_batch_size to a multiple of 64 (64 or 128), or run on a GPU count that "
                    "divides 96"),
        # Megatron: dp = 8 / tp 2 = 4, x micro 4 = 16 does not divide 40 (from 0.4.0; 0.3 divides by W, 8).
        Example("megatron_40.yaml", """\
defaults:
  - ppo_megatron_trainer
  - _self_
data:
  train_batch_size: 40
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 16
    ppo_micro_batch_size_per_gpu: 4
    megatron:
      tensor_model_parallel_size: 2
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(5,), severity="info",
                message="40 sequences per step (40 prompts x n 1) is not a multiple of 16 (dp 4 x micro 4)",
                fix="set data.train_batch_size to a multiple of 16 (32 or 48), or run on a GPU count that "
                    "divides 40"),
        Example("megatron_40_pinned.yaml", """\
defaults:
  - ppo_megatron_trainer
  - _self_
data:
  train_batch_size: 40
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 16
    ppo_micro_batch_size_per_gpu: 4
    megatron:
      tensor_model_parallel_size: 2
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""", flagged=(5,),
                files=(("requirements.txt", "verl==0.4.0\n"),), severity="error",
                message="40 sequences per step (40 prompts x n 1) is not a multiple of 16 (dp 4 x micro 4)",
                fix="set data.train_batch_size to a multiple of 16 (32 or 48), or run on a GPU count that "
                    "divides 40"),
        Example("megatron_40_pinned_0_3.yaml", """\
defaults:
  - ppo_megatron_trainer
  - _self_
data:
  train_batch_size: 40
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 16
    ppo_micro_batch_size_per_gpu: 4
    megatron:
      tensor_model_parallel_size: 2
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
""",
                files=(("requirements.txt", "verl==0.3.0.post1\n"),)),
        Example("megatron_48.yaml", """\
defaults:
  - ppo_megatron_trainer
  - _self_
data:
  train_batch_size: 48
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 16
    ppo_micro_batch_size_per_gpu: 4
    megatron:
      tensor_model_parallel_size: 2
  rollout:
    n: 1
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""),
    ),
)
