"""
## What it does
Flags a sequence length that the parallel layout cannot split: TorchTitan's
`seq_len` must be a multiple of tp x 2 x cp, Megatron's and NeMo's of 2 x cp
under context parallelism, XTuner's `max_length` of the sequence-parallel size
with variable-length attention.

## Why is this bad?
Sequence and context parallelism cut every sequence into equal slices (two
per rank with load balancing); a length that does not divide fails an
assertion when the model is parallelised, after the job has its GPUs.

## Example
```toml
[training]
seq_len = 8100

[parallelism]
tensor_parallel_degree = 4
context_parallel_degree = 2   # seq_len must be a multiple of 4 x 2 x 2 = 16
```

## Use instead
```toml
[training]
seq_len = 8192
```

## Source
torchtitan/distributed/parallel_dims.py `seq_len_divisor`, asserted in each
model's parallelize.py; megatron/training/arguments.py (context parallel).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    seq, multiple = plan.seq_len, plan.seq_len_multiple
    if seq is None or multiple is None or not seq.known or not multiple.known or multiple.value <= 1:
        return
    if seq.value <= 0 or seq.value % multiple.value == 0:
        return
    lower = seq.value // multiple.value * multiple.value
    options = " or ".join(str(v) for v in (lower, lower + multiple.value) if v > 0)
    # A seq_len left at its default is reported where the divisor is written.
    related = (Related(multiple.detail or multiple.provenance, multiple.span),) if multiple.span and seq.span else ()
    yield Finding(
        span=seq.span or multiple.span,
        message=f"{seq.key} ({seq.value}) is not a multiple of {multiple.value}"
                f" ({multiple.detail or multiple.provenance}): the job refuses to start",
        fix=f"set {seq.key} to a multiple of {multiple.value} ({options})",
        related=related,
    )


_TITAN = """\
[model]
name = "llama3"

[training]
seq_len = {seq}

[parallelism]
tensor_parallel_degree = 4
context_parallel_degree = 2
"""

_MEGATRON = """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 2 --micro-batch-size 1 --seq-length {seq}
"""

RULE = Rule(
    code="BL401",
    name="seq-len-indivisible",
    severity="error",
    summary="a sequence length the sequence/context-parallel layout cannot split",
    check=check,
    needs=("seq_len", "seq_len_multiple"),
    doc=__doc__,
    examples=(
        Example("titan_8100.toml", _TITAN.format(seq=8100), flagged=(5,)),
        Example("titan_8192.toml", _TITAN.format(seq=8192)),
        Example("megatron_4095.sh", _MEGATRON.format(seq=4095), flagged=(2,)),
        Example("megatron_4096.sh", _MEGATRON.format(seq=4096)),
    ),
)
