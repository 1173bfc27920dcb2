"""
## What it does
Checks that Megatron-LM's `--num-layers` splits evenly over the pipeline
stages, `--pipeline-model-parallel-size` (with one more layer counted for each
of `--account-for-embedding-in-pipeline-split` and
`--account-for-loss-in-pipeline-split`), and, with the interleaved schedule,
that each stage's layers split into `--num-layers-per-virtual-pipeline-stage`. A line that splits the layers
otherwise (`--decoder-first-pipeline-num-layers`,
`--decoder-last-pipeline-num-layers`, `--pipeline-model-parallel-layout`,
`--num-virtual-stages-per-pipeline-rank`, T5's encoder/decoder layers, a
standalone embedding stage) is not judged by that division. With an uneven
first and/or last stage alone (megatron-core 0.11.0 on), the layers left
must split evenly over the middle stages, and there must be layers left
exactly when middle stages are: megatron-core 0.16.0 refuses "Mismatch: N
middle layers remaining but 0 middle PP stages available"; 0.11.0 to 0.15.3
start and build only the uneven stages' layers (`--num-layers 20
--decoder-last-pipeline-num-layers 1` on one stage trains 1 layer).

## Why is this bad?
From megatron-core 0.10.0 `validate_args` asserts "Number of layers should be
divisible by the pipeline-model-parallel size" before anything is built.
(0.4.0 with the interleaved schedule, which also asserts "number of layers
per pipeline stage must be divisible number of layers per virtual pipeline
stage"). Before it, models built with megatron-core gave each stage
`num_layers // pp` layers and trained a smaller model than asked for, without a
word (30 layers on 4 stages: 28).

## Example
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --num-layers 30 ...
```

## Use instead
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --num-layers 32 ...
```
or give the first or last stage its own count (`--decoder-first-pipeline-num-layers`).

## Source
core_v0.9.0 megatron/training/arguments.py:279-280 (the check only with
`--num-layers-per-virtual-pipeline-stage`); core_v0.10.0 arguments.py:328-333
(first: always, unless an uneven first/last stage is given); core_v0.16.1
arguments.py:528-544 and :558-571 (still; `account_for_*` count from
core_v0.11.0). Uneven stages: core_v0.11.0
megatron/core/transformer/transformer_config.py:594-644 (the middle stages,
first); core_v0.16.0 :1405-1417 (the mismatch, first);
transformer_block.py `get_num_layers_to_build` (core_v0.14.0 :95-133). The floor before it: core_v0.9.0
megatron/core/transformer/transformer_block.py `get_num_layers_to_build` :84.
"""

from collections.abc import Iterator

from batchlint.frameworks.megatron import MegatronSettings
from batchlint.frameworks.releases import MEGATRON
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

ASSERTED = Premise(
    MEGATRON, name="Megatron-LM", since="0.10.0",
    source="core_v0.9.0 megatron/training/arguments.py:279-280 (only under interleaving); core_v0.10.0 "
           "megatron/training/arguments.py:328-333 (first); core_v0.16.1 arguments.py:528-544, 558-571 (still)")
# An uneven first/last stage (core_v0.11.0 on): the middle stages share what is left evenly, and from
# core_v0.16.0 layers are left exactly when middle stages are; before, the stages that exist were built alone.
UNEVEN_MIDDLE = Premise(
    MEGATRON, name="uneven middle", since="0.11.0", runs_since="0.11.0",
    source="core_v0.10.0 (no uneven stage flags in TransformerConfig); core_v0.11.0 megatron/core/transformer/"
           "transformer_config.py:594-644 (first); core_v0.16.1 transformer_config.py:1413-1418 (still)")
UNEVEN_MISMATCH = Premise(
    MEGATRON, name="uneven mismatch", since="0.16.0",
    source="core_v0.15.3 transformer_config.py (no such check); core_v0.16.0 transformer_config.py:1405-1410 "
           "(first); core_v0.16.1 :1406-1410 (still)")
UNEVEN_DROPPED = Premise(
    MEGATRON, name="uneven dropped", since="0.11.0", until="0.15.3", runs_since="0.11.0",
    source="core_v0.11.0 to core_v0.15.3 megatron/core/transformer/transformer_block.py get_num_layers_to_build "
           "(core_v0.14.0 :95-133): a first/last stage builds its own count, no stage the layers left")
# With --num-layers-per-virtual-pipeline-stage both divisions are asserted from e7a862a254 (2023-09-20) on.
INTERLEAVED = Premise(
    MEGATRON, name="interleaved", since="0.4.0",
    source="0.1.0 (tag 23.04) megatron/arguments.py checks only num_layers % layers-per-virtual-stage; core_v0.4.0 "
           "megatron/arguments.py:155-159 (first tag with both, from e7a862a254); core_v0.16.1 megatron/training/"
           "arguments.py:543-548 (still)")


def check(plan: TrainingPlan, megatron: MegatronSettings) -> Iterator[Finding]:
    layers, pp = megatron.num_layers, plan.parallel["pp"]
    count, stages = layers.count if layers is not None else None, pp.number
    if layers is None or count is None or stages is None or stages < 1:
        return
    if megatron.uneven_split in _FIRST_LAST:
        yield from _uneven(megatron, layers, pp, count, stages)
        return
    if stages == 1:
        return
    if megatron.uneven_split is not None:
        return  # the stages are sized otherwise, or validate_args does not divide
    extra = megatron.pipeline_split_extra
    counted = count + extra
    virtual = megatron.layers_per_virtual_stage
    premise = "interleaved" if virtual is not None else "Megatron-LM"
    if counted % stages == 0:
        size = virtual.count if virtual is not None else None
        if virtual is not None and size is not None and (counted // stages) % size:
            yield _virtual(layers, pp, virtual, counted // stages, stages, size)
        return
    per_stage = counted // stages
    shown = f"{layers.describe()}" + (f" + {extra} (embedding/loss counted in the split)" if extra else "")
    lower, upper = per_stage * stages - extra, (per_stage + 1) * stages - extra
    yield Finding(
        premise=premise,
        span=layers.span,
        message=f"{count} layers" + (f" + {extra} (embedding/loss)" if extra else "")
                + f" do not split over {stages} pipeline stages",
        notes=(f"{shown} over {pp.describe()} pipeline stages.",
               "Megatron-LM asserts \"Number of layers should be divisible by the pipeline-model-parallel size\" "
               "at start-up.",
               f"Before 0.10.0 a megatron-core model got {per_stage} layers per stage, "
               f"{per_stage * stages - extra} in all."),
        fix=f"set {layers.key} to a multiple of {stages}" + (f" minus {extra}" if extra else "")
            + f" ({' or '.join(str(v) for v in (lower, upper) if v > 0)}), or size the first or last stage with "
            f"--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers",
        related=(Related(f"{pp.key} = {pp.value}", pp.span),) if pp.span else (),
    )


_FIRST_LAST = ("--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers")


def _uneven(megatron: MegatronSettings, layers: Fact, pp: Fact, count: int, stages: int) -> Iterator[Finding]:
    """An uneven first and/or last stage (and nothing else sizing the stages): the layers left must
    divide over the middle stages, and there must be layers left exactly when middle stages are."""
    sized = [fact for fact in (megatron.first_stage_layers, megatron.last_stage_layers) if fact is not None]
    if any(fact.count is None for fact in sized) or megatron.layers_per_virtual_stage is not None:
        return
    if set(megatron.uneven_flags) - set(_FIRST_LAST) or megatron.pipeline_split_extra:
        return  # sized otherwise too, or refused with the embedding/loss counted (transformer_block.py)
    middle = stages - len(sized)
    left = count - sum(fact.count or 0 for fact in sized)
    shown = " - ".join([layers.describe()] + [fact.describe() for fact in sized])
    stages_shown = f"{pp.describe()} - {len(sized)} uneven stage{'s' if len(sized) > 1 else ''}"
    at = sized[-1]
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (layers, pp) if f.span)
    if middle > 0 and left > 0 and left % middle:
        yield Finding(
            premise="uneven middle", span=at.span or layers.span,
            message=f"{left} layers left for the {middle} middle pipeline stages do not split evenly",
            notes=(f"{shown} = {left} layers; {stages_shown} = {middle} middle stages.",
                   "Megatron-LM refuses it at start-up (\"number of layers at middle stage ... must be divisible "
                   "by the middle pipeline model parallel size\")."),
            fix=f"size the uneven stages so that the layers left are a multiple of {middle}",
            related=related)
    elif middle == 0 and left > 0:
        built = sized[-1].count if stages == 1 else sum(fact.count or 0 for fact in sized)
        for premise, message, said in (
                ("uneven mismatch", f"{left} layers are left for no middle pipeline stage",
                 "Megatron-LM refuses it at start-up (\"Mismatch: ... middle layers remaining but 0 middle PP stages "
                 "available\")."),
                ("uneven dropped", f"only {built} of the {count} layers are built: no middle stage takes the {left} left",
                 f"These Megatron-LM releases start and train {built} layer{'s' if built != 1 else ''}, while the "
                 f"parameter and FLOP counts report {count}.")):
            yield Finding(
                premise=premise, span=at.span or layers.span, message=message,
                notes=(f"{shown} = {left} layers; {stages_shown} = 0 middle stages.", said),
                fix=f"drop {at.key}" + (" (one pipeline stage has no uneven stage to size)" if stages == 1 else
                                        f", or raise {pp.key} to give the {left} layers middle stages"),
                related=related)


def _virtual(layers: Fact, pp: Fact, virtual: Fact, per_stage: int, stages: int, size: int) -> Finding:
    """The layers of a stage do not split into virtual stages of the size asked: releases before the check
    built per_stage // size chunks of that size, dropping the rest. `stages` and `size` are pp's and
    virtual's values."""
    chunks = per_stage // size
    return Finding(
        premise="interleaved",
        span=virtual.span,
        message=f"{per_stage} layers per pipeline stage do not split into virtual stages of {size}",
        notes=(f"{layers.describe()} / {pp.describe()} = {per_stage} layers per pipeline stage; "
               f"{virtual.describe()}.",
               "Megatron-LM asserts \"number of layers per pipeline stage must be divisible number of layers per "
               "virtual pipeline stage\" at start-up.",
               f"Before the check, {chunks} chunks of {size} were built per stage, {chunks * size * stages} layers "
               "in all."),
        fix=f"set {virtual.key} to a divisor of {per_stage}, or {layers.key} to a multiple of {stages * size}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (layers, pp) if f.span),
    )


_LAYERS_30 = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 30
"""


_UNEVEN_PP1 = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 1 --micro-batch-size 2 \\
    --global-batch-size 128 --num-layers 20 --decoder-last-pipeline-num-layers 1
"""


RULE = Rule(
    code="BL191",
    name="megatron-layers-pipeline-indivisible",
    severity="error",
    summary="Megatron-LM: a layer count the pipeline stages cannot share evenly",
    check=check,
    subject=MegatronSettings,
    needs=("parallel.pp",),
    premises=(ASSERTED, INTERLEAVED, UNEVEN_MIDDLE, UNEVEN_MISMATCH, UNEVEN_DROPPED),
    doc=__doc__,
    examples=(
        Example("layers_30.sh", _LAYERS_30, flagged=(3,),
                files=(('requirements.txt', 'megatron-core==0.12.0\n'),), severity="error",
                message="30 layers do not split over 4 pipeline stages",
                fix="set --num-layers to a multiple of 4 (28 or 32), or size the first or last stage with "
                    "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers"),
        Example("layers_32.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 32
""", files=(('requirements.txt', 'megatron-core==0.12.0\n'),)),
        # Unpinned: 0.9.0 and before ran it with 28 layers.
        Example("layers_30_unpinned.sh", _LAYERS_30, flagged=(3,), severity="info",
                message="30 layers do not split over 4 pipeline stages",
                fix="set --num-layers to a multiple of 4 (28 or 32), or size the first or last stage with "
                    "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers"),
        # 30 + embedding + loss = 32 splits over 4.
        Example("layers_30_accounted.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 30 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split
""", files=(('requirements.txt', 'megatron-core==0.12.0\n'),)),
        # 80 / 16 = 5 layers per stage, in virtual stages of 2: 64 layers built before the check.
        Example("virtual_2.sh", """\
#!/bin/bash
torchrun --nproc_per_node 16 pretrain_gpt.py --pipeline-model-parallel-size 16 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 80 --num-layers-per-virtual-pipeline-stage 2
""", flagged=(3,), files=(('requirements.txt', 'megatron-core==0.12.0\n'),), severity="error",
                message="5 layers per pipeline stage do not split into virtual stages of 2",
                fix="set --num-layers-per-virtual-pipeline-stage to a divisor of 5, or --num-layers to a multiple of "
                    "32"),
        Example("virtual_5.sh", """\
#!/bin/bash
torchrun --nproc_per_node 16 pretrain_gpt.py --pipeline-model-parallel-size 16 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 80 --num-layers-per-virtual-pipeline-stage 5
""", files=(('requirements.txt', 'megatron-core==0.12.0\n'),)),
        Example("layers_30_uneven.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 30 --decoder-last-pipeline-num-layers 6
""", files=(('requirements.txt', 'megatron-core==0.12.0\n'),)),
        # An uneven last stage on one pipeline stage (NVIDIA/Megatron-LM#1778): 0.14.0 builds 1 layer of 20.
        Example("uneven_pp1_old.sh", _UNEVEN_PP1, flagged=(3,), files=(('requirements.txt', 'megatron-core==0.14.0\n'),),
                severity="error", message="only 1 of the 20 layers are built: no middle stage takes the 19 left",
                fix="drop --decoder-last-pipeline-num-layers (one pipeline stage has no uneven stage to size)"),
        Example("uneven_pp1.sh", _UNEVEN_PP1, flagged=(3,), files=(('requirements.txt', 'megatron-core==0.16.0\n'),),
                severity="error", message="19 layers are left for no middle pipeline stage",
                fix="drop --decoder-last-pipeline-num-layers (one pipeline stage has no uneven stage to size)"),
        # 30 - 5 - 6 = 19 layers over 4 - 2 = 2 middle stages.
        Example("uneven_middle.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 30 --decoder-first-pipeline-num-layers 5 --decoder-last-pipeline-num-layers 6
""", flagged=(3,), files=(('requirements.txt', 'megatron-core==0.12.0\n'),), severity="error",
                message="19 layers left for the 2 middle pipeline stages do not split evenly",
                fix="size the uneven stages so that the layers left are a multiple of 2"),
        Example("uneven_middle_even.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 30 --decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6
""", files=(('requirements.txt', 'megatron-core==0.12.0\n'),)),
        # MindSpeed-LLM (a Megatron fork) splits by its list, whose length it checks instead.
        Example("layers_30_mindspeed_list.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 --micro-batch-size 1 \\
    --global-batch-size 64 --num-layers 30 --num-layer-list 8,8,7,7
""", files=(('requirements.txt', 'megatron-core==0.12.0\n'),)),
    ),
)
