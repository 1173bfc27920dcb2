"""
## What it does
Flags a parallel degree below 1 in TorchTitan, torchtune and nanotron configs.
Only TorchTitan's and torchtune's data-parallel shard degree may be -1 ("the
ranks left over"); every other degree (replicate, tensor, pipeline, context,
expert, expert-tensor; nanotron's dp too) must be 1 or more.

## Why is this bad?
Both frameworks' `ParallelDims` assert "Parallelism degree should be >= 1,
except for dp_shard" and "dp_shard must -1 or >=1" before they build the
device mesh; nanotron's `ParallelContext` asserts that tp x pp x cp x dp
equals the world size, which no degree below 1 can give: the job dies at
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
torchtitan/distributed/parallel_dims.py:45-48 @ v0.2.2;
torchtune/training/_distributed.py:79-82 @ bd2a0fc (`ParallelDims._validate`,
used by full_finetune_distributed, lora_finetune_distributed and qat_distributed);
huggingface/nanotron src/nanotron/parallel/context.py:26-28 @ 2411b022.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    for short, fact in plan.parallel.items():
        if fact is None or not fact.known or fact.span is None:
            continue
        if short == "dp_shard" and (fact.value == -1 or fact.value >= 1):
            continue
        if short != "dp_shard" and fact.value >= 1:
            continue
        allowed = "-1 (the ranks left over) or 1 or more" if short == "dp_shard" else "1 or more"
        yield Finding(
            span=fact.span,
            message=f"{fact.key} is {fact.value}; it must be {allowed}: the job refuses to start for any number of GPUs",
            fix=f"set {fact.key} to {'-1' if short == 'dp_shard' else '1'}",
        )


_TUNE = """\
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
context_parallel_dim: {cp}
"""

_NANOTRON = """\
parallelism:
  dp: {dp}
  pp: 1
  tp: 2
tokens:
  micro_batch_size: 2
  batch_accumulation_per_replica: 4
"""

RULE = Rule(
    code="BL211",
    name="parallel-degree-out-of-range",
    severity="error",
    summary="TorchTitan/torchtune/nanotron: a parallel degree below 1 (the shard degree may be -1)",
    check=check,
    frameworks=("torchtitan", "torchtune", "nanotron"),
    doc=__doc__,
    examples=(
        Example("titan_tp0.toml", "[training]\nlocal_batch_size = 8\n\n[parallelism]\ntensor_parallel_degree = 0\n", flagged=(5,)),
        Example("titan_shard_minus_2.toml", "[training]\nlocal_batch_size = 8\n\n[parallelism]\ndata_parallel_shard_degree = -2\n",
                flagged=(5,)),
        Example("titan_shard_minus_1.toml", "[training]\nlocal_batch_size = 8\n\n[parallelism]\ndata_parallel_shard_degree = -1\n"),
        Example(
            "tune_cp0.yaml",
            _TUNE.format(cp=0),
            flagged=(6,),
        ),
        Example(
            "tune_cp1.yaml",
            _TUNE.format(cp=1),
        ),
        Example("nanotron_dp0.yaml", _NANOTRON.format(dp=0), flagged=(2,)),
        Example("nanotron_dp_minus_1.yaml", _NANOTRON.format(dp=-1), flagged=(2,)),
        Example("nanotron_dp1.yaml", _NANOTRON.format(dp=1)),
    ),
)
