"""
## What it does
Flags Megatron-style sequence parallelism (Megatron's `--sequence-parallel`,
NeMo's `model.sequence_parallel`, ms-swift Megatron's `sequence_parallel`)
switched on with a tensor-parallel size of 1 (written, or the default).

## Why is this bad?
Megatron's sequence parallelism splits the layer-norm and dropout activations
across the tensor-parallel group; with tp = 1 there is no group, and the flag
is turned off at start-up: Megatron-LM with a warning, NeMo with an info-level
log line, ms-swift without a word. The memory saving the config was written
for does not happen (ms-swift ships 27 scripts like this).

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
Megatron-LM megatron/training/arguments.py `validate_args` ("disable sequence
parallelism when tp=1": `warnings.warn`, `warn_rank_0` in newer versions,
"Disabling sequence parallelism because tensor model parallelism is disabled");
NeMo @ 8cfedd7 nemo/collections/nlp/models/language_modeling/megatron_base_model.py:1019-1025
(`logging.info`; NeMo 2: nemo/collections/llm/api.py:1363-1367, `warnings.warn`); ms-swift
@ 3602360 swift/megatron/arguments/megatron_args.py:891-892 (no log).
"""

from collections.abc import Iterator

from batchlint.plan import Origin, TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    flag, tp = plan.sequence_parallel, plan.parallel.get("tp")
    if flag is None or flag.value is not True or tp is None or not tp.known or tp.value != 1:
        return
    related = (Related(f"{tp.key} = 1", tp.span),) if tp.span else ()
    yield Finding(
        span=flag.span,
        message=f"{flag.key} needs tensor parallelism, but {tp.key} is 1{' (its default)' if tp.origin is Origin.DEFAULT else ''}: "
                f"{plan.sequence_parallel_off or 'it is turned off at start-up'}, "
                f"so the activation memory it was meant to save is not saved",
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

_NEMO = """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: {tp}
  sequence_parallel: {sp}
"""

_SWIFT = """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 1
global_batch_size: 16
{tp}sequence_parallel: true
"""

RULE = Rule(
    code="BL203",
    name="sequence-parallel-without-tp",
    severity="warning",
    summary="Megatron sequence parallelism with tensor parallel size 1 (turned off at start-up)",
    check=check,
    needs=("sequence_parallel", "parallel.tp"),
    doc=__doc__,
    examples=(
        Example("megatron_sp_tp1.sh", _SCRIPT.format(tp=1), flagged=(6,)),
        Example("megatron_sp_tp2.sh", _SCRIPT.format(tp=2)),
        Example("nemo_sp_tp1.yaml", _NEMO.format(tp=1, sp="true"), flagged=(8,)),
        Example("nemo_sp_tp2.yaml", _NEMO.format(tp=2, sp="true")),
        Example("nemo_no_sp_tp1.yaml", _NEMO.format(tp=1, sp="false")),
        Example("nemo_sp_tp_interpolated.yaml", _NEMO.format(tp="${oc.env:TP}", sp="true")),  # unknown: silent
        Example("swift_megatron_sp_default_tp.yaml", _SWIFT.format(tp=""), flagged=(5,)),
        Example("swift_megatron_sp_tp2.yaml", _SWIFT.format(tp="tensor_model_parallel_size: 2\n")),
        Example("swift_ray_sp_train_tp2.yaml", _SWIFT.format(tp="") + "train:\n  gpus: 4\n  tensor_model_parallel_size: 2\n"),
    ),
)
