"""
## What it does
Flags a TorchTitan layout that replicates the model with plain DDP
(`data_parallel_replicate_degree` > 1 while the shard degree comes out as 1
and `context_parallel_degree` is 1) together with tensor or pipeline
parallelism. A shard degree of -1 is resolved with the world size; while it
cannot be known the rule stays silent.

## Why is this bad?
Without sharding, TorchTitan wraps the model in DDP, which it only supports
as the single parallelism: the model's parallelize function raises "DDP has
not supported > 1D parallelism" after the model has been built. Sharding
instead (HSDP: `data_parallel_shard_degree` > 1 with the replicate degree)
works with tp and pp.

## Example
```toml
[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = 1
tensor_parallel_degree = 4
```

## Use instead
```toml
[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = 2
tensor_parallel_degree = 4
```

## Source
torchtitan @ v0.2.2: models/llama3/infra/parallelize.py:125-151 (the same
branch in llama4 :181-219, qwen3 :142-180, deepseek_v3 :162-200, gpt_oss
:125-165, experiments/vlm :75-104, experiments/transformers_modeling_backend
:87-118; llama4, deepseek_v3 and gpt_oss shard whenever ep > 1);
distributed/parallel_dims.py:313-335 (`dp_replicate_enabled`, `fsdp_enabled`).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    p, model = plan.parallel, plan.settings.model_support
    if not model.refuses_ddp or not all(p[k].known for k in ("dp_replicate", "cp", "tp", "pp", "ep")):
        return
    replicate, cp, tp, pp = p["dp_replicate"], p["cp"], p["tp"], p["pp"]
    if replicate.value <= 1 or cp.value != 1 or tp.value * pp.value <= 1 or min(tp.value, pp.value) < 1:
        return
    if model.sharded_with_ep and p["ep"].value > 1:
        return
    if plan.settings.shard_degree.value != 1:
        return
    world = plan.world_size
    if world is not None and world.known and world.value != replicate.value * tp.value * pp.value:
        return  # the layout does not fit W: BL202's finding, raised first
    others = [f for f in (tp, pp) if f.value > 1]
    shard = p["dp_shard"]
    shown = shard.describe() + (f" = 1 with W ({plan.world_size.value})" if shard.value == -1 else "")
    yield Finding(
        span=replicate.span or others[0].span,
        message=(
            f"{replicate.describe()} with {shown} is plain DDP, which TorchTitan cannot combine with "
            f"{' and '.join(f.describe() for f in others)}: the model's parallelize raises at start-up"
        ),
        fix=f"shard instead: move the {replicate.value} into {shard.key} (HSDP/FSDP), or turn "
        + " and ".join(f.key for f in others) + " off",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in [shard, *others] if f.span),
    )


_TITAN = """\
[model]
name = "llama3"
flavor = "8B"

[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = {shard}
tensor_parallel_degree = 4
"""

RULE = Rule(
    code="BL212",
    name="torchtitan-ddp-with-model-parallel",
    severity="error",
    summary="TorchTitan: DDP (replicate degree > 1 without sharding) combined with tensor or pipeline parallelism",
    check=check,
    needs=("parallel.dp_replicate", "parallel.dp_shard", "parallel.cp", "parallel.tp", "parallel.pp", "parallel.ep",
           "settings.model_support", "settings.shard_degree"),
    doc=__doc__,
    examples=(
        Example("titan_ddp_tp.toml", _TITAN.format(shard=1), flagged=(6,)),
        Example("titan_hsdp_tp.toml", _TITAN.format(shard=2)),
        # -1 resolves to 8 // (2 x 4) = 1: DDP again, known once W is.
        Example("titan_ddp_tp_w8.toml", _TITAN.format(shard=-1), flagged=(6,), world_size=8),
        Example("titan_hsdp_tp_w16.toml", _TITAN.format(shard=-1), world_size=16),
        Example("titan_unknown_w.toml", _TITAN.format(shard=-1)),
    ),
)
