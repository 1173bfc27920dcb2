"""
## What it does
Flags a TRL SFT config with `padding_free: true`, packing off and a
`max_length` (1024 unless set to null).

## Why is this bad?
Padding-free batches are flattened into one sequence without truncation, so
`max_length` would not be enforced; since TRL 1.0 SFTTrainer refuses the
combination at start-up ("When `padding_free=True` without packing,
`max_length` is not enforced"), and for a vision dataset it refuses
padding-free training altogether.

## Example
```yaml
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: false
padding_free: true
max_length: 2048
```

## Use instead
```yaml
model_name_or_path: Qwen/Qwen2.5-0.5B
packing: true          # packing_strategy "bfd" (the default) is padding-free
max_length: 2048
```
or keep `padding_free: true` with `max_length: null` and inputs you
truncated yourself.

## Source
trl/trainer/sft_trainer.py:999-1004 (the error), 783-787 (vision datasets),
916 (bfd packing implies padding-free); sft_config.py:202-209 (`max_length`
default 1024), 222, 238 @ 1.16.0; the check first appears in 1.0.0
(sft_trainer.py:924-929); 0.29.1 has none and truncates the dataset to
`max_length` while preparing it (sft_trainer.py:1174-1177), so the config
runs there.
"""

from collections.abc import Iterator

from batchlint.frameworks.hf import TRLSettings
from batchlint.frameworks.releases import TRL
from batchlint.plan import Origin, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    TRL, since="1.0.0",
    source="v0.29.1 trl/trainer/sft_trainer.py:1174-1177 (no such check: the dataset is truncated to max_length); "
           "v1.0.0 trl/trainer/sft_trainer.py:924-929 (first); v1.16.0 trl/trainer/sft_trainer.py:999-1004 (still)")


def check(plan: TrainingPlan, trl: TRLSettings) -> Iterator[Finding]:
    args = trl.sft
    if args is None:
        return  # not an SFT config: DPO's padding_free means something else
    padding_free, packing, max_length = args.padding_free, args.packing, args.max_length
    if padding_free is None or not padding_free.value:
        return
    if args.packing_unreadable or (packing is not None and packing.value):
        return
    if max_length.value is None:
        return
    length = f"max_length (default {max_length.value})" if max_length.origin is Origin.DEFAULT else f"max_length ({max_length.value})"
    related = tuple(
        Related(text, fact.span) for text, fact in (("packing is off here", packing),
                                                    (f"{length} set here", max_length)) if fact is not None and fact.span
    )
    yield Finding(
        span=padding_free.span,
        message=f"padding_free without packing cannot enforce {length}",
        notes=(f"packing is {'off' if packing is not None else 'off (default)'}: without it, padding-free batches "
               f"are not truncated to {length}, and TRL 1.0 and later refuse to start",),
        fix="turn packing on (its default bfd strategy is padding-free), or set max_length: null and truncate the data yourself",
        related=related,
    )


RULE = Rule(
    code="BL320",
    name="trl-padding-free-without-packing",
    severity="error",
    summary="TRL SFT: padding_free without packing while max_length is set",
    check=check,
    subject=TRLSettings,
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        # No TRL release pinned: before 1.0 SFTTrainer truncates the dataset to max_length instead.
        Example("sft_padding_free.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: false
padding_free: true
max_length: 2048
""", flagged=(4,), severity="info",
                message="padding_free without packing cannot enforce max_length (2048)",
                fix="turn packing on (its default bfd strategy is padding-free), or set max_length: null and truncate "
                    "the data yourself"),
        Example("sft_padding_free_pinned.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: false
padding_free: true
max_length: 2048
""", flagged=(4,), files=(("requirements.txt", "trl==1.0.0\n"),), severity="error",
                message="padding_free without packing cannot enforce max_length (2048)",
                fix="turn packing on (its default bfd strategy is padding-free), or set max_length: null and truncate "
                    "the data yourself"),
        Example("sft_padding_free_pinned_old.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: false
padding_free: true
max_length: 2048
""", files=(("requirements.txt", "trl==0.29.1\n"),)),
        Example("sft_padding_free_packed.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: true
padding_free: true
max_length: 2048
"""),
        Example("sft_padding_free_no_limit.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: false
padding_free: true
max_length: null
"""),
        Example("swift_padding_free.yaml", """\
model: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
packing: false
padding_free: true
max_length: 2048
"""),
        Example("dpo_padding_free.yaml", """\
model_name_or_path: Qwen/Qwen2.5-0.5B
per_device_train_batch_size: 4
padding_free: true
beta: 0.1
"""),
    ),
)
