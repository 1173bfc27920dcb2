"""
## What it does
Flags a TRL SFT config that turns `packing` on while its `dataset_kwargs`
says `skip_prepare_dataset: true`.

## Why is this bad?
SFTTrainer packs the data while it prepares the dataset; with
`skip_prepare_dataset` it hands the dataset to the collator as it is, so
nothing is packed: every step trains on unpacked, padded sequences while the
config says packing. No warning is given. (From TRL 0.20 the "bfd" packing
strategy still makes the collator padding-free, but the data is not packed.)

## Example
```yaml
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
packing: true
dataset_kwargs:
  skip_prepare_dataset: true
```

## Use instead
```yaml
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
packing: false          # the collator batches the raw data itself
dataset_kwargs:
  skip_prepare_dataset: true
```
or drop `skip_prepare_dataset` so that SFTTrainer prepares, and packs, the data.

## Source
TRL v0.13.0 trl/trainer/sft_trainer.py:265-275 (`_prepare_dataset(..., **args.dataset_kwargs)`), 349-350
(`if skip_prepare_dataset: return dataset`, before packing); v0.16.0 sft_trainer.py:192-196
(preparation, and with it packing, only without skip_prepare_dataset); v1.9.0 sft_trainer.py:1252-1263;
1.16.0 sft_trainer.py:1007-1027 (still), 1480 (`pack_dataset`, inside `_prepare_dataset`).
"""

from collections.abc import Iterator

from batchlint.frameworks.hf import TRLSettings
from batchlint.frameworks.releases import TRL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

IGNORED = Premise(
    TRL, since="0.13.0",
    source="v0.13.0 trl/trainer/sft_trainer.py:265-275, 349-350 (the preparation that packs returns first when "
           "skip_prepare_dataset is set); v1.16.0 trl/trainer/sft_trainer.py:1007-1027, 1480 (still)")


def check(plan: TrainingPlan, trl: TRLSettings) -> Iterator[Finding]:
    args = trl.sft
    if args is None:
        return  # not an SFT config
    skip, packing = args.skip_prepare_dataset, args.packing
    if skip is None or packing is None or packing.value is not True:
        return
    yield Finding(
        span=packing.span,
        message="packing is on, but dataset_kwargs.skip_prepare_dataset is true: the data is not packed",
        notes=("SFTTrainer packs while it prepares the dataset, which skip_prepare_dataset skips: training runs "
               "on the data as it is",),
        fix="set packing: false (the collator batches the data as it is), or remove skip_prepare_dataset",
        related=(Related("skip_prepare_dataset set here", skip.span),) if skip.span else (),
    )


RULE = Rule(
    code="BL561",
    name="trl-packing-skipped-preparation",
    severity="warning",
    summary="TRL SFT: packing on while dataset_kwargs skips the dataset preparation that packs",
    check=check,
    subject=TRLSettings,
    premises=(IGNORED,),
    doc=__doc__,
    examples=(
        Example("sft_packing_skipped.yaml", """\
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
per_device_train_batch_size: 4
packing: true
dataset_kwargs:
  skip_prepare_dataset: true
""", flagged=(3,), severity="info",
                message="packing is on, but dataset_kwargs.skip_prepare_dataset is true: the data is not packed",
                fix="set packing: false (the collator batches the data as it is), or remove skip_prepare_dataset"),
        Example("sft_packing_skipped_pinned.yaml", """\
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
per_device_train_batch_size: 4
packing: true
dataset_kwargs:
  skip_prepare_dataset: true
""", flagged=(3,), files=(("requirements.txt", "trl==0.19.0\n"),), severity="warning",
                message="packing is on, but dataset_kwargs.skip_prepare_dataset is true: the data is not packed",
                fix="set packing: false (the collator batches the data as it is), or remove skip_prepare_dataset"),
        Example("sft_unpacked_skipped.yaml", """\
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
per_device_train_batch_size: 4
packing: false
dataset_kwargs:
  skip_prepare_dataset: true
"""),
        Example("sft_packing_prepared.yaml", """\
model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct
per_device_train_batch_size: 4
packing: true
dataset_kwargs:
  skip_prepare_dataset: false
"""),
    ),
)
