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
model's parallelize.py (v0.2.0 models/llama3/infra/parallelize.py:63-64 to v0.2.2
:69-70; v0.1.0 checks nothing); 0.3.0 torchtitan/trainer.py:307-314 (tp only with
sequence parallelism, 2 x cp only with cp > 1). Megatron-LM megatron/training/arguments.py:393-396 @
core_v0.8.0 to :817-820 @ core_v0.16.1; core_v0.4.0 to 0.7.0 have no such check and
fail on the first batch instead (megatron/utils.py:236-243 @ core_v0.4.0, splitting
it into 2 x cp chunks). XTuner default_collate_fn (defalut_collate_fn.py:51-52 @
v0.1.16, default_collate_fn.py:54-55 @ v0.2.0; no sequence parallelism before 0.1.16).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MEGATRON, TORCHTITAN, XTUNER
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

TITAN_TOML = Premise(
    TORCHTITAN, name="TorchTitan", since="0.2.0", frameworks=("torchtitan",),
    source="v0.1.0 torchtitan/models/llama3/infra/parallelize.py checks no seq_len (nor 0.0.2); v0.2.0 torchtitan/models/llama3/"
           "infra/parallelize.py:63-64, distributed/parallel_dims.py:252 seq_len_divisor (first); v0.2.2 "
           "parallelize.py:69-70 (last to read TOML); 0.3.0 torchtitan/trainer.py:307-314 (still, config registries)")
TITAN_REGISTRY = Premise(
    TORCHTITAN, name="TorchTitan registries", since="0.3.0", runs_since="0.3.0", frameworks=("torchtitan",),
    source="v0.2.2 has no config registries (TOML only); 0.3.0 torchtitan/trainer.py:307-314 (first: "
           "(tp if enable_sequence_parallel) x (2 cp if cp > 1))")
MEGATRON_CP = Premise(
    MEGATRON, name="Megatron-LM", since="0.4.0", runs_since="0.4.0", frameworks=("megatron",),
    source="0.3.0 (b147dbecb6) megatron/arguments.py has no --context-parallel-size; core_v0.4.0 megatron/utils.py:"
           "236-243 (first: the first batch fails to split into 2 x cp chunks); core_v0.8.0 megatron/training/"
           "arguments.py:393-396 (asserted at start-up); core_v0.16.1 arguments.py:817-820 (still)")
XTUNER_SP = Premise(
    XTUNER, name="XTuner", since="0.1.16", runs_since="0.1.16", frameworks=("xtuner",),
    source="v0.1.15 has no sequence parallelism; v0.1.16 xtuner/dataset/collate_fns/defalut_collate_fn.py:51-52 "
           "(first); v0.2.0 xtuner/dataset/collate_fns/default_collate_fn.py:54-55 (still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    seq, multiple = plan.seq_len, plan.seq_len_multiple
    if seq is None or multiple is None:
        return
    length, divisor = seq.number, multiple.number
    if length is None or divisor is None or divisor <= 1 or length <= 0 or length % divisor == 0:
        return
    premise = ""
    if plan.framework == "torchtitan":
        premise = TITAN_REGISTRY.name if plan.document.format == "python" else TITAN_TOML.name
    lower = length // divisor * divisor
    options = " or ".join(str(v) for v in (lower, lower + divisor) if v > 0)
    # A seq_len left at its default is reported where the divisor is written.
    related = (Related(multiple.detail or multiple.provenance, multiple.span),) if multiple.span and seq.span else ()
    yield Finding(
        span=seq.span or multiple.span,
        message=f"{seq.key} {length} is not a multiple of {divisor}",
        notes=(f"{divisor} is {multiple.detail or multiple.provenance}", "the job refuses to start"),
        fix=f"set {seq.key} to a multiple of {divisor} ({options})",
        related=related,
        premise=premise,
    )


RULE = Rule(
    code="BL401",
    name="seq-len-indivisible",
    severity="error",
    summary="a sequence length the sequence/context-parallel layout cannot split",
    check=check,
    needs=("seq_len", "seq_len_multiple"),
    premises=(TITAN_TOML, TITAN_REGISTRY, MEGATRON_CP, XTUNER_SP),
    doc=__doc__,
    examples=(
        # No release pinned: 0.1.0 and before check no seq_len, so only an info.
        Example("titan_8100.toml", """\
[model]
name = "llama3"

[training]
seq_len = 8100

[parallelism]
tensor_parallel_degree = 4
context_parallel_degree = 2
""", flagged=(5,),
                severity="info",
                message="[training] seq_len 8100 is not a multiple of 16",
                fix="set [training] seq_len to a multiple of 16 (8096 or 8112)"),
        Example("titan_8100_0_2_2.toml", """\
[model]
name = "llama3"

[training]
seq_len = 8100

[parallelism]
tensor_parallel_degree = 4
context_parallel_degree = 2
""", flagged=(5,),
                files=(("requirements.txt", "torchtitan==0.2.2\n"),),
                severity="error",
                message="[training] seq_len 8100 is not a multiple of 16",
                fix="set [training] seq_len to a multiple of 16 (8096 or 8112)"),
        Example("titan_8100_0_1_0.toml", """\
[model]
name = "llama3"

[training]
seq_len = 8100

[parallelism]
tensor_parallel_degree = 4
context_parallel_degree = 2
""", files=(("requirements.txt", "torchtitan==0.1.0\n"),)),
        Example("titan_8192.toml", """\
[model]
name = "llama3"

[training]
seq_len = 8192

[parallelism]
tensor_parallel_degree = 4
context_parallel_degree = 2
"""),
        Example("megatron_4095.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 2 --micro-batch-size 1 --seq-length 4095
""", flagged=(2,),
                severity="error",
                message="--seq-length 4095 is not a multiple of 4",
                fix="set --seq-length to a multiple of 4 (4092 or 4096)"),
        # 0.3.0 has no context parallelism (the flag came in core 0.4.0).
        Example("megatron_4095_0_3_0.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 2 --micro-batch-size 1 --seq-length 4095
""", files=(("requirements.txt", "megatron-core==0.3.0\n"),)),
        Example("megatron_4096.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --context-parallel-size 2 --micro-batch-size 1 --seq-length 4096
"""),
    ),
)
