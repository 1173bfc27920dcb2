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

Varlen attention came in XTuner 0.1.14 with the collate function's assert;
`xtuner train` checks the config's variable from 0.1.16 on. Before 0.1.14
there is no `use_varlen_attn`, and the finding is not made where the project
pins such a release.

## Source
xtuner 0.2.0: xtuner/tools/train.py:88-93 (`check_cfg`);
xtuner/dataset/collate_fns/default_collate_fn.py:24-29 and
preference_collate_fn.py:37-41 (assert one sample per batch);
docs/zh_cn/acceleration/varlen_flash_attn.rst (only batch_size = 1 is supported).
First: v0.1.14 xtuner/dataset/collate_fns/defalut_collate_fn.py:17-21, v0.1.16
xtuner/tools/train.py:80-85.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER
from batchlint.frameworks.xtuner import VARLEN, XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# check_cfg reads the config's variable; the collate functions their own flag.
_CHECKED = ("the config", "the collate_fn")

# The collate function's assert, from the release that brought varlen attention.
COLLATE = Premise(
    XTUNER, since="0.1.14", name="collate_fn",
    source="v0.1.13 xtuner/dataset/collate_fns/defalut_collate_fn.py (no use_varlen_attn); v0.1.14 "
           "xtuner/dataset/collate_fns/defalut_collate_fn.py:17-21 (first); v0.2.0 "
           "xtuner/dataset/collate_fns/default_collate_fn.py:24-29 (still)")
# `xtuner train`'s check of the config's own variable.
CONFIG = Premise(
    XTUNER, since="0.1.16", name="config",
    source="v0.1.15 xtuner/tools/train.py (no check_cfg); v0.1.16 xtuner/tools/train.py:80-85 (first); "
           "v0.2.0 xtuner/tools/train.py:88-93 (still)")


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    micro = plan.micro_batch
    batch = micro.number if micro is not None else None
    if micro is None or batch is None or batch <= 1 or micro.span is None:
        return
    on = next((fact for where, fact in xtuner.varlen if where in _CHECKED and fact.value), None)
    if on is None or on.span is None:
        return
    # A collate function in varlen mode asserts whatever the config's variable says.
    collate = any(where == "the collate_fn" and fact.value for where, fact in xtuner.varlen)
    yield Finding(
        span=micro.span,
        message=f"{micro.key} {batch} with {VARLEN} = True (line {on.span.line}); varlen attention needs 1",
        notes=(f"varlen attention takes one packed sequence per device, and xtuner train refuses a batch of {batch} "
               "at start-up",),
        fix=f"set {micro.key} = 1 and make max_length {batch}x longer to keep the tokens per step",
        related=(Related(f"{VARLEN} = True here", on.span),),
        premise=COLLATE.name if collate else CONFIG.name,
    )


RULE = Rule(
    code="BL130",
    name="xtuner-varlen-batch-size",
    severity="error",
    summary="XTuner variable-length attention with a per-device batch size above 1",
    check=check,
    subject=XTunerSettings,
    premises=(COLLATE, CONFIG),
    doc=__doc__,
    examples=(
        # No XTuner release pinned: those before 0.1.14 have no varlen attention.
        Example("varlen_batch2.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = True
max_length = 2048
batch_size = 2  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(7,),
                severity='info',
                message="batch_size 2 with use_varlen_attn = True (line 5); varlen attention needs 1",
                fix="set batch_size = 1 and make max_length 2x longer to keep the tokens per step"),
        Example("varlen_batch2_pinned.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = True
max_length = 2048
batch_size = 2  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(7,),
                files=(("requirements.txt", "xtuner==0.1.16\n"),),
                severity='error',
                message="batch_size 2 with use_varlen_attn = True (line 5); varlen attention needs 1",
                fix="set batch_size = 1 and make max_length 2x longer to keep the tokens per step"),
        Example("varlen_batch2_pinned_old.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = True
max_length = 2048
batch_size = 2  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                files=(("requirements.txt", "xtuner==0.1.13\n"),)),
        # Only the config's variable: xtuner train checks it from 0.1.16 on.
        Example("varlen_config_only_0115.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = True
max_length = 2048
batch_size = 2  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                files=(("requirements.txt", "xtuner==0.1.15\n"),)),
        Example("varlen_config_only_020.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = True
max_length = 2048
batch_size = 2  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(7,),
                files=(("requirements.txt", "xtuner==0.2.0\n"),),
                severity='error',
                message="batch_size 2 with use_varlen_attn = True (line 5); varlen attention needs 1",
                fix="set batch_size = 1 and make max_length 2x longer to keep the tokens per step"),
        Example("varlen_batch1.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = True
max_length = 2048
batch_size = 1  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("padded_batch2.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn

use_varlen_attn = False
max_length = 2048
batch_size = 2  # per_device
accumulative_counts = 16

train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
    ),
)
