"""
## What it does
Flags `packed: True` on a torchtune dataset builder that cannot pack:
preference datasets (`preference_dataset`, `stack_exchange_paired_dataset`,
`hh_rlhf_helpful_dataset`, used for DPO) and multimodal datasets
(`the_cauldron_dataset`, `llava_instruct_dataset`, `multimodal_chat_dataset`,
`vqa_dataset`).

## Why is this bad?
These builders raise "Packed is currently not supported for preference
datasets." and "Multimodal datasets don't support packing yet." when the
recipe sets up its data, after the model has been loaded.

## Example
```yaml
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
  packed: True
```

## Use instead
```yaml
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
```

## Source
torchtune @ bd2a0fc: torchtune/datasets/_preference.py:112-115 (the preference
builders pass `packed` on to PreferenceDataset); torchtune/datasets/multimodal/
_the_cauldron.py:219-220, _llava_instruct.py:121-122, _multimodal.py:178-179,
_vqa.py:132-133.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    for dataset in plan.settings.packed_datasets:
        if dataset.unpackable is None:
            continue
        yield Finding(
            span=dataset.packed.span,
            message=f"packed: True (line {dataset.packed.span.line}) asks to pack {dataset.builder},"
                    f" a {dataset.unpackable} dataset torchtune cannot pack: its builder raises at start-up",
            fix="remove packed (or set packed: False)",
        )


_TUNE = """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.{builder}
  packed: {packed}
batch_size: 4
"""

RULE = Rule(
    code="BL311",
    name="torchtune-packing-unsupported-dataset",
    severity="error",
    summary="torchtune: packed: True on a preference or multimodal dataset",
    check=check,
    needs=("settings.packed_datasets",),
    doc=__doc__,
    examples=(
        Example("tune_dpo_packed.yaml", _TUNE.format(builder="stack_exchange_paired_dataset", packed="True"), flagged=(5,)),
        Example("tune_dpo_unpacked.yaml", _TUNE.format(builder="stack_exchange_paired_dataset", packed="False")),
        Example("tune_vision_packed.yaml", _TUNE.format(builder="multimodal.the_cauldron_dataset", packed="True"), flagged=(5,)),
        Example("tune_sft_packed.yaml", _TUNE.format(builder="alpaca_cleaned_dataset", packed="True")),
    ),
)
