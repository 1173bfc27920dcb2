"""
## What it does
Flags a LLaMA-Factory config whose data has no length but that sets no
`max_steps`: `streaming: true` (v0 configs, where `max_steps` defaults to -1)
or `batching_strategy: dynamic_batching` (v1 configs).

## Why is this bad?
A streamed dataset and dynamically sized batches give no number of steps
per epoch, so the schedule needs `max_steps`. LLaMA-Factory refuses to start
without it ("Please specify `max_steps` in streaming mode.",
"`dynamic_batching` requires `max_steps` because it is step-driven."): the
streaming check in every release, the v1 one from 0.9.5 (the first release
with batching strategies).

## Example
```yaml
streaming: true
num_train_epochs: 3.0
```

## Use instead
```yaml
streaming: true
max_steps: 10000
```

## Source
LLaMA-Factory v0.9.5: src/llamafactory/hparams/parser.py:356-357
(`get_train_args`, max_steps -1; the same since v0.7.1
src/llmtuner/hparams/parser.py:161-162); a max_steps of 0 then fails in
transformers 4.57 trainer.py `set_initial_training_values` ("args.max_steps
must be set to a positive value if dataloader does not have a length");
v1: src/llamafactory/v1/config/training_args.py:124-126 @ v0.9.5, the first
release with batching strategies (v1 of 0.9.4 has none).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import LLAMAFACTORY
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

STREAMING = Premise(
    LLAMAFACTORY, name="streaming", frameworks=("llamafactory",),
    source="v0.7.1 src/llmtuner/hparams/parser.py:161-162 (and in llmtuner since v0.1.4); v0.9.5 "
           "src/llamafactory/hparams/parser.py:356-357 (still)")
DYNAMIC_BATCHING = Premise(
    LLAMAFACTORY, since="0.9.5", runs_since="0.9.5", name="dynamic_batching", frameworks=("llamafactory-v1",),
    source="v0.9.4 src/llamafactory/v1/config/training_args.py (no batching_strategy: it cannot run such a "
           "config); v0.9.5 "
           "src/llamafactory/v1/config/training_args.py:124-126 (first)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    trigger, steps = plan.unsized_data, plan.max_steps
    what = f"{trigger.key} is enabled" if trigger.value is True else f"{trigger.key} is {trigger.value}"
    if steps is not None and (not steps.known or steps.value > 0):
        return
    shown = "is not set" if steps is None or steps.value is None else f"is {steps.value}"
    yield Finding(
        span=trigger.span,
        message=f"{what}, so the data has no length, but max_steps {shown}: LLaMA-Factory refuses to start "
                f"without a positive max_steps (1 or more)",
        fix="set max_steps to the number of optimizer steps to train",
    )


_V0 = """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: pt
do_train: true
finetuning_type: lora
dataset: c4_demo
streaming: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
{steps}"""

_V1 = """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 2
batching_strategy: dynamic_batching
{steps}"""

RULE = Rule(
    code="BL550",
    name="llamafactory-max-steps-required",
    severity="error",
    summary="LLaMA-Factory: streaming or dynamic batching without max_steps",
    check=check,
    needs=("unsized_data",),
    frameworks=("llamafactory", "llamafactory-v1"),
    premises=(STREAMING, DYNAMIC_BATCHING),
    doc=__doc__,
    examples=(
        Example("streaming_epochs.yaml", _V0.format(steps="num_train_epochs: 3.0\n"), flagged=(6,), severity="error"),
        Example("streaming_steps.yaml", _V0.format(steps="max_steps: 10000\n")),
        # No release pinned: batching_strategy is new in 0.9.5, which refuses it.
        Example("v1_dynamic.yaml", _V1.format(steps="learning_rate: 1.0e-4\n"), flagged=(7,), severity="error"),
        Example("v1_dynamic_pinned.yaml", _V1.format(steps="learning_rate: 1.0e-4\n"), flagged=(7,),
                files=(("requirements.txt", "llamafactory==0.9.5\n"),), severity="error"),
        Example("v1_dynamic_old.yaml", _V1.format(steps="learning_rate: 1.0e-4\n"),
                files=(("requirements.txt", "llamafactory==0.9.4\n"),)),
        Example("v1_dynamic_steps.yaml", _V1.format(steps="max_steps: 10\n")),
    ),
)
