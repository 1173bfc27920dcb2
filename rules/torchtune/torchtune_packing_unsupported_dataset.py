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

By release: `the_cauldron_dataset` and `llava_instruct_dataset` refuse from
torchtune 0.3.1 (0.3.0 packed them); the preference builders,
`multimodal_chat_dataset` and `vqa_dataset` from 0.5.0 (before, they took no
`packed` and handed it on to Hugging Face's `load_dataset`).

## Source
torchtune/datasets/_preference.py:112-115 @ v0.5.0 and v0.6.1 (the preference
builders pass `packed` on to PreferenceDataset); datasets/multimodal/
_the_cauldron.py:231 and _llava_instruct.py:136 @ v0.3.1, :220 and :122 @
v0.6.1; _multimodal.py:180 and _vqa.py:133 @ v0.5.0 and v0.6.1.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import TORCHTUNE
from batchlint.frameworks.torchtune import TorchtuneSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Rule

PREFERENCE = Premise(
    TORCHTUNE, name="preference", since="0.5.0",
    source="v0.4.0 torchtune/datasets/_preference.py (no packed argument: it goes to load_dataset); v0.5.0 "
           "torchtune/datasets/_preference.py:112-115 (first); v0.6.1 torchtune/datasets/_preference.py:112-115 (still)")
MULTIMODAL = Premise(
    TORCHTUNE, name="the_cauldron, llava_instruct", since="0.3.1",
    source="v0.3.0 torchtune/datasets/multimodal/_the_cauldron.py:229-234, _llava_instruct.py:241-246 (packs them); "
           "v0.3.1 _the_cauldron.py:231, _llava_instruct.py:136 (first); v0.6.1 _the_cauldron.py:220, "
           "_llava_instruct.py:122 (still)")
MULTIMODAL_CHAT = Premise(
    TORCHTUNE, name="multimodal_chat, vqa", since="0.5.0",
    source="v0.4.0 torchtune/datasets/multimodal/_multimodal.py, _vqa.py (no packed argument: it goes to "
           "load_dataset); v0.5.0 _multimodal.py:180, _vqa.py:133 (first); v0.6.1 _multimodal.py:180, _vqa.py:133 (still)")


def _premise(builder: str, kind: str) -> Premise:
    if kind == "preference":
        return PREFERENCE
    return MULTIMODAL if builder in ("the_cauldron_dataset", "llava_instruct_dataset") else MULTIMODAL_CHAT


def check(plan: TrainingPlan, torchtune: TorchtuneSettings) -> Iterator[Finding]:
    for dataset in torchtune.packed_datasets:
        packed = dataset.packed
        if dataset.unpackable is None or packed.span is None:
            continue
        yield Finding(
            span=packed.span,
            message=f"packed: True (line {packed.span.line}) asks to pack {dataset.builder},"
                    f" a {dataset.unpackable} dataset torchtune cannot pack",
            notes=(f"{dataset.builder} raises at start-up when asked to pack",),
            fix="remove packed (or set packed: False)",
            premise=_premise(dataset.builder, dataset.unpackable).name,
        )


RULE = Rule(
    code="BL311",
    name="torchtune-packing-unsupported-dataset",
    severity="error",
    summary="torchtune: packed: True on a preference or multimodal dataset",
    check=check,
    subject=TorchtuneSettings,
    premises=(PREFERENCE, MULTIMODAL, MULTIMODAL_CHAT),
    doc=__doc__,
    examples=(
        # No release pinned: releases before 0.5.0 do not refuse packed preference datasets in torchtune.
        Example("tune_dpo_packed.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
  packed: True
batch_size: 4
""", flagged=(5,),
                message="packed: True (line 5) asks to pack stack_exchange_paired_dataset, a preference dataset "
                        "torchtune cannot pack",
                fix="remove packed (or set packed: False)",
                severity="info"),
        Example("tune_dpo_packed_pinned.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
  packed: True
batch_size: 4
""", flagged=(5,),
                message="packed: True (line 5) asks to pack stack_exchange_paired_dataset, a preference dataset "
                        "torchtune cannot pack",
                fix="remove packed (or set packed: False)",
                files=(("requirements.txt", "torchtune==0.5.0\n"),),
                severity="error"),
        Example("tune_dpo_packed_before.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
  packed: True
batch_size: 4
""", files=(("requirements.txt", "torchtune==0.4.0\n"),)),
        Example("tune_dpo_unpacked.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.stack_exchange_paired_dataset
  packed: False
batch_size: 4
"""),
        Example("tune_vision_packed.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.multimodal.the_cauldron_dataset
  packed: True
batch_size: 4
""", flagged=(5,),
                message="packed: True (line 5) asks to pack the_cauldron_dataset, a multimodal dataset torchtune "
                        "cannot pack",
                fix="remove packed (or set packed: False)",
                severity="info"),
        Example("tune_vision_packed_pinned.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.multimodal.the_cauldron_dataset
  packed: True
batch_size: 4
""", flagged=(5,),
                message="packed: True (line 5) asks to pack the_cauldron_dataset, a multimodal dataset torchtune "
                        "cannot pack",
                fix="remove packed (or set packed: False)",
                files=(("requirements.txt", "torchtune==0.3.1\n"),),
                severity="error"),
        Example("tune_vision_packed_0_3_0.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.multimodal.the_cauldron_dataset
  packed: True
batch_size: 4
""", files=(("requirements.txt", "torchtune==0.3.0\n"),)),
        Example("tune_vqa_packed_pinned.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.multimodal.vqa_dataset
  packed: True
batch_size: 4
""", flagged=(5,),
                message="packed: True (line 5) asks to pack vqa_dataset, a multimodal dataset torchtune cannot pack",
                fix="remove packed (or set packed: False)",
                files=(("requirements.txt", "torchtune==0.6.1\n"),),
                severity="error"),
        Example("tune_vqa_packed_0_4.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.multimodal.vqa_dataset
  packed: True
batch_size: 4
""", files=(("requirements.txt", "torchtune==0.4.0\n"),)),
        Example("tune_sft_packed.yaml", """\
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True
batch_size: 4
"""),
    ),
)
