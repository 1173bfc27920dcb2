"""
## What it does
Flags a LLaMA-Factory config with `streaming: true` that holds out a
fraction of the data for evaluation (`val_size` between 0 and 1) or caps
the samples with `max_samples`.

## Why is this bad?
A streamed dataset has no length: LLaMA-Factory can only hold out a number
of examples (`take`/`skip`), and cannot count the samples to keep. Its
DataArguments refuse both while the arguments are parsed, before any model is
loaded: "Streaming mode should have an integer val size.", "`max_samples` is
incompatible with `streaming`."

## Example
```yaml
stage: sft
streaming: true
max_steps: 1000
val_size: 0.1
```

## Use instead
```yaml
stage: sft
streaming: true
max_steps: 1000
val_size: 500
```

## Source
src/llamafactory/hparams/data_args.py:176-180 @ v0.9.5 (`__post_init__`),
:170-174 @ v0.9.3, :143-147 @ v0.9.0, :96-100 @ v0.7.1; first in llmtuner
0.2.0 (llmtuner/hparams/data_args.py:103-107), which brought `streaming`.
"""

from collections.abc import Iterator

from batchlint.frameworks.llamafactory import LlamaFactorySettings
from batchlint.frameworks.releases import LLAMAFACTORY
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    LLAMAFACTORY,
    source="llmtuner 0.2.0 hparams/data_args.py:103-107 (first, with streaming); v0.7.1 llamafactory/hparams/"
           "data_args.py:96-100; v0.9.5 data_args.py:176-180 (still)")


def check(plan: TrainingPlan, settings: LlamaFactorySettings) -> Iterator[Finding]:
    streaming = settings.streaming
    if streaming is None or streaming.value is not True or streaming.span is None:
        return
    streamed = (Related("streaming = true", streaming.span),)
    val_size = settings.val_size
    value = val_size.value if val_size is not None else None
    if isinstance(value, float) and 1e-6 < value < 1 and val_size is not None and val_size.span is not None:
        yield Finding(
            span=val_size.span,
            message=f"val_size {value} is a fraction of a streamed dataset, which has no length",
            notes=('LLaMA-Factory holds out a number of examples from a stream and refuses a fraction while it '
                   'parses the arguments ("Streaming mode should have an integer val size.")',),
            fix="give val_size as a number of examples (an integer), or turn streaming off",
            related=streamed,
        )
    max_samples = settings.max_samples
    if max_samples is not None and max_samples.span is not None:
        yield Finding(
            span=max_samples.span,
            message=f"max_samples {max_samples.value} cannot be counted in a streamed dataset",
            notes=('LLaMA-Factory refuses it while it parses the arguments ("`max_samples` is incompatible with '
                   '`streaming`.")',),
            fix="remove max_samples (max_steps bounds a streamed run), or turn streaming off",
            related=streamed,
        )


RULE = Rule(
    code="BL551",
    name="llamafactory-streaming-split",
    severity="error",
    summary="LLaMA-Factory: streaming with a fractional val_size or with max_samples, which it refuses",
    check=check,
    subject=LlamaFactorySettings,
    needs=(),
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        Example("streaming_val_fraction.yaml", """\
model_name_or_path: Qwen/Qwen2.5-7B-Instruct
stage: sft
finetuning_type: full
streaming: true
max_steps: 1000
per_device_train_batch_size: 2
val_size: 0.1
""", flagged=(7,), message="val_size 0.1 is a fraction of a streamed dataset, which has no length",
                fix="give val_size as a number of examples (an integer), or turn streaming off"),
        Example("streaming_max_samples.yaml", """\
model_name_or_path: Qwen/Qwen2.5-7B-Instruct
stage: sft
finetuning_type: full
streaming: true
max_steps: 1000
per_device_train_batch_size: 2
max_samples: 1000
""", flagged=(7,), message="max_samples 1000 cannot be counted in a streamed dataset",
                fix="remove max_samples (max_steps bounds a streamed run), or turn streaming off"),
        Example("streaming_val_count.yaml", """\
model_name_or_path: Qwen/Qwen2.5-7B-Instruct
stage: sft
finetuning_type: full
streaming: true
max_steps: 1000
per_device_train_batch_size: 2
val_size: 500
"""),
        Example("val_fraction.yaml", """\
model_name_or_path: Qwen/Qwen2.5-7B-Instruct
stage: sft
finetuning_type: full
per_device_train_batch_size: 2
val_size: 0.1
max_samples: 1000
"""),
    ),
)
