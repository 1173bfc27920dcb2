"""
## What it does
Flags an EasyR1 actor (or a critic the run trains) with FSDP CPU offload
(`worker.actor.fsdp.enable_cpu_offload`) whose per-GPU mini-batch is more
than one micro batch: `global_batch_size` x `rollout.n` / (W /
`ulysses_size`) must equal `micro_batch_size_per_device_for_update`. Silent
while W is unknown.

## Why is this bad?
FSDP's CPU offload cannot accumulate gradients over micro batches, so
EasyR1's worker raises "cannot use FSDP's CPU offload when gradient
accumulation is enabled" at start-up. The `offload.offload_params` and
`offload.offload_optimizer` switches offload between steps instead, and
accept accumulation.

## Example
```yaml
worker:
  actor:
    global_batch_size: 128       # x n 5 / 8 GPUs = 80 sequences per GPU
    micro_batch_size_per_device_for_update: 1
    fsdp:
      enable_cpu_offload: true
```

## Use instead
```yaml
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 1
    fsdp:
      enable_cpu_offload: false
    offload:
      offload_params: true
      offload_optimizer: true
```

EasyR1 checks it in every tag (its layouts before v0.3.0 from 2025-03-27 on);
`ulysses_size` is new in v0.3.1 (v0.3.0 calls it `ulysses_sequence_parallel_size`
and rounds `global_batch_size // W x sp`), so with Ulysses it is judged from
v0.3.1 on.

## Source
EasyR1 verl/workers/fsdp_workers.py:132-147 @ v0.3.2 (`_init_dist_mesh`,
run for the actor and the critic); verl/workers/actor/config.py:60 (default off).
"""

from collections.abc import Iterator

from batchlint.frameworks.easyr1 import EasyR1Settings
from batchlint.frameworks.releases import EASYR1
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

CHECKED = Premise(
    EASYR1, since="0.3.0",
    source="EasyR1 before v0.3.0: the check lands 2025-03-27 (e0cedd7); v0.3.0 verl/workers/fsdp_workers.py:141-145 "
           "(first tag); v0.3.2 verl/workers/fsdp_workers.py:143-147 (still)")
ULYSSES = Premise(
    EASYR1, since="0.3.1", runs_since="0.3.1", name="ulysses",
    source="v0.3.0 verl/workers/actor/config.py:87 (ulysses_sequence_parallel_size) and fsdp_workers.py:132-134 "
           "(global_batch_size // W x sp); v0.3.1 verl/workers/actor/config.py:99 (ulysses_size, first); "
           "v0.3.2 verl/workers/fsdp_workers.py:136 (// (W // ulysses_size), still)")


def check(plan: TrainingPlan, settings: EasyR1Settings) -> Iterator[Finding]:
    world = plan.world_size
    gpus = world.count if world is not None else None
    if gpus is None:
        return
    for worker in settings.workers:
        role, offload = worker.role, worker.cpu_offload
        if offload is None or offload.value is not True:
            continue
        mini, n, sp, micro = role.mini, role.rollout_n, role.sp, role.micro
        if mini is None or n is None or sp is None or micro is None:
            continue
        minis, samples, split, size = mini.count, n.count, sp.count, micro.count
        if minis is None or samples is None or split is None or size is None or gpus % split:
            continue
        dp = gpus // split
        per_gpu = minis * samples // dp
        if per_gpu == 0 or per_gpu % size or per_gpu == size:
            continue  # 0 or not a multiple: BL142 reports it first
        yield Finding(
            span=offload.span or micro.span or mini.span,
            message=f"FSDP CPU offload with {per_gpu // size} micro batches per mini-batch ({role.name})",
            notes=(f"{offload.key} is true, and the {role.name}'s per-GPU mini-batch {mini.describe()} x "
                   f"{n.describe()} // dp {dp} = {per_gpu} is {per_gpu // size} micro batches of {micro.describe()}.",
                   "FSDP CPU offload cannot accumulate gradients: EasyR1 refuses to start."),
            fix=(f"turn {offload.key} off (offload.offload_params / offload.offload_optimizer offload between steps), "
                 f"or set {micro.key} to {per_gpu}"),
            related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (mini, micro) if f.span),
            premise=(ULYSSES if split > 1 else CHECKED).name,
        )


RULE = Rule(
    code="BL541",
    name="easyr1-offload-with-accumulation",
    severity="error",
    summary="EasyR1: FSDP CPU offload with more than one micro batch per mini-batch",
    check=check,
    subject=EasyR1Settings,
    needs=("world_size",),
    premises=(CHECKED, ULYSSES),
    doc=__doc__,
    examples=(
        # No EasyR1 copy in the project: a fork from before v0.3.0 may predate the check.
        Example("offload_accumulating.yaml", """\
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 1
    fsdp:
      enable_cpu_offload: true
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", flagged=(6,), severity="info",
                message="FSDP CPU offload with 80 micro batches per mini-batch (actor)",
                fix="turn worker.actor.fsdp.enable_cpu_offload off (offload.offload_params / "
                    "offload.offload_optimizer offload between steps), or set "
                    "worker.actor.micro_batch_size_per_device_for_update to 80"),
        Example("offload_accumulating_v0_3_0.yaml", """\
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 1
    fsdp:
      enable_cpu_offload: true
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""", flagged=(6,),
                files=(("verl/__init__.py", '__version__ = "0.3.0"\n'),), severity="error",
                message="FSDP CPU offload with 80 micro batches per mini-batch (actor)",
                fix="turn worker.actor.fsdp.enable_cpu_offload off (offload.offload_params / "
                    "offload.offload_optimizer offload between steps), or set "
                    "worker.actor.micro_batch_size_per_device_for_update to 80"),
        Example("offload_accumulating_early.yaml", """\
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 1
    fsdp:
      enable_cpu_offload: true
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
""",
                files=(("verl/__init__.py", '__version__ = "0.2.0.dev"\n'),)),
        Example("no_offload.yaml", """\
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 1
    fsdp:
      enable_cpu_offload: false
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
"""),
        # 128 x 5 / 8 = 80 sequences per GPU in one micro batch: no accumulation.
        Example("offload_one_micro.yaml", """\
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: 80
    fsdp:
      enable_cpu_offload: true
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
"""),
    ),
)
