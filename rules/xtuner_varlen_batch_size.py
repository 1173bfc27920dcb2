"""
## What it does
Flags an XTuner config with variable-length attention (`use_varlen_attn =
True`) whose train dataloader's `batch_size` is more than 1.

## Why is this bad?
With varlen attention every sample is one packed sequence whose boundaries
travel as the cumulative lengths of a single sequence: XTuner supports one
sample per device and step. `xtuner train` refuses the config before the
model loads, and the collate function asserts the same on every batch.
`batch_size = 2, max_length = 2k` trains like `batch_size = 1, max_length = 4k`.

## Example
```python
use_varlen_attn = True
max_length = 2048
batch_size = 2  # per_device
```

## Use instead
```python
use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
```

## Source
xtuner 0.2.0: xtuner/tools/train.py:88-93 (`check_cfg`);
xtuner/dataset/collate_fns/default_collate_fn.py:24-29 and
preference_collate_fn.py:37-41 (assert one sample per batch);
docs/zh_cn/acceleration/varlen_flash_attn.rst (only batch_size = 1 is supported).
"""

from collections.abc import Iterator

from batchlint.frameworks.xtuner import VARLEN
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

# check_cfg reads the config's variable; the collate functions their own flag.
_CHECKED = ("the config", "the collate_fn")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    micro = plan.micro_batch
    if micro is None or not micro.known or micro.value <= 1 or micro.span is None:
        return
    on = next((fact for where, fact in plan.settings.varlen if where in _CHECKED and fact.value), None)
    if on is None:
        return
    yield Finding(
        span=micro.span,
        message=(
            f"{micro.key} ({micro.value}) must be 1 with {VARLEN} = True (line {on.span.line}): varlen attention "
            f"takes one packed sequence per device, and xtuner train refuses a batch of {micro.value}"
        ),
        fix=f"set {micro.key} = 1 and make max_length {micro.value}x longer to keep the tokens per step",
        related=(Related(f"{VARLEN} = True here", on.span),),
    )


_CONFIG = """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = {varlen}
max_length = 2048
batch_size = {batch}  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

RULE = Rule(
    code="BL130",
    name="xtuner-varlen-batch-size",
    severity="error",
    summary="XTuner variable-length attention with a per-device batch size above 1",
    check=check,
    needs=("settings.varlen",),
    doc=__doc__,
    examples=(
        Example("varlen_batch2.py", _CONFIG.format(varlen=True, batch=2), flagged=(7,)),
        Example("varlen_batch1.py", _CONFIG.format(varlen=True, batch=1)),
        Example("padded_batch2.py", _CONFIG.format(varlen=False, batch=2)),
    ),
)
