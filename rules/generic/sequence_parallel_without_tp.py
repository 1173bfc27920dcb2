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
    flag, tp = plan.sequence_parallel, plan.parallel["tp"]
    if flag is None or flag.value is not True or tp.number != 1:
        return
    related = (Related(f"{tp.key} = 1", tp.span),) if tp.span else ()
    yield Finding(
        span=flag.span,
        message=f"{flag.key} does nothing at {tp.key} = 1{' (its default)' if tp.origin is Origin.DEFAULT else ''}",
        notes=("sequence parallelism splits activations across the tensor-parallel group, which has one GPU here",
               f"{plan.sequence_parallel_off or 'it is turned off at start-up'}"),
        fix=f"drop {flag.key}, or raise {tp.key} above 1 if the layout was meant to be tensor-parallel",
        severity="info",
        related=related,
    )


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
        Example("megatron_sp_tp1.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --tensor-model-parallel-size 1 \\
    --micro-batch-size 1 \\
    --global-batch-size 64 \\
    --sequence-parallel
""", flagged=(6,),
                message="--sequence-parallel does nothing at --tensor-model-parallel-size = 1",
                fix="drop --sequence-parallel, or raise --tensor-model-parallel-size above 1 if the layout was "
                    "meant to be tensor-parallel"),
        Example("megatron_sp_tp2.sh", """\
#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --tensor-model-parallel-size 2 \\
    --micro-batch-size 1 \\
    --global-batch-size 64 \\
    --sequence-parallel
"""),
        # NeMo 1's Megatron YAML: 1.11.0 (model.sequence_parallel) to 2.5.0, the last that runs it.
        Example("nemo_sp_tp1.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  sequence_parallel: true
""", flagged=(8,),
                severity="info",
                message="model.sequence_parallel does nothing at model.tensor_model_parallel_size = 1",
                fix="drop model.sequence_parallel, or raise model.tensor_model_parallel_size above 1 if the "
                    "layout was meant to be tensor-parallel"),
        Example("nemo_sp_tp1_2_4_0.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  sequence_parallel: true
""", flagged=(8,),
                files=(("requirements.txt", "nemo-toolkit==2.4.0\n"),),
                severity="info",
                message="model.sequence_parallel does nothing at model.tensor_model_parallel_size = 1",
                fix="drop model.sequence_parallel, or raise model.tensor_model_parallel_size above 1 if the "
                    "layout was meant to be tensor-parallel"),
        Example("nemo_sp_tp1_1_10_0.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  sequence_parallel: true
""", files=(("requirements.txt", "nemo-toolkit==1.10.0\n"),)),
        Example("nemo_sp_tp2.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 2
  sequence_parallel: true
"""),
        Example("nemo_no_sp_tp1.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  sequence_parallel: false
"""),
        Example("nemo_sp_tp_interpolated.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: ${oc.env:TP}
  sequence_parallel: true
"""),  # unknown: silent
        Example("swift_megatron_sp_default_tp.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 1
global_batch_size: 16
sequence_parallel: true
""", flagged=(5,),
                severity="info",
                message="sequence_parallel does nothing at tensor_model_parallel_size = 1 (its default)",
                fix="drop sequence_parallel, or raise tensor_model_parallel_size above 1 if the layout was "
                    "meant to be tensor-parallel"),
        Example("swift_megatron_sp_default_tp_3_2_1.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 1
global_batch_size: 16
sequence_parallel: true
""", files=(("requirements.txt", "ms-swift==3.2.1\n"),)),
        Example("swift_megatron_sp_tp2.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 1
global_batch_size: 16
tensor_model_parallel_size: 2
sequence_parallel: true
"""),
        Example("swift_ray_sp_train_tp2.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 1
global_batch_size: 16
sequence_parallel: true
train:
  gpus: 4
  tensor_model_parallel_size: 2
"""),
    ),
)
