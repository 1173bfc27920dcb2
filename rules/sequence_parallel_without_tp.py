"""
## What it does
Flags Megatron-style sequence parallelism (`--sequence-parallel`,
`sequence_parallel: true`) switched on with a tensor-parallel size of 1.

## Why is this bad?
Megatron's sequence parallelism splits the layer-norm and dropout activations
across the tensor-parallel group; with tp = 1 there is no group, and Megatron
turns the flag off at start-up with only a log line. The memory saving the
config was written for does not happen (ms-swift ships 27 scripts like this).

## Example
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --sequence-parallel ...
```

## Use instead
```bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --sequence-parallel ...
```
or drop `--sequence-parallel`.

## Source
megatron/training/arguments.py (validate_args: "if args.tensor_model_parallel_size == 1: ...
args.sequence_parallel = False").
"""

from batchlint.rule import Example, Finding, Related, Rule


def check(plan):
    flag, tp = plan.sequence_parallel, plan.parallel.get("tp")
    if flag is None or flag.value is not True or tp is None or not tp.known or tp.value != 1:
        return
    related = (Related(f"{tp.key} = 1", tp.span),) if tp.span else ()
    yield Finding(
        span=flag.span,
        message=f"{flag.key} needs tensor parallelism, but {tp.key} is 1: it is silently turned off at start-up",
        fix=f"raise {tp.key} above 1, or drop {flag.key}",
        severity="warning",
        related=related,
    )


_SCRIPT = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --tensor-model-parallel-size {tp} \\
    --micro-batch-size 1 \\
    --global-batch-size 64 \\
    --sequence-parallel
"""

RULE = Rule(
    code="BL203",
    name="sequence-parallel-without-tp",
    severity="warning",
    summary="Megatron sequence parallelism with tensor parallel size 1 (silently off)",
    check=check,
    doc=__doc__,
    examples=(
        Example("megatron_sp_tp1.sh", _SCRIPT.format(tp=1), flagged=(6,)),
        Example("megatron_sp_tp2.sh", _SCRIPT.format(tp=2)),
    ),
)
