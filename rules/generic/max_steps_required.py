"""
## What it does
Flags a config whose data has no length but that sets no `max_steps`:
LLaMA-Factory's `streaming: true` (v0 configs, where `max_steps` defaults to -1)
or `batching_strategy: dynamic_batching` (v1 configs), and ms-swift's
`streaming: true`.

## Why is this bad?
A streamed dataset and dynamically sized batches give no number of steps
per epoch, so the schedule needs `max_steps`. The transformers Trainer that
ms-swift runs refuses a dataset without a length when `max_steps` is not positive
("The train_dataset does not implement __len__, max_steps has to be specified"),
and LLaMA-Factory refuses to start without it ("Please specify `max_steps` in streaming mode.",
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
release with batching strategies (v1 of 0.9.4 has none). ms-swift: `streaming`
loads the dataset with `streaming=True` (an IterableDataset; swift/llm/argument/
base_args/data_args.py:39 @ v3.0.0, swift/arguments/base_args/data_args.py:86 @
v4.5.2, whose docstring says `--max_steps` must be set); its trainer is the
transformers Trainer, whose `__init__` raises ("train_dataset does not implement
__len__, max_steps has to be specified") in every transformers 4 release.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import LLAMAFACTORY, MS_SWIFT
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


SWIFT_STREAMING = Premise(
    MS_SWIFT, since="3.0.0", runs_since="3.0.0", name="ms-swift streaming", frameworks=("swift",),
    source="v3.0.0 swift/llm/argument/base_args/data_args.py:39 (streaming, an IterableDataset for the transformers "
           "Trainer, which refuses it without max_steps); v4.5.2 and 4.6.0 (3602360) swift/arguments/base_args/"
           "data_args.py:46, 86 (still; its docstring asks for --max_steps)")

# Who refuses, by the plan's framework.
_REFUSES = {"swift": 'the transformers Trainer under ms-swift refuses to start ("The train_dataset does not implement '
                     '__len__, max_steps has to be specified")'}


def check(plan: TrainingPlan) -> Iterator[Finding]:
    trigger, steps = plan.unsized_data, plan.max_steps
    if trigger is None:
        return
    what = f"{trigger.key} is enabled" if trigger.value is True else f"{trigger.key} is {trigger.value}"
    if steps is not None and (not steps.known or steps.positive):
        return
    shown = "is not set" if steps is None or steps.value is None else f"is {steps.value}"
    yield Finding(
        span=trigger.span,
        message=f"{what}, but max_steps {shown}",
        notes=(f"with {trigger.key} the data has no length: only max_steps says when training ends",
               _REFUSES.get(plan.framework, "LLaMA-Factory refuses to start without a positive max_steps (1 or more)")),
        fix="set max_steps to the number of optimizer steps to train",
    )


RULE = Rule(
    code="BL550",
    name="max-steps-required",
    severity="error",
    summary="streaming or dynamic batching without max_steps (LLaMA-Factory, ms-swift)",
    check=check,
    needs=("unsized_data",),
    frameworks=("llamafactory", "llamafactory-v1", "swift"),
    premises=(STREAMING, DYNAMIC_BATCHING, SWIFT_STREAMING),
    doc=__doc__,
    examples=(
        Example("streaming_epochs.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: pt
do_train: true
finetuning_type: lora
dataset: c4_demo
streaming: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
num_train_epochs: 3.0
""", flagged=(6,),
                severity="error",
                message="streaming is enabled, but max_steps is not set",
                fix="set max_steps to the number of optimizer steps to train"),
        Example("streaming_steps.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: pt
do_train: true
finetuning_type: lora
dataset: c4_demo
streaming: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
max_steps: 10000
"""),
        # No release pinned: batching_strategy is new in 0.9.5, which refuses it.
        Example("v1_dynamic.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 2
batching_strategy: dynamic_batching
learning_rate: 1.0e-4
""", flagged=(7,),
                severity="error",
                message="batching_strategy is dynamic_batching, but max_steps is not set",
                fix="set max_steps to the number of optimizer steps to train"),
        Example("v1_dynamic_pinned.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 2
batching_strategy: dynamic_batching
learning_rate: 1.0e-4
""", flagged=(7,),
                files=(("requirements.txt", "llamafactory==0.9.5\n"),),
                severity="error",
                message="batching_strategy is dynamic_batching, but max_steps is not set",
                fix="set max_steps to the number of optimizer steps to train"),
        Example("v1_dynamic_old.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 2
batching_strategy: dynamic_batching
learning_rate: 1.0e-4
""", files=(("requirements.txt", "llamafactory==0.9.4\n"),)),
        Example("v1_dynamic_steps.yaml", """\
model: Qwen/Qwen3-0.6B
model_class: llm
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 2
batching_strategy: dynamic_batching
max_steps: 10
"""),
        Example("swift_streaming.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
train_type: lora
dataset: swift/chinese-c4
streaming: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
num_train_epochs: 1
""", flagged=(4,),
                severity="error",
                message="streaming is enabled, but max_steps is not set",
                fix="set max_steps to the number of optimizer steps to train"),
        Example("swift_streaming_steps.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
train_type: lora
dataset: swift/chinese-c4
streaming: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
max_steps: 5000
"""),
        Example("swift_streaming_2.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
train_type: lora
dataset: swift/chinese-c4
streaming: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
num_train_epochs: 1
""", files=(("requirements.txt", "ms-swift==2.6.1\n"),)),  # before 3.0.0: not judged
    ),
)
