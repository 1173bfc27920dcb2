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
from batchlint.frameworks.swift_megatron import SwiftMegatronSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    MS_SWIFT, since="4.0.1",
    source="v4.0.0 swift/megatron/arguments/megatron_args.py (group_by_length read, no check); v4.0.1 "
           "megatron_args.py:598-599 (first); 4.6.0 (PyPI wheel) swift/megatron/arguments/megatron_args.py:852-853 "
           "(still)")


def check(plan: TrainingPlan, megatron: SwiftMegatronSettings) -> Iterator[Finding]:
    grouping, free, micro = megatron.group_by_length, megatron.padding_free, plan.micro_batch
    if grouping is None or grouping.value is not True or free is None or free.value is not True:
        return
    if grouping.span is None or micro is None:
        return  # written true: a line; the Megatron plan always has a micro batch (default 1)
    if free.span is None:
        why, fix = "padding_free is on by default", "set padding_free: false, or remove group_by_length"
    elif free.key == "packing":
        why, fix = f"packing (line {free.span.line}) turns padding_free on", "remove group_by_length"
    else:
        why, fix = f"padding_free is true (line {free.span.line})", "set padding_free: false, or remove group_by_length"
    related = (Related(f"{free.key} enabled here", free.span),) if free.span else ()
    yield Finding(
        span=grouping.span,
        message=f"group_by_length is true, but {why}",
        notes=(f"padding_free concatenates each micro batch ({micro.describe()}) into one row: there is no "
               f"padding to save, and ms-swift refuses the combination",),
        fix=fix,
        related=related,
    )


RULE = Rule(
    code="BL358",
    name="swift-megatron-length-grouping",
    severity="error",
    summary="ms-swift Megatron: group_by_length while padding_free is on (its default)",
    check=check,
    subject=SwiftMegatronSettings,
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        # No release pinned: 4.0.0 and older take it.
        Example("megatron_grouped_default.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
""", flagged=(5,), severity="info",
                message="group_by_length is true, but padding_free is on by default",
                fix="set padding_free: false, or remove group_by_length"),
        Example("megatron_grouped_default_pinned.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
""", flagged=(5,), files=(("requirements.txt", "ms-swift>=4.1,<5\n"),), severity="error",
                message="group_by_length is true, but padding_free is on by default",
                fix="set padding_free: false, or remove group_by_length"),
        Example("megatron_grouped_default_old.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
""", files=(("requirements.txt", "ms-swift==4.0.0\n"),)),
        Example("megatron_grouped_padded.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
padding_free: false
"""),
        Example("megatron_grouped_packed.yaml", """\
model: Qwen/Qwen3-8B
tuner_type: lora
micro_batch_size: 4
global_batch_size: 64
group_by_length: true
padding_free: false
packing: true
""", flagged=(5,), severity="info",
                message="group_by_length is true, but packing (line 7) turns padding_free on",
                fix="remove group_by_length"),
    ),
)
