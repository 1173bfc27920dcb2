"""
## What it does
Flags an XTuner config with `sequence_parallel_size` > 1 or
`use_varlen_attn = True` whose model sets `llm.attn_implementation` to
anything but `"flash_attention_2"` (leaving it out is fine).

## Why is this bad?
XTuner's sequence parallelism and variable-length attention are implemented on
FlashAttention-2. `xtuner train` checks the model's attention implementation
before building anything and refuses `"eager"` or `"sdpa"`.

## Example
```python
sequence_parallel_size = 4
model = dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="sdpa"))
```

## Use instead
```python
sequence_parallel_size = 4
model = dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="flash_attention_2"))
```

## Source
xtuner 0.2.0: xtuner/tools/train.py:106-117 (sequence parallel) and 119-130
(varlen attention) in `check_cfg`. Whether flash_attn is installed
(`SUPPORT_FLASH2`, checked in the same lines) is not in the config. Both
checks came in v0.1.19 (xtuner/tools/train.py:104-124); v0.1.18 and earlier
do not look at `attn_implementation`.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER
from batchlint.frameworks.xtuner import XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

FLASH = "flash_attention_2"

ATTENTION_CHECKED = Premise(
    XTUNER, since="0.1.19",
    source="v0.1.18 xtuner/tools/train.py:104-106 (flash_attn required, attn_implementation not read); v0.1.19 "
           "xtuner/tools/train.py:104-124 (first); v0.2.0 xtuner/tools/train.py:106-130 (still)")


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    attn = plan.attention
    if attn is None or not isinstance(attn.value, str) or attn.value == FLASH:
        return
    needs = []
    sp = plan.parallel.get("sp")
    if sp is not None and sp.count is not None and sp.count > 1:
        needs.append(sp)
    varlen = next((fact for where, fact in xtuner.varlen if where == "the config"), None)
    if varlen is not None and varlen.value:
        needs.append(varlen)
    if not needs:
        return
    reasons = " and ".join(f"{fact.key} = {fact.value}" for fact in needs)
    line = f" (line {needs[0].span.line})" if needs[0].span is not None else ""
    yield Finding(
        span=attn.span,
        message=f"attn_implementation is {attn.value!r}, but {reasons}{line} needs FlashAttention-2",
        notes=("XTuner's sequence parallelism and varlen attention run on FlashAttention-2: xtuner train refuses "
               "the config at start-up",),
        fix=f'set attn_implementation="{FLASH}", or remove it',
        related=tuple(Related(f"{fact.key} = {fact.value} here", fact.span) for fact in needs if fact.span),
    )


RULE = Rule(
    code="BL530",
    name="xtuner-sp-attention",
    severity="error",
    summary="XTuner sequence parallelism or varlen attention without FlashAttention-2",
    check=check,
    subject=XTunerSettings,
    needs=("attention",),
    frameworks=("xtuner",),
    premises=(ATTENTION_CHECKED,),
    doc=__doc__,
    examples=(
        # No XTuner release pinned: those before 0.1.19 do not check it.
        Example("sp4_sdpa.py", """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="sdpa"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(11,),
                severity='info',
                message="attn_implementation is 'sdpa', but sequence_parallel_size = 4 (line 4) needs "
                        "FlashAttention-2",
                fix='set attn_implementation="flash_attention_2", or remove it'),
        Example("sp4_sdpa_pinned.py", """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="sdpa"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(11,),
                files=(("requirements.txt", "xtuner==0.1.19\n"),),
                severity='error',
                message="attn_implementation is 'sdpa', but sequence_parallel_size = 4 (line 4) needs "
                        "FlashAttention-2",
                fix='set attn_implementation="flash_attention_2", or remove it'),
        Example("sp4_sdpa_pinned_old.py", """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="sdpa"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                files=(("requirements.txt", "xtuner==0.1.18\n"),)),
        Example("sp4_flash.py", """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = 4
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="flash_attention_2"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("sp1_sdpa.py", """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = 1
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="sdpa"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""),
        Example("varlen_eager.py", """\
from transformers import AutoModelForCausalLM
from xtuner.model import SupervisedFinetune

sequence_parallel_size = 1
use_varlen_attn = True
batch_size = 1  # per_device
accumulative_counts = 16
accumulative_counts *= sequence_parallel_size

model = dict(
    type=SupervisedFinetune,
    llm=dict(type=AutoModelForCausalLM.from_pretrained, attn_implementation="eager"),
)
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
""",
                flagged=(12,),
                severity='info',
                message="attn_implementation is 'eager', but use_varlen_attn = True (line 5) needs FlashAttention-2",
                fix='set attn_implementation="flash_attention_2", or remove it'),
    ),
)
