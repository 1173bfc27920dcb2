"""
## What it does
Flags a NeMo 1 Megatron config (one with `model.global_batch_size`) that sets
`trainer.accumulate_grad_batches` above 1.

## Why is this bad?
NeMo's Megatron models accumulate gradients themselves: the number of
micro-batches per step is derived from `model.global_batch_size` /
(`micro_batch_size` x dp). Lightning's own accumulation on top would multiply
the batch again, so the GPT, BERT and T5/BART models raise "Gradient
accumulation is done within training_step. trainer.accumulate_grad_batches
must equal 1" at start-up. It holds whatever the GPU count.

## Example
```yaml
trainer:
  devices: 8
  accumulate_grad_batches: 4
model:
  micro_batch_size: 4
  global_batch_size: 32
```

## Use instead
```yaml
trainer:
  devices: 8
  accumulate_grad_batches: 1
model:
  micro_batch_size: 4
  global_batch_size: 128   # 4 x dp 8 x 4 micro-batches
```

NeMo 1.7.0 to 2.5.0 refuse it (GPT from 1.7.0, T5/BART from 1.8.0, BERT from
1.14.0, each when its config gained model.global_batch_size); 2.5.1 removed
NeMo 1's Megatron models. Judged by the NeMo release the project pins: without
one, no finding.

## Source
NeMo 2.5.0: nemo/collections/nlp/models/language_modeling/
megatron_gpt_model.py:1959-1961 (`_validate_trainer`), megatron_bert_model.py:221-223,
megatron_lm_encoder_decoder_model.py:1775-1777. First: v1.7.0
megatron_gpt_model.py:1277-1279 (v1.6.2 derives the global batch from W and
lets Lightning accumulate).
"""

from collections.abc import Iterator

from batchlint.frameworks.nemo import NemoSettings
from batchlint.frameworks.releases import NEMO
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    NEMO, since="1.7.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0

    source="v1.6.2 megatron_gpt_model.py:298 (no check: global batch = W x micro_batch_size / tp, Lightning "
           "accumulates); v1.7.0 nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py:1277-1279 "
           "(first); 2.5.0 megatron_gpt_model.py:1959-1961, megatron_bert_model.py:221-223, "
           "megatron_lm_encoder_decoder_model.py:1775-1777 (last); 2.5.1 has no nemo/collections/nlp/models")


def check(plan: TrainingPlan, nemo: NemoSettings) -> Iterator[Finding]:
    node = nemo.accumulate_grad_batches
    value = node.number if node is not None else None
    if node is None or value is None or value <= 1:
        return
    declared = plan.declared_global_batch
    if declared is not None and declared.number is not None:
        fix = (
            f"set trainer.accumulate_grad_batches to 1 and {declared.key} to {declared.number * value} "
            f"to keep {value}x the batch: NeMo derives the accumulation from it"
        )
        related = (Related(f"{declared.key} = {declared.value}", declared.span),) if declared.span else ()
    else:
        fix = "set trainer.accumulate_grad_batches to 1 and raise model.global_batch_size instead"
        related = ()
    yield Finding(
        span=node.span,
        message=f"trainer.accumulate_grad_batches is {value}; NeMo's Megatron models need 1",
        notes=("NeMo's Megatron models accumulate inside training_step from model.global_batch_size and "
               "refuse to start unless trainer.accumulate_grad_batches is 1",),
        fix=fix,
        related=related,
    )


RULE = Rule(
    code="BL144",
    name="nemo-accumulate-grad-batches",
    severity="error",
    summary="NeMo: trainer.accumulate_grad_batches > 1 with a Megatron model",
    check=check,
    subject=NemoSettings,
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        Example("gpt_accumulate.yaml", """\
name: megatron_gpt
trainer:
  devices: 8
  num_nodes: 1
  accumulate_grad_batches: 4
model:
  micro_batch_size: 4
  global_batch_size: 32
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
""", flagged=(5,),
                message="trainer.accumulate_grad_batches is 4; NeMo's Megatron models need 1",
                fix="set trainer.accumulate_grad_batches to 1 and model.global_batch_size to 128 to keep 4x the "
                    "batch: NeMo derives the accumulation from it",
                files=(("requirements.txt", "nemo_toolkit[nlp]==1.23.0\n"),),
                severity="error"),
        # No NeMo release pinned: 1.6 has no such check, and 2.5.1 removed NeMo 1's Megatron models.
        Example("gpt_accumulate_unpinned.yaml", """\
name: megatron_gpt
trainer:
  devices: 8
  num_nodes: 1
  accumulate_grad_batches: 4
model:
  micro_batch_size: 4
  global_batch_size: 32
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
""", flagged=(5,),
                message="trainer.accumulate_grad_batches is 4; NeMo's Megatron models need 1",
                fix="set trainer.accumulate_grad_batches to 1 and model.global_batch_size to 128 to keep 4x the "
                    "batch: NeMo derives the accumulation from it",
                severity="info"),  # NeMo before the check can run it too
        Example("gpt_accumulate_1_6.yaml", """\
name: megatron_gpt
trainer:
  devices: 8
  num_nodes: 1
  accumulate_grad_batches: 4
model:
  micro_batch_size: 4
  global_batch_size: 32
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
""", files=(("requirements.txt", "nemo_toolkit==1.6.2\n"),)),
        Example("gpt_accumulate_2_5_1.yaml", """\
name: megatron_gpt
trainer:
  devices: 8
  num_nodes: 1
  accumulate_grad_batches: 4
model:
  micro_batch_size: 4
  global_batch_size: 32
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
""", files=(("requirements.txt", "nemo_toolkit==2.5.1\n"),)),
        Example("gpt_global.yaml", """\
name: megatron_gpt
trainer:
  devices: 8
  num_nodes: 1
  accumulate_grad_batches: 1
model:
  micro_batch_size: 4
  global_batch_size: 128
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
"""),
        # Legacy RETRO has no global batch and accumulates with Lightning.
        Example("retro_legacy.yaml", """\
trainer:
  devices: 2
  accumulate_grad_batches: 4
model:
  micro_batch_size: 4
  tensor_model_parallel_size: 1
"""),
    ),
)
