"""
## What it does
Flags a declared global batch that the rest of the layout cannot divide:
TorchTitan's `global_batch_size` against `local_batch_size` x dp,
DeepSpeed's `train_batch_size` when one of the other two batch keys is left
for DeepSpeed to derive by floor division, and LLM Foundry's
`global_train_batch_size` against the world size (it derives the per-device
batch from it and splits that into micro batches, the last one shorter if need
be). Where the world size is unknown it reports only what fails for every
world size.

## Why is this bad?
These frameworks derive gradient accumulation (or the micro batch) from the
global batch, then check the result: TorchTitan asserts
`global_batch_size % (local_batch_size * dp) == 0`, DeepSpeed floors
`train_batch_size // micro // W` and then asserts the product is exact. Either
way the job dies at start-up, after it waited in the queue.

## Example
```toml
[training]
local_batch_size = 8
global_batch_size = 100   # 8 x dp 4 = 32 does not divide 100
```

## Use instead
```toml
[training]
local_batch_size = 8
global_batch_size = 96
```

## Source
torchtitan/train.py (v0.2.2, global batch check in Trainer.__init__);
deepspeed/runtime/config.py `_set_batch_related_parameters` and `_batch_assertion`;
llmfoundry/utils/config_utils.py:437-443 @ 8c8dd48 (calculate_batch_size_info, called with
data_replication_degree = 1 by update_batch_size_info, :496-497).
"""

from collections.abc import Iterator

from batchlint.plan import Origin, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    declared, derived = plan.declared_global_batch, plan.derived_from_global
    if declared is None or derived is None or not declared.known or declared.value <= 0:
        return
    if derived == "device_batch":
        yield from _per_device(plan, declared)
        return
    other = plan.micro_batch if derived == "grad_accum" else plan.grad_accum
    if other is None or not other.known or other.value <= 0:
        return
    derived_name = "gradient accumulation" if derived == "grad_accum" else "the micro batch"
    dp = plan.data_parallel
    if dp is not None and dp.positive:
        divisor, parts = other.value * dp.value, f"{other.describe()} x dp ({dp.value})"
        every_w = ""
    else:
        factor = plan.data_parallel_factor
        multiple = factor.value if factor is not None and factor.known and factor.value > 0 else 1
        divisor = other.value * multiple
        parts = other.describe() + (f" x {factor.describe()}" if multiple > 1 else "")
        every_w = " for any world size"
    if declared.value % divisor == 0:
        return
    lower = declared.value // divisor * divisor
    upper = lower + divisor
    message = (
        f"{declared.key} ({declared.value}) is not divisible by {parts} = {divisor}{every_w}: "
        f"{derived_name} is derived from it by floor division and the job refuses to start"
    )
    suggestions = " or ".join(str(v) for v in (lower, upper) if v > 0)
    fix = f"set {declared.key} to a multiple of {divisor} ({suggestions})"
    related = (Related(f"{other.key} = {other.value}", other.span),) if other.span else ()
    yield Finding(span=declared.span, message=message, fix=fix, related=related)


def _per_device(plan, declared):
    """The per-device batch is global / W; with W unknown any global batch fits W = 1."""
    world = plan.world_size
    if world is None or not world.positive or declared.value % world.value == 0:
        return
    lower = declared.value // world.value * world.value
    message = (f"{declared.key} ({declared.value}) is not divisible by {world.describe()}: the "
               f"per-device batch is derived from it by division and the job refuses to start")
    suggestions = " or ".join(str(v) for v in (lower, lower + world.value) if v > 0)
    # A W written in a file (a job's GPU count) is pointed at; a launch line's is noted by the engine.
    related = (Related(f"W = {world.value}", world.span, world.span.path),) \
        if world.span and world.origin is Origin.FILE else ()
    yield Finding(span=declared.span, message=message, fix=f"set {declared.key} to a multiple of {world.value} "
                  f"({suggestions})", related=related)


_TITAN = """\
[job]
description = "llama3 8b"

[training]
local_batch_size = {local}
global_batch_size = {global_}
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
"""

# An LLM Foundry train YAML: the per-device batch is global_train_batch_size / W.
_FOUNDRY = """\
max_seq_len: 2048
model:
  name: mpt_causal_lm
train_loader:
  name: text
global_train_batch_size: {global_}
device_train_microbatch_size: 8
"""

RULE = Rule(
    code="BL103",
    name="global-batch-indivisible",
    severity="error",
    summary="a declared global batch that micro batch x dp cannot divide",
    check=check,
    needs=("declared_global_batch", "derived_from_global"),
    doc=__doc__,
    examples=(
        # W=8, tp=2 -> dp_shard = 4; 8 x 4 = 32 does not divide 100.
        Example("titan_indivisible.toml", _TITAN.format(local=8, global_=100), flagged=(6,), world_size=8),
        Example("titan_divisible.toml", _TITAN.format(local=8, global_=96), world_size=8),
        # Without W only what fails for every W: 8 does not divide 100.
        Example("titan_any_w.toml", _TITAN.format(local=8, global_=100), flagged=(6,)),
        Example("titan_unknown_w.toml", _TITAN.format(local=8, global_=104)),
        Example(
            "ds_floor.json",
            '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2}\n}\n',
            flagged=(2,),
            world_size=8,
        ),
        Example(
            "ds_exact.json",
            '{\n  "train_batch_size": 96,\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2}\n}\n',
            world_size=8,
        ),
        Example("ds_alone.json", '{\n  "train_batch_size": 12,\n  "steps_per_print": 10\n}\n', flagged=(2,), world_size=8),
        # 6 does not divide 256; 8 does (micro 8 x 8 = 64 need not divide it: micro batches split the device batch).
        Example("foundry_indivisible.yaml", _FOUNDRY.format(global_=256), flagged=(6,), world_size=6),
        Example("foundry_divisible.yaml", _FOUNDRY.format(global_=40), world_size=8),
        Example("foundry_unknown_w.yaml", _FOUNDRY.format(global_=100)),
    ),
)
