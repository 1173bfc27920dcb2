"""
## What it does
Flags an ms-swift Megatron config with `group_by_length: true` while
padding-free batching is on, which it is by default (`padding_free` defaults
to true, and `packing: true` forces it on).

## Why is this bad?
Padding-free batching concatenates each micro batch into one row, so there
is no padding for length grouping to save; ms-swift refuses the combination
when it parses the Megatron arguments ("group_by_length is not compatible
with padding_free."), from 4.0.1 on.

## Example
```yaml
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
```

## Use instead
```yaml
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
padding_free: false
```

## Source
ms-swift 4.6.0: swift/megatron/arguments/megatron_args.py:852-853
(`MegatronArguments.__post_init__`), padding_free default 545; packing forces
it on in swift/megatron/arguments/megatron_base_args.py:36-37. First in 4.0.1
(megatron_args.py:598-599); 4.0.0 and the 3.x releases take both.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MS_SWIFT
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    MS_SWIFT, since="4.0.1",
    source="v4.0.0 swift/megatron/arguments/megatron_args.py (group_by_length read, no check); v4.0.1 "
           "megatron_args.py:598-599 (first); 4.6.0 (PyPI wheel) swift/megatron/arguments/megatron_args.py:852-853 "
           "(still)")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    grouping, free = plan.settings.group_by_length, plan.settings.padding_free
    if grouping is None or grouping.value is not True or free is None or free.value is not True:
        return
    if free.span is None:
        why, fix = "padding_free is on by default", "set padding_free: false, or remove group_by_length"
    elif free.key == "packing":
        why, fix = f"packing (line {free.span.line}) turns padding_free on", "remove group_by_length"
    else:
        why, fix = f"padding_free is true (line {free.span.line})", "set padding_free: false, or remove group_by_length"
    related = (Related(f"{free.key} enabled here", free.span),) if free.span else ()
    yield Finding(
        span=grouping.span,
        message=f"group_by_length is true, but {why}: each micro batch ({plan.micro_batch.describe()}) is "
                f"concatenated into one row with no padding to save, and ms-swift refuses the combination",
        fix=fix,
        related=related,
    )


_CONFIG = """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
{padding}"""

RULE = Rule(
    code="BL358",
    name="swift-megatron-length-grouping",
    severity="error",
    summary="ms-swift Megatron: group_by_length while padding_free is on (its default)",
    check=check,
    needs=("settings.group_by_length",),
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        # No release pinned: 4.0.0 and older take it.
        Example("megatron_grouped_default.yaml", _CONFIG.format(padding=""), flagged=(5,), severity="info"),
        Example("megatron_grouped_default_pinned.yaml", _CONFIG.format(padding=""), flagged=(5,),
                files=(("requirements.txt", "ms-swift>=4.1,<5\n"),), severity="error"),
        Example("megatron_grouped_default_old.yaml", _CONFIG.format(padding=""),
                files=(("requirements.txt", "ms-swift==4.0.0\n"),)),
        Example("megatron_grouped_padded.yaml", _CONFIG.format(padding="padding_free: false\n")),
        Example("megatron_grouped_packed.yaml", _CONFIG.format(padding="padding_free: false\npacking: true\n"),
                flagged=(5,), severity="info"),
    ),
)
