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

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window
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


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    p, model = plan.parallel, titan.model_support
    replicate, shard, cp, tp, pp, ep = (p[k] for k in ("dp_replicate", "dp_shard", "cp", "tp", "pp", "ep"))
    degrees = replicate.number, cp.number, tp.number, pp.number, ep.number
    if not model.refuses_ddp:
        return
    r, c, t, s, e = degrees
    if r is None or c is None or t is None or s is None or e is None:
        return
    if r <= 1 or c != 1 or t * s <= 1 or min(t, s) < 1:
        return
    if model.sharded_with_ep and e > 1:
        return
    if titan.shard_degree is None or titan.shard_degree.value != 1:
        return
    world = plan.world_size.number if plan.world_size is not None else None
    if world is not None and world != r * t * s:
        return  # the layout does not fit W: BL202's finding, raised first
    named = [(name, f) for name, f in (("tp", tp), ("pp", pp)) if f.count is not None and f.count > 1]
    others = [f for _, f in named]
    resolved = f" = 1 with W ({world})" if shard.value == -1 else ""
    yield Finding(
        premise=model_window(model),
        span=replicate.span or others[0].span,
        message=f"dp_replicate = {r} with dp_shard = 1 is plain DDP, which TorchTitan cannot combine with "
                + " and ".join(f"{name} = {f.value}" for name, f in named),
        notes=(f"The degrees: {replicate.describe()}, {shard.describe()}{resolved}, "
               + ", ".join(f.describe() for f in others) + ".",
               "Without sharding TorchTitan wraps the model in DDP, which it supports only alone: the model's "
               "parallelize raises at start-up."),
        fix=f"shard instead: move the {r} into {shard.key} (HSDP/FSDP), or turn "
        + " and ".join(f.key for f in others) + " off",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in [shard, *others] if f.span),
    )


_SHARD_FROM_W = """\
[model]
name = "llama3"
flavor = "8B"

[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = -1
tensor_parallel_degree = 4
"""

_LLAMA3_FT_DDP_TP = """\
[model]
name = "llama3_ft"
flavor = "8B"

[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = 1
tensor_parallel_degree = 4
"""


RULE = Rule(
    code="BL212",
    name="torchtitan-ddp-with-model-parallel",
    severity="error",
    summary="TorchTitan: DDP (replicate degree > 1 without sharding) combined with tensor or pipeline parallelism",
    check=check,
    subject=TitanSettings,
    needs=("parallel.dp_replicate", "parallel.dp_shard", "parallel.cp", "parallel.tp", "parallel.pp", "parallel.ep"),
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("titan_ddp_tp.toml", """\
[model]
name = "llama3"
flavor = "8B"

[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = 1
tensor_parallel_degree = 4
""", flagged=(6,), severity="error",
                message="dp_replicate = 2 with dp_shard = 1 is plain DDP, which TorchTitan cannot combine with tp = 4",
                fix="shard instead: move the 2 into [parallelism] data_parallel_shard_degree (HSDP/FSDP), or turn "
                    "[parallelism] tensor_parallel_degree off"),
        Example("titan_hsdp_tp.toml", """\
[model]
name = "llama3"
flavor = "8B"

[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = 2
tensor_parallel_degree = 4
"""),
        # -1 resolves to 8 // (2 x 4) = 1: DDP again, known once W is.
        Example("titan_ddp_tp_w8.toml", _SHARD_FROM_W, flagged=(6,), world_size=8,
                message="dp_replicate = 2 with dp_shard = 1 is plain DDP, which TorchTitan cannot combine with tp = 4",
                fix="shard instead: move the 2 into [parallelism] data_parallel_shard_degree (HSDP/FSDP), or turn "
                    "[parallelism] tensor_parallel_degree off"),
        Example("titan_hsdp_tp_w16.toml", _SHARD_FROM_W, world_size=16),
        Example("titan_unknown_w.toml", _SHARD_FROM_W),
        # llama3_ft is new in 0.2.0: 0.1.0 refuses its name, not this layout.
        Example("titan_ddp_tp_ft_010.toml", _LLAMA3_FT_DDP_TP,
                files=(('requirements.txt', 'torchtitan==0.1.0\n'),)),
        Example("titan_ddp_tp_ft.toml", _LLAMA3_FT_DDP_TP, flagged=(6,), severity="error",
                message="dp_replicate = 2 with dp_shard = 1 is plain DDP, which TorchTitan cannot combine with tp = 4",
                fix="shard instead: move the 2 into [parallelism] data_parallel_shard_degree (HSDP/FSDP), or turn "
                    "[parallelism] tensor_parallel_degree off"),
        # qwen3 from 0.2.1 tests its 1-D dp_replicate mesh: it never raises.
        Example("titan_ddp_tp_qwen3.toml", """\
[model]
name = "qwen3"
flavor = "8B"

[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = 1
tensor_parallel_degree = 4
"""),
    ),
)
