"""
## What it does
Flags a parallel degree below 1 in TorchTitan, torchtune and nanotron configs.
Only TorchTitan's data-parallel shard degree may be -1 ("the ranks left
over"); every other degree (replicate, tensor, pipeline, context, expert,
expert-tensor; nanotron's dp too) must be 1 or more. For torchtune only
`tensor_parallel_dim` of full_finetune_distributed is checked: the released
recipes (0.6.0, 0.6.1) read no other `*_parallel_dim` (its `ParallelDims`,
which checks them all, exists on main only), and the LoRA and QAT recipes
read none.

## Why is this bad?
TorchTitan's `ParallelDims` asserts "Parallelism degree should be >= 1,
except for dp_shard" and "dp_shard must -1 or >=1" before it builds the
device mesh; torchtune 0.6's full_finetune_distributed divides the world size
by `tensor_parallel_dim` and builds a (W // tp, tp) mesh, which no degree
below 1 gives; nanotron's `ParallelContext` asserts that the degrees multiply
to the world size, which no degree below 1 can give (its released tags refuse
`context_parallel_size`, a key of main only, outright): the job dies at
start-up, whatever the number of GPUs.

## Example
```toml
[parallelism]
tensor_parallel_degree = 0
```

## Use instead
```toml
[parallelism]
tensor_parallel_degree = 1
```

## Source
torchtitan/distributed/parallel_dims.py:45-48 @ v0.2.2 (:40-43 @ v0.1.0;
expert degrees from 0.2.0, which added the keys);
recipes/full_finetune_distributed.py:157-160 and 545-547 @ torchtune v0.6.1;
huggingface/nanotron src/nanotron/parallel/context.py:25-36 @ v0.4 (and v0.1),
26-28 and 62-81 on main @ 2411b022 (still "0.4"). See "When it holds".
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import NANOTRON, NO_TOML, TORCHTITAN, TORCHTUNE
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

DEGREES = Premise(
    TORCHTITAN, name="TorchTitan degrees", frameworks=("torchtitan",),
    source="0.0.2 (main) torchtitan/distributed/parallel_dims.py:40-43 @ 785c34c99 (the first to read [parallelism]); "
           "v0.1.0 torchtitan/distributed/parallel_dims.py:40-43; v0.2.2 torchtitan/distributed/parallel_dims.py:45-48 "
           "(still); " + NO_TOML)
EXPERT_DEGREES = Premise(
    TORCHTITAN, since="0.2.0", runs_since="0.2.0", name="TorchTitan expert degrees", frameworks=("torchtitan",),
    source="v0.1.0 has no expert_parallel_degree nor expert_tensor_parallel_degree (config_manager.py; parallel_dims.py:"
           "40-41 checks dp_replicate, cp, tp, pp); v0.2.0 torchtitan/distributed/parallel_dims.py:44-45 (first); v0.2.2 "
           "torchtitan/distributed/parallel_dims.py:45-46 (still); " + NO_TOML)
REGISTRY = Premise(
    TORCHTITAN, since="0.3.0", runs_since="0.3.0", name="TorchTitan config registry", frameworks=("torchtitan",),
    source="v0.2.2 reads TOML only (config/manager.py:81); 0.3.0 (release/0.3 4f9e9a47d, the PyPI wheel) reads the "
           "Python registries and asserts every degree, torchtitan/distributed/parallel_dims.py:179-181")
TUNE_TP = Premise(
    TORCHTUNE, since="0.6.0", runs_since="0.6.0", name="torchtune tensor_parallel_dim", frameworks=("torchtune",),
    source="v0.5.0 recipes/full_finetune_distributed.py reads no tensor_parallel_dim; v0.6.0 "
           "recipes/full_finetune_distributed.py:157-160 (W % tp: 0 divides by zero) and 545-547 (the (W // tp, tp) "
           "mesh: a negative tp cannot build it) (first); v0.6.1 recipes/full_finetune_distributed.py:157-160, 545-547 "
           "(still); main bd2a0fc torchtune/training/_distributed.py:79-82 checks every degree")
NANOTRON_DEGREES = Premise(
    NANOTRON, name="nanotron degrees", frameworks=("nanotron",),
    source="v0.1 (0.1.0) src/nanotron/parallel/context.py:24-36 (W % dp, W % (tp x pp), tp x pp x dp == W; "
           "expert_parallel_size unknown to its config, refused: config/config.py:375 strict); v0.4 "
           "src/nanotron/parallel/context.py:25-36 (tp x pp x ep), config/config.py:377 strict (context_parallel_size "
           "refused); main 2411b022 (still 0.4) context.py:26-28 and 62-81")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    tune = plan.framework == "torchtune"
    if tune:
        from batchlint.frameworks.torchtune import traits  # a torchtune plan's: imported with it

        if traits(plan.document) & {"lora", "quantizer"}:
            return  # the released LoRA and QAT recipes read no *_parallel_dim
    for short, fact in plan.parallel.items():
        value = fact.number
        if value is None or fact.span is None or (tune and short != "tp"):
            continue
        if short == "dp_shard" and (value == -1 or value >= 1):
            continue
        if short != "dp_shard" and value >= 1:
            continue
        allowed = "-1 (the ranks left over) or 1 or more" if short == "dp_shard" else "1 or more"
        yield Finding(
            span=fact.span,
            message=f"{fact.key} is {value}; it must be {allowed}",
            notes=(f"{fact.key} is {value}; it must be {allowed}: the job refuses to start for any number of GPUs",),
            fix=f"set {fact.key} to {'-1' if short == 'dp_shard' else '1'}",
            premise=_premise(plan, short),
        )


def _premise(plan: TrainingPlan, short: str) -> str:
    if plan.framework == "torchtune":
        return TUNE_TP.name
    if plan.framework == "nanotron":
        return NANOTRON_DEGREES.name
    if plan.document.format == "python":
        return REGISTRY.name
    return EXPERT_DEGREES.name if short in ("ep", "etp") else DEGREES.name


RULE = Rule(
    code="BL211",
    name="parallel-degree-out-of-range",
    severity="error",
    summary="TorchTitan/torchtune/nanotron: a parallel degree below 1 (the shard degree may be -1)",
    check=check,
    frameworks=("torchtitan", "torchtune", "nanotron"),
    premises=(DEGREES, EXPERT_DEGREES, REGISTRY, TUNE_TP, NANOTRON_DEGREES),
    doc=__doc__,
    examples=(
        Example("titan_tp0.toml", """\
[training]
local_batch_size = 8

[parallelism]
tensor_parallel_degree = 0
""", flagged=(5,), severity="error",
                message="[parallelism] tensor_parallel_degree is 0; it must be 1 or more",
                fix="set [parallelism] tensor_parallel_degree to 1"),
        Example("titan_shard_minus_2.toml", """\
[training]
local_batch_size = 8

[parallelism]
data_parallel_shard_degree = -2
""", flagged=(5,),
                message="[parallelism] data_parallel_shard_degree is -2; it must be -1 (the ranks left over) or 1 or more",
                fix="set [parallelism] data_parallel_shard_degree to -1"),
        Example("titan_shard_minus_1.toml", """\
[training]
local_batch_size = 8

[parallelism]
data_parallel_shard_degree = -1
"""),
        Example("titan_ep0.toml", """\
[training]
local_batch_size = 8

[parallelism]
expert_parallel_degree = 0
""", flagged=(5,), severity="error",
                message="[parallelism] expert_parallel_degree is 0; it must be 1 or more",
                fix="set [parallelism] expert_parallel_degree to 1"),
        Example("titan_ep0_010.toml", """\
[training]
local_batch_size = 8

[parallelism]
expert_parallel_degree = 0
""", files=(("requirements.txt", """\
torchtitan==0.1.0
"""),)),
        Example("tune_tp0.yaml", """\
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
tensor_parallel_dim: 0
""", flagged=(6,), severity="error",
                message="tensor_parallel_dim is 0; it must be 1 or more",
                fix="set tensor_parallel_dim to 1"),
        Example("tune_tp1.yaml", """\
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
tensor_parallel_dim: 1
"""),
        Example("tune_tp0_050.yaml", """\
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
tensor_parallel_dim: 0
""", files=(("requirements.txt", """\
torchtune==0.5.0
"""),)),
        # context_parallel_dim is read on main only (ParallelDims); no release reads it.
        Example("tune_cp0.yaml", """\
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
context_parallel_dim: 0
"""),
        Example("nanotron_dp0.yaml", """\
parallelism:
  dp: 0
  pp: 1
  tp: 2
tokens:
  micro_batch_size: 2
  batch_accumulation_per_replica: 4
""", flagged=(2,), severity="error",
                message="parallelism.dp is 0; it must be 1 or more",
                fix="set parallelism.dp to 1"),
        Example("nanotron_dp_minus_1.yaml", """\
parallelism:
  dp: -1
  pp: 1
  tp: 2
tokens:
  micro_batch_size: 2
  batch_accumulation_per_replica: 4
""", flagged=(2,),
                message="parallelism.dp is -1; it must be 1 or more",
                fix="set parallelism.dp to 1"),
        Example("nanotron_dp1.yaml", """\
parallelism:
  dp: 1
  pp: 1
  tp: 2
tokens:
  micro_batch_size: 2
  batch_accumulation_per_replica: 4
"""),
    ),
)
