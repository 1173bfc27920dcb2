"""
## What it does
Flags an XTuner `process_hf_dataset` given `use_varlen_attn=True` together
with `pack_to_max_length=False`.

## Why is this bad?
Variable-length attention exists for packed samples: it keeps the samples
packed into one sequence from attending to each other, using the cumulative
lengths the packer records. Without packing there is nothing to record, and
`process_hf_dataset` asserts packing when it builds the dataset - after the
job has its GPUs and has loaded the tokenizer.

## Example
```python
use_varlen_attn = True
pack_to_max_length = False
train_dataset = dict(type=process_hf_dataset, pack_to_max_length=pack_to_max_length, use_varlen_attn=use_varlen_attn)
```

## Use instead
```python
use_varlen_attn = True
pack_to_max_length = True
train_dataset = dict(type=process_hf_dataset, pack_to_max_length=pack_to_max_length, use_varlen_attn=use_varlen_attn)
```

The assertion came with varlen attention in XTuner 0.1.14 (before it,
`process_hf_dataset` has no `use_varlen_attn`).

## Source
xtuner 0.2.0: xtuner/dataset/huggingface.py:182-186 (`process`, called by
`process_hf_dataset`, whose `pack_to_max_length` defaults to True: 267);
docs/zh_cn/acceleration/varlen_flash_attn.rst. First: v0.1.14
xtuner/dataset/huggingface.py:158-161.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER
from batchlint.frameworks.xtuner import XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

PACKING_ASSERTED = Premise(
    XTUNER, since="0.1.14",
    source="v0.1.13 xtuner/dataset/huggingface.py (no use_varlen_attn); v0.1.14 xtuner/dataset/huggingface.py:158-161 "
           "(first); v0.2.0 xtuner/dataset/huggingface.py:182-186 (still)")


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    for dataset in xtuner.hf_datasets:
        varlen, packing = dataset.use_varlen_attn, dataset.pack_to_max_length
        if varlen is None or packing is None or not varlen.value or packing.value:
            continue
        if varlen.span is None or packing.span is None:
            continue
        yield Finding(
            span=packing.span,
            message=f"{packing.key} is False, but process_hf_dataset gets {varlen.key} = True (line {varlen.span.line})",
            notes=("variable-length attention needs packed samples, and the dataset refuses to build without them",),
            fix=f"set {packing.key} = True, or {varlen.key} = False",
            related=(Related(f"{varlen.key} = True here", varlen.span),),
        )


RULE = Rule(
    code="BL330",
    name="xtuner-varlen-without-packing",
    severity="error",
    summary="XTuner variable-length attention on a dataset that is not packed",
    check=check,
    subject=XTunerSettings,
    premises=(PACKING_ASSERTED,),
    doc=__doc__,
    examples=(
        # No XTuner release pinned: those before 0.1.14 have no varlen attention.
        Example("varlen_unpacked.py", """\
from xtuner.dataset import process_hf_dataset

use_varlen_attn = True
max_length = 4096
pack_to_max_length = False
batch_size = 1  # per_device
accumulative_counts = 16

train_dataset = dict(
    type=process_hf_dataset,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
    use_varlen_attn=use_varlen_attn,
)
train_dataloader = dict(batch_size=batch_size, dataset=train_dataset)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(5,),
                severity='info',
                message="pack_to_max_length is False, but process_hf_dataset gets use_varlen_attn = True (line 3)",
                fix="set pack_to_max_length = True, or use_varlen_attn = False"),
        Example("varlen_unpacked_pinned.py", """\
from xtuner.dataset import process_hf_dataset

use_varlen_attn = True
max_length = 4096
pack_to_max_length = False
batch_size = 1  # per_device
accumulative_counts = 16

train_dataset = dict(
    type=process_hf_dataset,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
    use_varlen_attn=use_varlen_attn,
)
train_dataloader = dict(batch_size=batch_size, dataset=train_dataset)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(5,),
                files=(("requirements.txt", "xtuner==0.1.14\n"),),
                severity='error',
                message="pack_to_max_length is False, but process_hf_dataset gets use_varlen_attn = True (line 3)",
                fix="set pack_to_max_length = True, or use_varlen_attn = False"),
        Example("varlen_unpacked_pinned_old.py", """\
from xtuner.dataset import process_hf_dataset

use_varlen_attn = True
max_length = 4096
pack_to_max_length = False
batch_size = 1  # per_device
accumulative_counts = 16

train_dataset = dict(
    type=process_hf_dataset,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
    use_varlen_attn=use_varlen_attn,
)
train_dataloader = dict(batch_size=batch_size, dataset=train_dataset)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                files=(("requirements.txt", "xtuner==0.1.13\n"),)),
        Example("varlen_packed.py", """\
from xtuner.dataset import process_hf_dataset

use_varlen_attn = True
max_length = 4096
pack_to_max_length = True
batch_size = 1  # per_device
accumulative_counts = 16

train_dataset = dict(
    type=process_hf_dataset,
    max_length=max_length,
    pack_to_max_length=pack_to_max_length,
    use_varlen_attn=use_varlen_attn,
)
train_dataloader = dict(batch_size=batch_size, dataset=train_dataset)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
    ),
)
