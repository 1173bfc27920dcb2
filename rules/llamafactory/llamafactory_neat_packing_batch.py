"""
## What it does
Flags a LLaMA-Factory config with `neat_packing: true` and `flash_attn: fa2`
whose `per_device_train_batch_size` is not 1 (it defaults to 8).

## Why is this bad?
With FlashAttention-2, neat packing feeds one packed row per step and lets
the varlen kernel keep the packed samples apart: the SFT collator asserts
"bsz should be 1 for neat packing" on the first batch, so the job dies once
the model is loaded and the data is tokenized. The assertion is new in 0.9.5:
older releases pack with any batch size.

## Example
```yaml
neat_packing: true
flash_attn: fa2
per_device_train_batch_size: 4
```

## Use instead
```yaml
neat_packing: true
flash_attn: fa2
per_device_train_batch_size: 1
gradient_accumulation_steps: 4   # keeps the batch per optimizer step
```

## Source
LLaMA-Factory v0.9.5: src/llamafactory/data/collator.py:527-528
(`SFTDataCollatorWith4DAttentionMask.__call__`), model/model_utils/attention.py:75-82
(fa2 -> flash_attention_2 when flash-attn is installed; 34-43 gpt-oss runs FA3),
train/sft/workflow.py:61-71. New in 0.9.5 (833f602, "fit neat_packing & mrope
model packing"): up to 0.9.4 neat packing with FlashAttention-2 takes any batch
size (collator.py of v0.9.4 has no such assertion).
"""

from collections.abc import Iterator

from batchlint.frameworks.llamafactory import LlamaFactorySettings
from batchlint.frameworks.releases import LLAMAFACTORY
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

ONE_ROW = Premise(
    LLAMAFACTORY, since="0.9.5", runs_since="0.8.3",
    source="v0.8.2 (no neat_packing); v0.9.4 src/llamafactory/data/collator.py (SFTDataCollatorWith4DAttentionMask asserts nothing on the "
           "batch size); v0.9.5 src/llamafactory/data/collator.py:527-528 (first)")


def check(plan: TrainingPlan, llamafactory: LlamaFactorySettings) -> Iterator[Finding]:
    micro = plan.micro_batch
    neat, attn = llamafactory.neat_packing, llamafactory.flash_attn
    if neat is None or neat.value is not True or attn is None or attn.value != "fa2" or llamafactory.stage.value != "sft":
        return
    if micro is None or not micro.known or micro.value == 1 or "tp" in plan.parallel:
        return  # Megatron (MCA) runs use their own collator
    span = micro.span or neat.span
    if llamafactory.gpt_oss or span is None:
        return  # LLaMA-Factory runs gpt-oss with FlashAttention-3, not the fa2 path
    related = (Related("neat_packing enabled here", neat.span), Related("flash_attn = fa2", attn.span))
    yield Finding(
        span=span,
        message=f"{micro.describe()} is not 1; neat_packing with flash_attn fa2 needs 1",
        notes=("neat_packing with flash_attn fa2 collates one packed row per step and asserts "
               "'bsz should be 1 for neat packing' on the first batch",),
        fix=f"set per_device_train_batch_size: 1 and multiply gradient_accumulation_steps by {micro.value}",
        related=related,
    )


RULE = Rule(
    code="BL354",
    name="llamafactory-neat-packing-batch",
    severity="error",
    summary="LLaMA-Factory: neat_packing with FlashAttention-2 and a micro batch other than 1",
    check=check,
    subject=LlamaFactorySettings,
    premises=(ONE_ROW,),
    doc=__doc__,
    examples=(
        # No release pinned: up to 0.9.4 neat packing takes any batch size.
        Example("neat_fa2_mb4.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
finetuning_type: lora
flash_attn: fa2
neat_packing: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
""", flagged=(7,), severity="info",
                message="per_device_train_batch_size (4) is not 1; neat_packing with flash_attn fa2 needs 1",
                fix="set per_device_train_batch_size: 1 and multiply gradient_accumulation_steps by 4"),
        Example("neat_fa2_mb4_pinned.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
finetuning_type: lora
flash_attn: fa2
neat_packing: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
""", flagged=(7,), files=(("requirements.txt", "llamafactory==0.9.5\n"),), severity="error",
                message="per_device_train_batch_size (4) is not 1; neat_packing with flash_attn fa2 needs 1",
                fix="set per_device_train_batch_size: 1 and multiply gradient_accumulation_steps by 4"),
        Example("neat_fa2_mb4_old.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
finetuning_type: lora
flash_attn: fa2
neat_packing: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
""", files=(("requirements.txt", "llamafactory==0.9.4\n"),)),
        Example("neat_fa2_mb1.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
finetuning_type: lora
flash_attn: fa2
neat_packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 4
"""),
        Example("neat_fa2_default.yaml", """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
finetuning_type: lora
flash_attn: fa2
neat_packing: true
gradient_accumulation_steps: 4
""", flagged=(6,), severity="info",
                message="per_device_train_batch_size (default 8) is not 1; neat_packing with flash_attn fa2 "
                        "needs 1",
                fix="set per_device_train_batch_size: 1 and multiply gradient_accumulation_steps by 8"),
    ),
)
