"""
## What it does
Flags an axolotl `batch_size` that does not give the accumulation it
implies. With `micro_batch_size` and `batch_size` and no
`gradient_accumulation_steps` key, config validation fills the accumulation
with its default 1 before `normalize_config` would derive it from
`batch_size`: the run accumulates nothing. With `gradient_accumulation_steps:`
written empty (null), it is derived as `batch_size // micro_batch_size`, a
floor that drops the remainder (and is 0 when batch_size < micro_batch_size).

## Why is this bad?
The run trains with another batch than the config states, silently: each
optimizer step takes `micro_batch_size` x dp sequences, not `batch_size` x dp.
axolotl also computes the number of steps from `batch_size`, so unless
`max_steps` is set the run stops after micro_batch_size / batch_size of the
planned epochs. An accumulation of 0 fails when the trainer divides by it.
The default 1 fills the accumulation from 0.5.0, the first PyPI release (the
git tags before it derived it from batch_size); the floor division is the
same in every release.

## Example
```yaml
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
batch_size: 4
```

## Use instead
```yaml
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
```

## Source
axolotl 0.19.0: axolotl/utils/schemas/training.py:71-76
(gradient_accumulation_steps default 1), utils/config/__init__.py:500-517
(validate_config dumps the defaults) and 206-211 (normalize_config:
`gradient_accumulation_steps or batch_size // micro_batch_size`),
utils/trainer.py:463 (steps from batch_size), core/builders/base.py:686
(max_steps); the same in v0.18.0 (067b021 reproduced with validate_config +
normalize_config: micro 1 + batch_size 4 gives gradient_accumulation_steps 1).
v0.5.0: src/axolotl/utils/config/models/input/v0_4_1/__init__.py:396 (first
default 1), utils/config/__init__.py:243-249 and 55-59; v0.4.0:
src/axolotl/utils/config.py:46-50 (no schema: derived from batch_size).
"""

from collections.abc import Iterator

from batchlint.frameworks.axolotl import AxolotlSettings
from batchlint.frameworks.releases import AXOLOTL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

DEFAULT_FIRST = Premise(
    AXOLOTL, since="0.5.0", name="default accumulation",
    source="v0.4.0 src/axolotl/utils/config.py:46-50 (no schema: normalize_config derives it from batch_size); "
           "v0.5.0 src/axolotl/utils/config/models/input/v0_4_1/__init__.py:396 (default 1) and "
           "utils/config/__init__.py:243-249 (dumped before normalize_config, 55-59); 0.19.0 (PyPI wheel) "
           "axolotl/utils/schemas/training.py:71-72, utils/config/__init__.py:500-517 and 206-211 (still)")
FLOOR = Premise(
    AXOLOTL, name="floor division",
    source="v0.4.0 src/axolotl/utils/config.py:46-50; v0.5.0 src/axolotl/utils/config/__init__.py:55-59; "
           "0.19.0 (PyPI wheel) axolotl/utils/config/__init__.py:206-211 (`gradient_accumulation_steps or "
           "batch_size // micro_batch_size`, unchanged)")


def check(plan: TrainingPlan, axolotl: AxolotlSettings) -> Iterator[Finding]:
    given = axolotl.batch_size
    if given is None:
        return
    micro, batch = given.micro, given.batch
    mb, bs = micro.count, batch.count
    if mb is None or bs is None or batch.span is None:
        return  # BatchSize holds positive whole numbers written in the file
    related = (Related(f"{micro.key} = {mb}", micro.span),)
    if not given.derived:
        if bs == mb:
            return  # accumulation 1 is what batch_size means
        yield Finding(
            span=batch.span,
            message=f"batch_size {bs} does not set the accumulation: each step takes {mb} x dp sequences, not {bs} x dp",
            notes=(f"validation fills gradient_accumulation_steps with its default 1 first, so each step takes "
                   f"micro_batch_size ({mb}) x dp sequences",
                   f"the step count (computed from batch_size) ends the run after {mb}/{bs} of the planned epochs "
                   f"unless max_steps is set"),
            fix=_fix(mb, bs),
            related=related,
            premise="default accumulation",
        )
        return
    ga = bs // mb
    if ga == 0:
        yield Finding(
            span=batch.span,
            message=f"batch_size {bs} is below micro_batch_size {mb}: the accumulation is derived as 0",
            notes=(f"batch_size ({bs}) // micro_batch_size ({mb}) = 0; training fails when the trainer divides by it",),
            fix=f"set batch_size to a multiple of {mb}, or write gradient_accumulation_steps instead",
            severity="error",
            related=related,
            premise="floor division",
        )
    elif bs % mb:
        yield Finding(
            span=batch.span,
            message=f"batch_size {bs} is not a multiple of micro_batch_size {mb}: each step takes {ga * mb} x dp, not {bs} x dp",
            notes=(f"the accumulation is derived by floor division, {bs} // {mb} = {ga}, so each step takes "
                   f"{ga} x {mb} = {ga * mb} x dp sequences, not {bs} x dp",),
            fix=_fix(mb, bs),
            related=related,
            premise="floor division",
        )


def _fix(mb: int, bs: int) -> str:
    if bs % mb == 0:
        return f"replace batch_size: {bs} with gradient_accumulation_steps: {bs // mb}"
    lower = max(bs // mb, 1)
    return (f"replace batch_size with gradient_accumulation_steps: {lower} ({lower * mb} per device) "
            f"or {lower + 1} ({(lower + 1) * mb} per device)")


RULE = Rule(
    code="BL151",
    name="axolotl-batch-size-accumulation",
    severity="warning",
    summary="axolotl: a batch_size that does not give the accumulation it implies",
    check=check,
    subject=AxolotlSettings,
    premises=(DEFAULT_FIRST, FLOOR),
    doc=__doc__,
    examples=(
        # No release pinned: the git tags before 0.5.0 derived the accumulation from batch_size.
        Example("batch_size.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 1
batch_size: 4
num_epochs: 4
""", flagged=(4,), severity="info",
                message="batch_size 4 does not set the accumulation: each step takes 1 x dp sequences, not 4 "
                        "x dp",
                fix="replace batch_size: 4 with gradient_accumulation_steps: 4"),
        Example("batch_size_pinned.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 1
batch_size: 4
num_epochs: 4
""", flagged=(4,), files=(("requirements.txt", "axolotl==0.12.2\n"),), severity="warning",
                message="batch_size 4 does not set the accumulation: each step takes 1 x dp sequences, not 4 "
                        "x dp",
                fix="replace batch_size: 4 with gradient_accumulation_steps: 4"),
        Example("batch_size_git_tag.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 1
batch_size: 4
num_epochs: 4
""", files=(("requirements.txt", "axolotl @ git+https://github.com/axolotl-ai-cloud/axolotl@v0.4.0\n"),)),
        Example("accumulation.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 1
gradient_accumulation_steps: 4
num_epochs: 4
"""),
        Example("batch_equals_micro.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 4
batch_size: 4
num_epochs: 4
"""),
        Example("null_floor.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 3
gradient_accumulation_steps:
batch_size: 8
num_epochs: 4
""", flagged=(5,),
                message="batch_size 8 is not a multiple of micro_batch_size 3: each step takes 6 x dp, not 8 "
                        "x dp",
                fix="replace batch_size with gradient_accumulation_steps: 2 (6 per device) or 3 (9 per "
                    "device)"),
        Example("null_exact.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 2048
micro_batch_size: 2
gradient_accumulation_steps:
batch_size: 8
num_epochs: 4
"""),
    ),
)
