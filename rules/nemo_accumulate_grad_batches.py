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

## Source
NeMo @ 8cfedd7: nemo/collections/nlp/models/language_modeling/
megatron_gpt_model.py:336 and 1955-1962 (`_validate_trainer`),
megatron_bert_model.py:99 and 217-224, megatron_lm_encoder_decoder_model.py:109-110
and 1771-1778.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    node = plan.settings.accumulate_grad_batches
    if node is None or not node.known or node.value <= 1:
        return
    value = node.value
    declared = plan.declared_global_batch
    if declared is not None and declared.known:
        fix = (
            f"set trainer.accumulate_grad_batches to 1 and {declared.key} to {declared.value * value} "
            f"to keep {value}x the batch: NeMo derives the accumulation from it"
        )
        related = (Related(f"{declared.key} = {declared.value}", declared.span),) if declared.span else ()
    else:
        fix = "set trainer.accumulate_grad_batches to 1 and raise model.global_batch_size instead"
        related = ()
    yield Finding(
        span=node.span,
        message=(
            f"trainer.accumulate_grad_batches is {value}: NeMo's Megatron models accumulate inside training_step "
            f"from model.global_batch_size and refuse to start unless it is 1"
        ),
        fix=fix,
        related=related,
    )


_CONFIG = """\
name: megatron_gpt
trainer:
  devices: 8
  num_nodes: 1
  accumulate_grad_batches: {accumulate}
model:
  micro_batch_size: 4
  global_batch_size: {global_}
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
"""

RULE = Rule(
    code="BL144",
    name="nemo-accumulate-grad-batches",
    severity="error",
    summary="NeMo: trainer.accumulate_grad_batches > 1 with a Megatron model",
    check=check,
    needs=("settings.accumulate_grad_batches",),
    doc=__doc__,
    examples=(
        Example("gpt_accumulate.yaml", _CONFIG.format(accumulate=4, global_=32), flagged=(5,)),
        Example("gpt_global.yaml", _CONFIG.format(accumulate=1, global_=128)),
        # Legacy RETRO has no global batch and accumulates with Lightning.
        Example(
            "retro_legacy.yaml",
            "trainer:\n  devices: 2\n  accumulate_grad_batches: 4\nmodel:\n  micro_batch_size: 4\n"
            "  tensor_model_parallel_size: 1\n",
        ),
    ),
)
