"""
## What it does
Checks that Megatron-LM's tensor-parallel degree splits the attention heads:
`--num-attention-heads` must be a multiple of `--tensor-model-parallel-size`,
and with `--group-query-attention` so must `--num-query-groups` (from
megatron-core 0.16.0 a degree that is a multiple of the groups is taken too:
each group is then repeated over several ranks).

## Why is this bad?
Each tensor-parallel rank computes whole heads. Megatron-LM refuses any other
split while it builds the model's config, after the job got its GPUs:
"num_attention_heads (12) must be a multiple of tensor_model_parallel_size (8)".

## Example
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 --num-attention-heads 12 ...
```

## Use instead
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --num-attention-heads 12 ...
```

## Source
megatron/core/transformer/transformer_config.py:204-223 @ core_v0.4.0 (heads,
groups), :924-947 @ core_v0.16.0 (groups: "a multiple or divisor", first),
:1323-1345 @ core_v0.19.0 (still); before megatron-core, the legacy model's
`core.utils.divide(args.num_attention_heads, world_size)`
(megatron/model/transformer.py:228-229 @ 23.04), which asserts divisibility.
"""

from __future__ import annotations

from collections.abc import Iterator

from batchlint.frameworks.megatron import MegatronSettings
from batchlint.frameworks.releases import MEGATRON
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule, splitting_degrees

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

HEADS = Premise(
    MEGATRON, name="heads",
    source="23.04 megatron/model/transformer.py:228-229 (divide asserts); core_v0.4.0 megatron/core/transformer/"
           "transformer_config.py:204-208 (first in the config); core_v0.16.1 transformer_config.py:924-928 (still)")
GROUPS = Premise(
    MEGATRON, name="groups",
    source="core_v0.4.0 transformer_config.py:219-223 (a multiple); core_v0.16.0 :939-947 (a multiple or divisor); "
           "core_v0.16.1 :939-947 (still)")
GROUPS_MULTIPLE = Premise(
    MEGATRON, name="groups below the degree", until="0.15.3",
    source="core_v0.4.0 transformer_config.py:219-223 to core_v0.15.3 (groups a multiple of tp only); core_v0.16.0 "
           ":939-947 takes a degree that is a multiple of the groups")


def check(plan: TrainingPlan, megatron: MegatronSettings) -> Iterator[Finding]:
    tp = plan.parallel["tp"]
    degree = tp.count
    if degree is None or degree <= 1 or tp.span is None:
        return
    heads = megatron.attention_heads
    heads_count = _count(heads)
    if heads is not None and heads_count is not None and heads_count % degree:
        yield _finding(tp, heads, "attention heads", "HEADS", f"{heads.key} ({heads.value}) must be a multiple of "
                       f"tensor_model_parallel_size ({degree})", _divisors(heads_count, degree))
    groups = megatron.query_groups
    count = _count(groups)
    if groups is None or count is None or count % degree == 0:
        return
    refused = f"num_query_groups ({count}) must be a multiple of tensor_model_parallel_size ({degree})"
    if degree % count:
        yield _finding(tp, groups, "query groups", "GROUPS", refused + " (or, from megatron-core 0.16.0, a divisor)",
                       _divisors(count, degree))
    else:
        yield _finding(tp, groups, "query groups", "GROUPS_MULTIPLE", refused + " in releases before megatron-core "
                       "0.16.0, which repeats each group over several ranks", _divisors(count, degree))


def _count(fact: Optional[Fact]) -> Optional[int]:
    return fact.count if fact is not None and fact.count else None


def _divisors(count: int, degree: int) -> str:
    """The degrees below `degree` that split `count`, largest first (1 where none does)."""
    return " or ".join(map(str, splitting_degrees((count,), degree))) or "1"


def _finding(tp: Fact, heads: Fact, what: str, premise: str, refused: str, fits: str) -> Finding:
    return Finding(
        premise={"HEADS": HEADS, "GROUPS": GROUPS, "GROUPS_MULTIPLE": GROUPS_MULTIPLE}[premise].name,
        span=tp.span,
        message=f"tensor parallel degree {tp.value} does not split the {heads.value} {what}",
        notes=(f"each tensor-parallel rank computes whole heads: {heads.describe()} over {tp.describe()}",
               f"Megatron-LM refuses it while it builds the model's config (\"{refused}\")"),
        fix=f"set {tp.key} to {fits}, or change {heads.key}",
        related=(Related(f"{heads.key} = {heads.value}", heads.span),) if heads.span else (),
    )


RULE = Rule(
    code="BL216",
    name="megatron-heads-tensor-parallel",
    severity="error",
    summary="Megatron-LM: attention heads or query groups the tensor-parallel degree cannot split",
    check=check,
    subject=MegatronSettings,
    needs=("parallel.tp",),
    premises=(HEADS, GROUPS, GROUPS_MULTIPLE),
    doc=__doc__,
    examples=(
        Example("heads_12_tp8.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 24 --hidden-size 1536 --num-attention-heads 12
""", flagged=(2,),
                message="tensor parallel degree 8 does not split the 12 attention heads",
                fix="set --tensor-model-parallel-size to 6 or 4 or 3 or 2, or change --num-attention-heads"),
        Example("heads_12_tp4.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 24 --hidden-size 1536 --num-attention-heads 12
"""),
        Example("groups_6_tp4.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 24 --hidden-size 1536 --num-attention-heads 12 --group-query-attention --num-query-groups 6
""",
                flagged=(2,), message="tensor parallel degree 4 does not split the 6 query groups",
                fix="set --tensor-model-parallel-size to 3 or 2, or change --num-query-groups"),
        # tp 4 over 2 groups: each group on two ranks from megatron-core 0.16.0; refused before.
        Example("groups_2_tp4_old.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 24 --hidden-size 1536 --num-attention-heads 12 --group-query-attention --num-query-groups 2
""",
                flagged=(2,), files=(("requirements.txt", "megatron-core==0.12.0\n"),),
                message="tensor parallel degree 4 does not split the 2 query groups",
                fix="set --tensor-model-parallel-size to 2, or change --num-query-groups"),
        Example("groups_2_tp4.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 24 --hidden-size 1536 --num-attention-heads 12 --group-query-attention --num-query-groups 2
""",
                files=(("requirements.txt", "megatron-core==0.16.0\n"),)),
        # --num-query-groups without --group-query-attention is not read: every head is its own group.
        Example("groups_unread.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 24 --hidden-size 1536 --num-attention-heads 12 --num-query-groups 6
"""),
    ),
)
