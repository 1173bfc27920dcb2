"""
## What it does
Checks that TorchTitan's `tensor_parallel_degree` splits the attention heads
of the model flavor a TOML config trains (`[model] name`, `flavor`): the
degree must divide both the flavor's attention heads and its key/value heads.
The flavors known are llama3's (`debugmodel`: 16 heads; `8B`: 32 heads, 8
key/value heads; `70B`: 64 and 8; `405B`: 128 and 8).

## Why is this bad?
TorchTitan shards the attention's `wq`, `wk` and `wv` column-wise over the
tensor-parallel ranks, and each rank views its share as whole heads. Eight
key/value heads of 128 features cannot be split over 16 ranks: the first
forward pass fails with "shape '[1, 8192, -1, 128]' is invalid for input of
size 524288", after the job got its GPUs and loaded the model.

## Example
```toml
[model]
name = "llama3"
flavor = "8B"

[parallelism]
tensor_parallel_degree = 16
```

## Use instead
```toml
[model]
name = "llama3"
flavor = "8B"

[parallelism]
tensor_parallel_degree = 8
data_parallel_shard_degree = -1
```

## Source
The flavors: torchtitan/models/llama/__init__.py:29-56 @ 9a2f5784c (main,
2025-03), torchtitan/models/llama3/__init__.py:29-62 @ v0.1.0, :29-95 @ v0.2.2.
The sharding: models/llama/parallelize_llama.py:187-189 @ 9a2f5784c,
models/llama3/infra/parallelize.py:229-231 @ v0.2.2 (`colwise_parallel` of
wq/wk/wv); the view: models/llama/model.py:197 @ 9a2f5784c,
models/llama3/model/model.py:253-256 @ v0.2.2.
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import TitanSettings, model_premises, model_window
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule, splitting_degrees

PREMISES = model_premises({
    "0.0.2": "torchtitan/models/llama/parallelize_llama.py:187-189, model.py:197 @ 9a2f5784c",
    "0.1.0": "torchtitan/models/llama3/infra/parallelize.py (colwise wq/wk/wv), llama3/model/model.py (view)",
    "0.2.0": "torchtitan/models/llama3/infra/parallelize.py (colwise wq/wk/wv), llama3/model/model.py (view)",
    "0.2.1": "torchtitan/models/llama3/infra/parallelize.py (colwise wq/wk/wv), llama3/model/model.py (view)",
    "0.2.2": "torchtitan/models/llama3/infra/parallelize.py:229-231, llama3/model/model.py:253-256",
})


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    tp = plan.parallel["tp"]
    degree = tp.count
    heads = titan.model_support.heads_of(titan.flavor.value)
    if degree is None or degree <= 1 or tp.span is None or heads is None:
        return
    n_heads, kv_heads = heads
    split = [(count, what) for count, what in ((kv_heads, "key/value heads"), (n_heads, "attention heads"))
             if count % degree]
    if not split:
        return
    count, what = split[0]
    fits = splitting_degrees((kv_heads, n_heads), degree)
    flavor = titan.flavor
    yield Finding(
        premise=model_window(titan.model_support),
        span=tp.span,
        message=f"tensor parallel degree {degree} does not split the {count} {what} of {titan.model.value} "
                f"{flavor.value}",
        notes=(f"{titan.model.value} {flavor.value} has {n_heads} attention heads and {kv_heads} key/value heads; "
               f"TorchTitan shards wq, wk and wv over the {degree} tensor-parallel ranks as whole heads",
               "the first forward pass fails (the attention's view of the heads: \"shape ... is invalid for input "
               "of size ...\")"),
        fix=f"set {tp.key} to {' or '.join(map(str, fits)) if fits else 1} and give the other GPUs to "
            "data parallelism (data_parallel_shard_degree = -1)",
        related=(Related(f"{flavor.key} = {flavor.value}", flavor.span),) if flavor.span else (),
    )


RULE = Rule(
    code="BL217",
    name="torchtitan-heads-tensor-parallel",
    severity="error",
    summary="TorchTitan: a tensor-parallel degree that does not split the model flavor's attention heads",
    check=check,
    subject=TitanSettings,
    needs=("parallel.tp",),
    premises=PREMISES,
    doc=__doc__,
    examples=(
        Example("llama3_8b_tp16.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = 1
tensor_parallel_degree = 16
""", flagged=(11,), message="tensor parallel degree 16 does not split the 8 key/value heads of llama3 8B",
                fix="set [parallelism] tensor_parallel_degree to 8 or 4 or 2 and give the other GPUs to data "
                    "parallelism (data_parallel_shard_degree = -1)"),
        Example("llama3_8b_tp8.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = 2
tensor_parallel_degree = 8
"""),
        # A flavor batchlint does not know: its heads are not judged.
        Example("llama3_custom_tp16.toml", """\
[model]
name = "llama3"
flavor = "my_8B_wide"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = 1
tensor_parallel_degree = 16
"""),
    ),
)
