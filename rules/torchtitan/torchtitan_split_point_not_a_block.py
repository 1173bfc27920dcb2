"""
## What it does
With pipeline parallelism, checks that each of llama3's
`pipeline_parallel_split_points` names a whole transformer block,
`layers.N`, and that they come in increasing order.

## Why is this bad?
TorchTitan builds each stage from a copy of the model, keeping the blocks
from one split point (inclusive) to the next (exclusive), which it finds by
comparing every `layers.<name>` with them. A split point inside a block
(`layers.4.attention.wq`) matches no block: the first stage keeps every
block and the next one none, without an error, and the job trains with one
stage doing all the work. Split points out of order drop blocks the same way.

## Example
```toml
[experimental]
pipeline_parallel_degree = 2
pipeline_parallel_split_points = ["layers.4.attention.wq"]
```

## Use instead
```toml
[experimental]
pipeline_parallel_degree = 2
pipeline_parallel_split_points = ["layers.4"]
```

## Source
torchtitan/parallelisms/pipeline_llama.py:93-100 @ 9ccc1610f (main,
2024-10); torchtitan/models/llama3/infra/pipeline.py:111-119 @ v0.1.0
(`_build_stage`, the last release that reads the key: 0.2.0 replaced it with
`module_fqns_per_model_part`, and refuses it, BL510).
"""

import re
from collections.abc import Iterator

from batchlint.document import Scalar, Sequence
from batchlint.frameworks.releases import TORCHTITAN
from batchlint.frameworks.torchtitan import TitanSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

SPLIT = Premise(
    TORCHTITAN, until="0.1.0",
    source="0.0.2 (main) torchtitan/parallelisms/pipeline_llama.py:93-100 @ 9ccc1610f (first); v0.1.0 "
           "torchtitan/models/llama3/infra/pipeline.py:111-119 (last); v0.2.0 config/job_config.py has no such key")

_BLOCK = re.compile(r"layers\.(\d+)")


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    pp = plan.parallel["pp"]
    node = titan.split_points
    if not isinstance(node, Sequence) or pp.number is None or pp.number <= 1 or titan.model.value != "llama3":
        return
    last = None
    for item in node.items:
        if not isinstance(item, Scalar) or not isinstance(item.value, str):
            return  # not written as plain strings: not judged
        block = _BLOCK.fullmatch(item.value)
        if block is None:
            yield Finding(
                span=item.span,
                message=f"split point `{item.value}` names no whole block: the stage it starts gets no layers",
                notes=("TorchTitan keeps a stage's blocks by comparing each `layers.<name>` with the split points: "
                       "this one matches none, so the stage before it keeps every block after it and the stages "
                       "after it none, without an error",),
                fix="split at a block boundary: " + _block_of(item.value),
                related=(Related(f"{pp.key} = {pp.value}", pp.span),) if pp.span else (),
                premise="",
            )
            return
        index = int(block.group(1))
        if last is not None and index <= last[0]:
            yield Finding(
                span=item.span,
                message=f"split point `{item.value}` does not come after `layers.{last[0]}`",
                notes=("each stage keeps the blocks from its split point up to the next one: out of order, "
                       "a stage is built with no blocks",),
                fix="list the split points in increasing order of their blocks",
                related=(Related(f"`layers.{last[0]}` here", last[1]),),
                premise="",
            )
            return
        last = (index, item.span)


def _block_of(point: str) -> str:
    """`layers.4.attention.wq` -> `"layers.4"`; a name outside the blocks: the form to use."""
    found = re.match(r"(layers\.\d+)\.", point)
    return f'"{found.group(1)}"' if found else '"layers.N"'


RULE = Rule(
    code="BL218",
    name="torchtitan-split-point-not-a-block",
    severity="error",
    summary="TorchTitan: a pipeline split point that names no whole block (layers.N), which silently leaves a "
            "stage without layers",
    check=check,
    subject=TitanSettings,
    needs=("parallel.pp",),
    premises=(SPLIT,),
    doc=__doc__,
    examples=(
        # The layout of main in October 2024 (before 785c34c99 moved the degrees to [parallelism]).
        Example("split_inside_block.toml", """\
[model]
name = "llama3"
flavor = "debugmodel"

[training]
batch_size = 8

[experimental]
pipeline_parallel_degree = 2
pipeline_parallel_split_points = ["layers.4.attention.wq"]
""", flagged=(10,), files=(("requirements.txt", "torchtitan==0.0.2\n"),),
                message="split point `layers.4.attention.wq` names no whole block: the stage it starts gets no layers",
                fix='split at a block boundary: "layers.4"'),
        Example("split_at_block.toml", """\
[model]
name = "llama3"
flavor = "debugmodel"

[training]
batch_size = 8

[experimental]
pipeline_parallel_degree = 2
pipeline_parallel_split_points = ["layers.4"]
""", files=(("requirements.txt", "torchtitan==0.0.2\n"),)),
        Example("split_out_of_order.toml", """\
[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 8

[parallelism]
pipeline_parallel_degree = 3
pipeline_parallel_split_points = ["layers.16", "layers.8"]
""", flagged=(10,), files=(("requirements.txt", "torchtitan==0.1.0\n"),),
                message="split point `layers.8` does not come after `layers.16`",
                fix="list the split points in increasing order of their blocks"),
    ),
)
