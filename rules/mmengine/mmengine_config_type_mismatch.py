"""
## What it does
Flags an XTuner config whose chain of bases mixes mmengine's two kinds of
config: a `_base_ = [...]` file naming a base that mmengine reads as a
pure-Python config (one that imports installed packages, as XTuner's own
configs do, or uses `with read_base()`), or a `_base_ =` in a file mmengine
reads as a pure-Python config (itself, or a base it imports under
`with read_base()`).

## Why is this bad?
mmengine decides for each file how to read it, and refuses a chain whose
files are not all read the same way: "The configuration file type in the
inheritance chain must match the current configuration file type". `xtuner
train` stops there, before anything is built; copying one of XTuner's
configs as a base and writing `_base_ = './that_config.py'` over it is the
usual way to get there.

## Example
```python
_base_ = ['./internlm2_chat_7b_qlora_alpaca_e3.py']  # a config that imports xtuner
sequence_parallel_size = 4
```

## Use instead
```python
from mmengine.config import read_base

with read_base():
    from .internlm2_chat_7b_qlora_alpaca_e3 import *

sequence_parallel_size = 4
```

## Source
mmengine v0.8.0 (the first release with pure-Python configs): mmengine/config/config.py:780
(`_file2dict` refuses a base `_is_lazy_import` reads as pure-Python), 519 (`_get_base_modules` refuses
`_base_ =` in one); v0.10.7 (the newest): 846, 579. Every XTuner release requires mmengine >= 0.8.4
(requirements/runtime.txt @ v0.1.0; mmengine==0.10.6 @ v0.2.0).
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import XTUNER
from batchlint.frameworks.xtuner import XTunerSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

# mmengine refuses the chain; every XTuner release requires an mmengine that does.
MIXED_CHAIN = Premise(
    XTUNER,
    source="v0.1.0 requirements/runtime.txt (mmengine>=0.8.4), v0.2.0 requirements/runtime.txt (mmengine==0.10.6); "
           "mmengine v0.8.0 mmengine/config/config.py:519, 780 (first), v0.10.7 config.py:579, 846 (newest)")


def check(plan: TrainingPlan, xtuner: XTunerSettings) -> Iterator[Finding]:
    refusal = xtuner.refused
    if refusal is None:
        return
    marker = refusal.related[0][1] if refusal.related else refusal.span  # what makes a file pure-Python
    yield Finding(
        span=refusal.span,
        message=f"pure-Python and `_base_` configs mixed in one chain (line {marker.line}): mmengine refuses it",
        notes=(refusal.why, "mmengine does not load the config, so the job cannot start"),
        fix=("inherit a pure-Python base with `with read_base(): from .base import *`, or make every file of the "
             "chain a `_base_` config (no import of an installed package, no `with read_base()`)"),
        related=tuple(Related(message, span) for message, span in refusal.related),
    )


_BASE = """\
from mmengine.dataset import DefaultSampler
from xtuner.dataset import process_hf_dataset

batch_size = 1
accumulative_counts = 16
train_dataset = dict(type=process_hf_dataset, max_length=2048, pack_to_max_length=True)
train_dataloader = dict(batch_size=batch_size, dataset=train_dataset, sampler=dict(type=DefaultSampler, shuffle=True))
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

_TEXT_BASE = """\
batch_size = 1
accumulative_counts = 16
train_dataloader = dict(batch_size=batch_size)
optim_wrapper = dict(accumulative_counts=accumulative_counts)
"""

RULE = Rule(
    code="BL230",
    name="mmengine-config-type-mismatch",
    severity="error",
    summary="an XTuner config's `_base_` chain mixes mmengine's two kinds of config, which it refuses to load",
    check=check,
    subject=XTunerSettings,
    premises=(MIXED_CHAIN,),
    doc=__doc__,
    examples=(
        # `_base_` over a config that imports xtuner.
        Example("sp4.py", """\
_base_ = ['./base.py']
sequence_parallel_size = 4
""",
                flagged=(1,),
                files=(("base.py", _BASE),),
                message="pure-Python and `_base_` configs mixed in one chain (line 1): mmengine refuses it",
                fix="inherit a pure-Python base with `with read_base(): from .base import *`, or make every file of "
                    "the chain a `_base_` config (no import of an installed package, no `with read_base()`)"),
        # The same base, inherited as mmengine reads it.
        Example("sp4_lazy.py", """\
from mmengine.config import read_base

with read_base():
    from .base import *

sequence_parallel_size = 4
""",
                files=(("base.py", _BASE),)),
        # `_base_ =` in a file that imports xtuner: mmengine reads it as pure-Python, where `_base_` is refused.
        Example("late.py", """\
from xtuner.dataset.samplers import LengthGroupedSampler

_base_ = ['./text_base.py']
""",
                flagged=(3,),
                files=(("text_base.py", _TEXT_BASE),),
                message="pure-Python and `_base_` configs mixed in one chain (line 1): mmengine refuses it",
                fix="inherit a pure-Python base with `with read_base(): from .base import *`, or make every file of "
                    "the chain a `_base_` config (no import of an installed package, no `with read_base()`)"),
        # A `_base_` chain of text configs.
        Example("text.py", """\
_base_ = ['./text_base.py']
sequence_parallel_size = 4
""",
                files=(("text_base.py", _TEXT_BASE),)),
    ),
)
