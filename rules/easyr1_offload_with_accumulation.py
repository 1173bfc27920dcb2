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

## Source
EasyR1 verl/workers/fsdp_workers.py:142-157 @ b44b311 (`_init_dist_mesh`,
run for the actor and the critic); verl/workers/actor/config.py:80 (default off).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    world = plan.world_size
    if not world.positive:
        return
    for worker in plan.settings.workers:
        role, offload = worker.role, worker.cpu_offload
        if offload is None or offload.value is not True:
            continue
        mini, n, sp, micro = role.mini, role.rollout_n, role.sp, role.micro
        if not all(f is not None and f.positive for f in (mini, n, sp, micro)) or world.value % sp.value:
            continue
        dp = world.value // sp.value
        per_gpu = mini.value * n.value // dp
        if per_gpu == 0 or per_gpu % micro.value or per_gpu == micro.value:
            continue  # 0 or not a multiple: BL142 reports it first
        yield Finding(
            span=offload.span or micro.span or mini.span,
            message=(f"{offload.key} is true, but the {role.name}'s per-GPU mini-batch {mini.describe()} x "
                     f"{n.describe()} // dp {dp} = {per_gpu} is {per_gpu // micro.value} micro batches of "
                     f"{micro.describe()}: FSDP CPU offload cannot accumulate gradients, and EasyR1 refuses to start"),
            fix=(f"turn {offload.key} off (offload.offload_params / offload.offload_optimizer offload between steps), "
                 f"or set {micro.key} to {per_gpu}"),
            related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (mini, micro) if f.span),
        )


_CONFIG = """\
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: {micro}
    fsdp:
      enable_cpu_offload: {offload}
  rollout:
    n: 5
trainer:
  n_gpus_per_node: 8
"""

RULE = Rule(
    code="BL541",
    name="easyr1-offload-with-accumulation",
    severity="error",
    summary="EasyR1: FSDP CPU offload with more than one micro batch per mini-batch",
    check=check,
    needs=("settings.workers", "world_size"),
    doc=__doc__,
    examples=(
        Example("offload_accumulating.yaml", _CONFIG.format(micro=1, offload="true"), flagged=(6,)),
        Example("no_offload.yaml", _CONFIG.format(micro=1, offload="false")),
        # 128 x 5 / 8 = 80 sequences per GPU in one micro batch: no accumulation.
        Example("offload_one_micro.yaml", _CONFIG.format(micro=80, offload="true")),
    ),
)
