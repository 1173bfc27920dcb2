"""
## What it does
Checks axolotl's batch keys the way its config validation does: at least two
of `micro_batch_size`, `gradient_accumulation_steps` and `batch_size` must be
set (a 0 counts as unset), and `gradient_accumulation_steps` and
`batch_size` must not both be set. From 0.19.0 axolotl takes
`micro_batch_size` or `gradient_accumulation_steps` alone (the other
defaults to 1): only `batch_size` alone is still refused, and a config with
fewer keys is flagged only for a project on 0.18.0 or older.

## Why is this bad?
axolotl validates the config before it loads anything and refuses to start
with "At least two of micro_batch_size, gradient_accumulation_steps,
batch_size must be set" or "please set only one of
gradient_accumulation_steps or batch_size" - after the job has its GPUs.
The git tags before the first PyPI release (0.5.0) lack the "At least two"
check, but their normalize_config fails on the missing key instead
(`None // micro_batch_size`, a TypeError).

## Example
```yaml
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 2
gradient_accumulation_steps: 4
batch_size: 32
```

## Use instead
```yaml
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 2
gradient_accumulation_steps: 4
```

## Source
axolotl v0.18.0: src/axolotl/utils/schemas/validation.py:218-226
(`check_batch_size_fields`) and 272-279 (`check_gas_bsz`); 0.19.0:
axolotl/utils/schemas/validation.py:220-229 (only batch_size alone refused)
and 275-282; the first PyPI release 0.5.0:
src/axolotl/utils/config/models/input/v0_4_1/__init__.py:800-806 and 925-929;
before it, v0.4.0 src/axolotl/utils/config.py:215-218 (gas and batch_size)
and 46-53 (normalize_config).
"""

from collections.abc import Iterator

from batchlint.document import Span
from batchlint.frameworks.axolotl import BATCH_FIELDS, AxolotlSettings, written
from batchlint.frameworks.releases import AXOLOTL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

_BEFORE_PYPI = "v0.4.0 src/axolotl/utils/config.py:46-53 (normalize_config: a missing key fails as `None // micro_batch_size`)"
FEWER = Premise(
    AXOLOTL, until="0.18.0", name="fewer than two",
    source=f"{_BEFORE_PYPI}; v0.5.0 src/axolotl/utils/config/models/input/v0_4_1/__init__.py:800-806 "
           "(`check_batch_size_fields`); v0.18.0 src/axolotl/utils/schemas/validation.py:218-226 (last); 0.19.0 "
           "(PyPI wheel) axolotl/utils/schemas/validation.py:220-229 returns early when micro_batch_size or "
           "gradient_accumulation_steps is set, and with none of the three")
BATCH_SIZE_ALONE = Premise(
    AXOLOTL, name="batch_size alone",
    source=f"{_BEFORE_PYPI}; v0.5.0 src/axolotl/utils/config/models/input/v0_4_1/__init__.py:800-806; "
           "0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:227-228 (still)")
BOTH = Premise(
    AXOLOTL, name="both",
    source="v0.4.0 src/axolotl/utils/config.py:215-218 (from v0.2.1); v0.5.0 src/axolotl/utils/config/models/input/"
           "v0_4_1/__init__.py:925-929 (`check_gas_bsz`); 0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:"
           "275-282 (still)")


def check(plan: TrainingPlan, axolotl: AxolotlSettings) -> Iterator[Finding]:
    root = plan.document.root
    nodes = {key: written(root, key) for key in BATCH_FIELDS}
    present = [key for key in BATCH_FIELDS if nodes[key] is not None]
    if len(present) < 2:
        first = nodes[present[0]] if present else None
        shown = f"only {present[0]} ({getattr(first, 'value', '...')}) is set" if present else "no batch key is set"
        yield Finding(
            span=first.span if first is not None else Span.point(1),
            message=f"{shown}; axolotl needs two batch keys",
            notes=("axolotl needs at least two of micro_batch_size, gradient_accumulation_steps and batch_size "
                   "(a 0 counts as unset); the config fails validation before anything loads",),
            fix=_MISSING_FIX.get(tuple(present), "set micro_batch_size and gradient_accumulation_steps"),
            premise="batch_size alone" if present == ["batch_size"] else "fewer than two",
        )
    ga, batch = nodes["gradient_accumulation_steps"], nodes["batch_size"]
    if ga is not None and batch is not None:
        yield Finding(
            span=batch.span,
            message=f"batch_size ({getattr(batch, 'value', '...')}) and gradient_accumulation_steps "
                    f"({getattr(ga, 'value', '...')}) are both set",
            notes=("axolotl accepts only one of them and the config fails validation",),
            fix="remove batch_size (gradient_accumulation_steps already sets the accumulation)",
            related=(Related("gradient_accumulation_steps set here", ga.span),),
            premise="both",
        )


_MISSING_FIX: dict[tuple[str, ...], str] = {
    ("micro_batch_size",): "set gradient_accumulation_steps (1 for no accumulation)",
    ("gradient_accumulation_steps",): "set micro_batch_size",
    ("batch_size",): "replace batch_size with micro_batch_size and gradient_accumulation_steps",
}

RULE = Rule(
    code="BL150",
    name="axolotl-batch-fields",
    severity="error",
    summary="axolotl: fewer than two batch keys, or accumulation together with batch_size",
    check=check,
    subject=AxolotlSettings,
    premises=(FEWER, BATCH_SIZE_ALONE, BOTH),
    doc=__doc__,
    examples=(
        Example("both.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
micro_batch_size: 2
gradient_accumulation_steps: 4
batch_size: 32
num_epochs: 1
""", flagged=(5,),
                message="batch_size (32) and gradient_accumulation_steps (4) are both set",
                fix="remove batch_size (gradient_accumulation_steps already sets the accumulation)"),
        Example("ga.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
micro_batch_size: 2
gradient_accumulation_steps: 4
num_epochs: 1
"""),
        Example("batch_size_only.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
batch_size: 32
num_epochs: 1
""", flagged=(3,), severity="error",
                message="only batch_size (32) is set; axolotl needs two batch keys",
                fix="replace batch_size with micro_batch_size and gradient_accumulation_steps"),
        # One key alone is refused up to 0.18.0 and taken from 0.19.0 on: with no release pinned, nothing.
        Example("micro_only.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
micro_batch_size: 2
num_epochs: 1
"""),
        Example("micro_only_pinned_old.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
micro_batch_size: 2
num_epochs: 1
""", flagged=(3,), files=(("requirements.txt", "axolotl==0.18.0\n"),), severity="error",
                message="only micro_batch_size (2) is set; axolotl needs two batch keys",
                fix="set gradient_accumulation_steps (1 for no accumulation)"),
        Example("micro_only_pinned_new.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
micro_batch_size: 2
num_epochs: 1
""", files=(("requirements.txt", "axolotl==0.19.0\n"),)),
        Example("zero_ga.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sequence_len: 4096
micro_batch_size: 2
gradient_accumulation_steps: 0
num_epochs: 1
""", flagged=(3,), files=(("requirements.txt", "axolotl>=0.12,<0.19\n"),), severity="error",
                message="only micro_batch_size (2) is set; axolotl needs two batch keys",
                fix="set gradient_accumulation_steps (1 for no accumulation)"),
    ),
)
