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
            premise=(ULYSSES if sp.value > 1 else CHECKED).name,
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
    premises=(CHECKED, ULYSSES),
    doc=__doc__,
    examples=(
        # No EasyR1 copy in the project: a fork from before v0.3.0 may predate the check.
        Example("offload_accumulating.yaml", _CONFIG.format(micro=1, offload="true"), flagged=(6,), severity="info"),
        Example("offload_accumulating_v0_3_0.yaml", _CONFIG.format(micro=1, offload="true"), flagged=(6,),
                files=(("verl/__init__.py", '__version__ = "0.3.0"\n'),), severity="error"),
        Example("offload_accumulating_early.yaml", _CONFIG.format(micro=1, offload="true"),
                files=(("verl/__init__.py", '__version__ = "0.2.0.dev"\n'),)),
        Example("no_offload.yaml", _CONFIG.format(micro=1, offload="false")),
        # 128 x 5 / 8 = 80 sequences per GPU in one micro batch: no accumulation.
        Example("offload_one_micro.yaml", _CONFIG.format(micro=80, offload="true")),
    ),
)
