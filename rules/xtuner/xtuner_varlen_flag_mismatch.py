"""
## What it does
Flags an XTuner config whose `use_varlen_attn` flags disagree: the top-level
variable (which `xtuner train` checks and the hooks follow), the model's, the
dataset's and the collate function's must all be the same.

## Why is this bad?
Variable-length attention takes all four: the dataset records each packed
sample's boundaries, the collate function passes them on, a hook hands them to
the model, and the model's attention is patched to use them. A collate
function that expects boundaries a dataset never recorded fails on the first
batch; a model left unpatched trains with packed samples attending to each
other, silently.

## Example
```python
use_varlen_attn = True
model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
train_dataset = dict(type=process_hf_dataset, use_varlen_attn=False)
```

## Use instead
```python
use_varlen_attn = True
model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
train_dataset = dict(type=process_hf_dataset, use_varlen_attn=use_varlen_attn)
```

## Source
xtuner 0.2.0: xtuner/tools/train.py:88-130 (`check_cfg` reads the top-level
variable); xtuner/model/sft.py:146 (attention patched by the model's flag);
xtuner/dataset/utils.py:191-218 (the packer records `cumulative_len` only with
its flag); xtuner/dataset/collate_fns/default_collate_fn.py:39-41 (reads
`cumulative_len`); xtuner/engine/hooks/varlen_attn_args_to_messagehub_hook.py:23. The four
flags came together in v0.1.14 (model/sft.py:24-29, dataset/utils.py:137-146,
collate_fns/defalut_collate_fn.py:32); before it none exists.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER
from batchlint.frameworks.xtuner import VARLEN, XTunerSettings
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

VARLEN_FLAGS = Premise(
    XTUNER, since="0.1.14",
    source="v0.1.13 (no use_varlen_attn in xtuner/); v0.1.14 xtuner/model/sft.py:24-29, xtuner/dataset/utils.py:137-146, "
           "xtuner/dataset/collate_fns/defalut_collate_fn.py:32 (first); v0.2.0 xtuner/model/sft.py:146, "
           "xtuner/dataset/collate_fns/default_collate_fn.py:40 (still)")


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    flags = xtuner.varlen
    if len({fact.value for _, fact in flags}) < 2:
        return
    ref_where, ref = flags[0]  # the top-level variable when there is one
    crash = _collate_without_boundaries(flags)
    if crash:
        consequence = "the collate_fn reads the sample boundaries a varlen dataset records, so the first batch fails"
    else:
        consequence = "depending on which side is off, the first batch fails or training runs without varlen attention"
    for where, fact in flags[1:]:
        if fact.value == ref.value:
            continue
        if ref_where == "the config":
            fix = f"pass `{VARLEN}={VARLEN}` here, so every place follows the top-level variable"
        else:
            fix = f"set it to {ref.value}, as in {ref_where}"
        line = f" (line {ref.span.line})" if ref.span is not None else ""
        yield Finding(
            span=fact.span,
            message=f"{where} has {VARLEN} = {fact.value}, but {ref_where} has {ref.value}{line}",
            notes=(consequence,),
            fix=fix,
            severity="error" if crash else "warning",
            related=(Related(f"{VARLEN} = {ref.value} here", ref.span),) if ref.span is not None else (),
        )


def _collate_without_boundaries(flags: tuple[tuple[str, Fact], ...]) -> bool:
    """A collate_fn in varlen mode fed by a dataset that records no boundaries: a KeyError."""
    collate = any(where == "the collate_fn" and fact.value for where, fact in flags)
    return collate and any(where.startswith("the dataset") and not fact.value for where, fact in flags)


RULE = Rule(
    code="BL331",
    name="xtuner-varlen-flag-mismatch",
    severity="warning",
    summary="XTuner use_varlen_attn flags that disagree between model, dataset and collate_fn",
    check=check,
    subject=XTunerSettings,
    premises=(VARLEN_FLAGS,),
    doc=__doc__,
    examples=(
        # No XTuner release pinned: those before 0.1.14 have no varlen attention.
        Example("varlen_dataset_off.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
accumulative_counts = 16

model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=False)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(12,),
                severity='info',
                message="the dataset (process_hf_dataset) has use_varlen_attn = False, but the config has True "
                        "(line 6)",
                fix="pass `use_varlen_attn=use_varlen_attn` here, so every place follows the top-level variable"),
        Example("varlen_model_off.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
accumulative_counts = 16

model = dict(type=SupervisedFinetune, use_varlen_attn=False)
train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(11,),
                severity='info',
                message="the model has use_varlen_attn = False, but the config has True (line 6)",
                fix="pass `use_varlen_attn=use_varlen_attn` here, so every place follows the top-level variable"),
        Example("varlen_dataset_off_pinned.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
accumulative_counts = 16

model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=False)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(12,),
                files=(("requirements.txt", "xtuner==0.2.0\n"),),
                severity='error',
                message="the dataset (process_hf_dataset) has use_varlen_attn = False, but the config has True "
                        "(line 6)",
                fix="pass `use_varlen_attn=use_varlen_attn` here, so every place follows the top-level variable"),
        Example("varlen_model_off_pinned.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
accumulative_counts = 16

model = dict(type=SupervisedFinetune, use_varlen_attn=False)
train_dataset = dict(type=process_hf_dataset, max_length=max_length, pack_to_max_length=True, use_varlen_attn=use_varlen_attn)
train_dataloader = dict(
    batch_size=batch_size,
    dataset=train_dataset,
    sampler=dict(type=DefaultSampler, shuffle=True),
    collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn),
)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(11,),
                files=(("requirements.txt", "xtuner==0.1.14\n"),),
                severity='warning',
                message="the model has use_varlen_attn = False, but the config has True (line 6)",
                fix="pass `use_varlen_attn=use_varlen_attn` here, so every place follows the top-level variable"),
        Example("varlen_model_off_pinned_old.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
accumulative_counts = 16

model = dict(type=SupervisedFinetune, use_varlen_attn=False)
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
        Example("varlen_agree.py", """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset
from xtuner.dataset.collate_fns import default_collate_fn
from xtuner.model import SupervisedFinetune

use_varlen_attn = True
max_length = 4096
batch_size = 1  # per_device
accumulative_counts = 16

model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
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
