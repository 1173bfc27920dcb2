"""
## What it does
Flags Megatron-style sequence parallelism (Megatron's `--sequence-parallel`,
NeMo's `model.sequence_parallel`, ms-swift Megatron's `sequence_parallel`)
switched on with a tensor-parallel size of 1 (written, or the default).

## Why is this bad?
Megatron's sequence parallelism splits the layer-norm and dropout activations
across the tensor-parallel group; with tp = 1 there is no group, and the flag
is turned off at start-up: Megatron-LM with a warning (silently before core
0.10.0), NeMo with an info-level log line, ms-swift without a word. Nothing is lost
at tp = 1 (there is nothing to split), so this is an info: the flag says the config
was written for a tensor-parallel layout it does not have (ms-swift ships 27 scripts
like this), and it does nothing.

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
Megatron-LM megatron/arguments.py:340-341 @ 0.1.0 (9cdc714939: turned off without a
word) to megatron/training/arguments.py:907-913 @ core_v0.16.1 (`warnings.warn` from
core_v0.10.0, `warn_rank_0` from core_v0.14.0: "Disabling sequence parallelism because
tensor model parallelism is disabled"); NeMo megatron_base_model.py:342-347 @ v1.11.0,
the release that brought model.sequence_parallel, to :1019-1025 @ 2.5.0 (`logging.info`;
its Megatron YAML is gone from 2.5.1); ms-swift from 3.2.2 (its Megatron schema): 3.x
through Megatron-LM's validate_args, 4.x swift/megatron/arguments/megatron_args.py
(:660-661 @ v4.0.0, :943-944 @ 4.6.0; no log).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MS_SWIFT, NEMO
from batchlint.plan import Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# Megatron-LM turns it off in every release (0.1.0 megatron/arguments.py:340-341 to core_v0.16.1
# megatron/training/arguments.py:907-913): not gated.
NEMO_OFF = Premise(
    NEMO, name="NeMo", since="1.11.0", runs_since="1.11.0", until="2.5.0", runs_until="2.5.0", frameworks=("nemo",),
    source="v1.10.0 reads no model.sequence_parallel; v1.11.0 nemo/collections/nlp/models/language_modeling/"
           "megatron_base_model.py:342-347 (first); 2.5.0 megatron_base_model.py:1019-1025 (last); 2.5.1 has no "
           "nemo/collections/nlp/models")
SWIFT_MEGATRON_OFF = Premise(
    MS_SWIFT, name="ms-swift Megatron", since="3.2.2", runs_since="3.2.2", frameworks=("swift-megatron",),
    source="v3.2.1 has no swift/megatron; v3.2.2 swift/megatron/train/sft.py:75 (first: Megatron-LM's validate_args "
           "turns it off); v4.0.0 swift/megatron/arguments/megatron_args.py:660-661; 4.6.0 megatron_args.py:943-944 "
           "(still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    flag, tp = plan.sequence_parallel, plan.parallel.get("tp")
    if flag is None or flag.value is not True or tp is None or not tp.known or tp.value != 1:
        return
    related = (Related(f"{tp.key} = 1", tp.span),) if tp.span else ()
    yield Finding(
        span=flag.span,
        message=f"{flag.key} does nothing at {tp.key} = 1{' (its default)' if tp.origin is Origin.DEFAULT else ''}: "
                f"sequence parallelism splits activations across the tensor-parallel group, and "
                f"{plan.sequence_parallel_off or 'it is turned off at start-up'}",
        fix=f"drop {flag.key}, or raise {tp.key} above 1 if the layout was meant to be tensor-parallel",
        severity="info",
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
    severity="info",
    summary="Megatron sequence parallelism with tensor parallel size 1 (it does nothing; turned off at start-up)",
    check=check,
    needs=("sequence_parallel", "parallel.tp"),
    premises=(NEMO_OFF, SWIFT_MEGATRON_OFF),
    doc=__doc__,
    examples=(
        Example("megatron_sp_tp1.sh", _SCRIPT.format(tp=1), flagged=(6,)),
        Example("megatron_sp_tp2.sh", _SCRIPT.format(tp=2)),
        # NeMo 1's Megatron YAML: 1.11.0 (model.sequence_parallel) to 2.5.0, the last that runs it.
        Example("nemo_sp_tp1.yaml", _NEMO.format(tp=1, sp="true"), flagged=(8,), severity="info"),
        Example("nemo_sp_tp1_2_4_0.yaml", _NEMO.format(tp=1, sp="true"), flagged=(8,),
                files=(("requirements.txt", "nemo-toolkit==2.4.0\n"),), severity="info"),
        Example("nemo_sp_tp1_1_10_0.yaml", _NEMO.format(tp=1, sp="true"),
                files=(("requirements.txt", "nemo-toolkit==1.10.0\n"),)),
        Example("nemo_sp_tp2.yaml", _NEMO.format(tp=2, sp="true")),
        Example("nemo_no_sp_tp1.yaml", _NEMO.format(tp=1, sp="false")),
        Example("nemo_sp_tp_interpolated.yaml", _NEMO.format(tp="${oc.env:TP}", sp="true")),  # unknown: silent
        Example("swift_megatron_sp_default_tp.yaml", _SWIFT.format(tp=""), flagged=(5,), severity="info"),
        Example("swift_megatron_sp_default_tp_3_2_1.yaml", _SWIFT.format(tp=""),
                files=(("requirements.txt", "ms-swift==3.2.1\n"),)),
        Example("swift_megatron_sp_tp2.yaml", _SWIFT.format(tp="tensor_model_parallel_size: 2\n")),
        Example("swift_ray_sp_train_tp2.yaml", _SWIFT.format(tp="") + "train:\n  gpus: 4\n  tensor_model_parallel_size: 2\n"),
    ),
)
