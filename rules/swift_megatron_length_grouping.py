"""
## What it does
Flags an ms-swift Megatron config with `group_by_length: true` while
padding-free batching is on, which it is by default (`padding_free` defaults
to true, and `packing: true` forces it on).

## Why is this bad?
Padding-free batching concatenates each micro batch into one row, so there
is no padding for length grouping to save; ms-swift refuses the combination
when it parses the Megatron arguments ("group_by_length is not compatible
with padding_free.").

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
ms-swift 3602360: swift/megatron/arguments/megatron_args.py:803-804
(`MegatronArguments.__post_init__`), padding_free default 524; packing forces
it on in swift/megatron/arguments/megatron_base_args.py:35-37.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


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
    doc=__doc__,
    examples=(
        Example("megatron_grouped_default.yaml", _CONFIG.format(padding=""), flagged=(5,)),
        Example("megatron_grouped_padded.yaml", _CONFIG.format(padding="padding_free: false\n")),
        Example("megatron_grouped_packed.yaml", _CONFIG.format(padding="padding_free: false\npacking: true\n"),
                flagged=(5,)),
    ),
)
