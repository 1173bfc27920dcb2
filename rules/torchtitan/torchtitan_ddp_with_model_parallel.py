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
torchtitan @ v0.2.2: models/llama3/infra/parallelize.py:148-151 (llama3_ft
uses it; the same branch in llama4 :216-219 and
experiments/transformers_modeling_backend :115-118; llama4 shards whenever
ep > 1); distributed/parallel_dims.py:313-335 (`dp_replicate_enabled`,
`fsdp_enabled`). The same raise in every release for llama3 and llama4
(models new in 0.2.0/0.2.1 are not weighed in older releases, which refuse
their names). deepseek_v3, qwen3 and vlm raised in 0.2.0 only: from 0.2.1
they (and gpt_oss) test the 1-D dp_replicate mesh, which never raises, so
they are not flagged. See "When it holds".
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import model_premises, model_window
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

PREMISES = model_premises({
    "0.0.2": "torchtitan/models/llama/parallelize_llama.py:114-116 @ 785c34c99 (the first to read [parallelism]; "
             "llama4 from e4e48349c, experiments/llama4/infra/parallelize_llama.py:113-115; before it the [training] "
             "replicate/shard degrees, torchtitan/parallelisms/parallelize_llama.py:97-98 @ 0edd2fb36)",
    "0.1.0": "torchtitan/models/llama3/infra/parallelize.py:110-112, experiments/llama4/infra/parallelize.py:109-111",
    "0.2.0": "torchtitan/models/llama3/infra/parallelize.py:139-141 (llama3_ft's, models/llama3_ft/__init__.py)",
    "0.2.1": "torchtitan/experiments/transformers_modeling_backend/infra/parallelize.py:112-114",
    "0.2.2": "torchtitan/models/llama3/infra/parallelize.py:148-151 (llama4 :216-219, "
             "experiments/transformers_modeling_backend :115-118)",
})


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
        premise=model_window(model),
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
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("titan_ddp_tp.toml", _TITAN.format(shard=1), flagged=(6,), severity="error"),
        Example("titan_hsdp_tp.toml", _TITAN.format(shard=2)),
        # -1 resolves to 8 // (2 x 4) = 1: DDP again, known once W is.
        Example("titan_ddp_tp_w8.toml", _TITAN.format(shard=-1), flagged=(6,), world_size=8),
        Example("titan_hsdp_tp_w16.toml", _TITAN.format(shard=-1), world_size=16),
        Example("titan_unknown_w.toml", _TITAN.format(shard=-1)),
        # llama3_ft is new in 0.2.0: 0.1.0 refuses its name, not this layout.
        Example("titan_ddp_tp_ft_010.toml", _TITAN.format(shard=1).replace('"llama3"', '"llama3_ft"'),
                files=(("requirements.txt", "torchtitan==0.1.0\n"),)),
        Example("titan_ddp_tp_ft.toml", _TITAN.format(shard=1).replace('"llama3"', '"llama3_ft"'), flagged=(6,),
                severity="error"),
        # qwen3 from 0.2.1 tests its 1-D dp_replicate mesh: it never raises.
        Example("titan_ddp_tp_qwen3.toml", _TITAN.format(shard=1).replace('"llama3"', '"qwen3"')),
    ),
)
