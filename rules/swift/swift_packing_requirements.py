"""
## What it does
Flags an ms-swift config that enables `packing` or `padding_free` without a
flash-attention `attn_impl` (`flash_attn`, `flash_attention_2`, `_3` or `_4`;
it defaults to none), or for an `rlhf_type` that cannot pack (only `grpo`,
`dpo`, `kto` and `gkd` can).

## Why is this bad?
Packing and padding-free batching concatenate samples into one row and rely
on the flash-attention varlen kernel to keep them apart. ms-swift checks this
while it parses the arguments and refuses to start ("The "packing" feature
requires a flash attention implementation", "The current rlhf_type ... does
not support padding_free/packing"). Each check has its first release (see
Source): packing without flash attention 3.4.1, padding_free 3.5.0, an RLHF
type with padding_free 3.6.0, with packing 3.8.0.

## Example
```yaml
model: Qwen/Qwen2.5-7B-Instruct
packing: true
```

## Use instead
```yaml
model: Qwen/Qwen2.5-7B-Instruct
packing: true
attn_impl: flash_attn
```

## Source
ms-swift 4.6.0: swift/arguments/sft_args.py:186-197 (`_check_padding_free`,
called from `SftArguments.__post_init__`, 211), swift/arguments/rlhf_args.py:710-717;
attn_impl default None, swift/arguments/base_args/model_args.py:79. First refusals:
packing 3.4.1 (swift/llm/argument/train_args.py:139-141; 3.4.0 only warns),
padding_free 3.5.0 (train_args.py:135-143); the RLHF types: padding_free 3.6.0
(rlhf_args.py:322-327), packing 3.8.0 (rlhf_args.py:365-372; before it packing
turned padding_free off). Up to 3.6.4 only `flash_attn` counted; kto packs from 3.9.0.
"""

from collections.abc import Iterator

from batchlint.frameworks.releases import MS_SWIFT
from batchlint.frameworks.swift import SwiftSettings
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

_NEWEST_ATTN = "4.6.0 (PyPI wheel) swift/arguments/sft_args.py:186-197 (still)"
_NEWEST_RLHF = "4.6.0 (PyPI wheel) swift/arguments/rlhf_args.py:710-717 (still)"
ATTN_PACKING = Premise(
    MS_SWIFT, since="3.4.1", name="packing needs flash attention",
    source="v3.4.0 swift/llm/argument/train_args.py:139-141 (a warning); v3.4.1 train_args.py:139-141 (refused); "
           + _NEWEST_ATTN)
ATTN_PADDING_FREE = Premise(
    MS_SWIFT, since="3.5.0", name="padding_free needs flash attention",
    source="v3.4.1.post1 swift/llm/argument/train_args.py:139-141 (packing only); v3.5.0 train_args.py:135-143 "
           "(padding_free too); " + _NEWEST_ATTN)
RLHF_PADDING_FREE = Premise(
    MS_SWIFT, since="3.6.0", name="rlhf padding_free",
    source="v3.5.3 swift/llm/argument/rlhf_args.py (no check); v3.6.0 rlhf_args.py:322-327 (padding_free); "
           + _NEWEST_RLHF)
RLHF_PACKING = Premise(
    MS_SWIFT, since="3.8.0", name="rlhf packing",
    source="v3.7.3 swift/llm/argument/rlhf_args.py:358-363 (padding_free only; train_args.py sets padding_free "
           "false for packing); v3.8.0 rlhf_args.py:365-372 (padding_free/packing); " + _NEWEST_RLHF)

FLASH = ("flash_attn", "flash_attention_2", "flash_attention_3", "flash_attention_4")
PACKING_RLHF = ("grpo", "dpo", "kto", "gkd")


def check(plan: TrainingPlan, swift: SwiftSettings) -> Iterator[Finding]:
    enabled = [f for f in (swift.packing, swift.padding_free) if f is not None and f.value and f.span is not None]
    if not enabled:
        return
    feature, attn = enabled[0], swift.attn_impl
    impl = attn.value
    if impl not in FLASH and not swift.attn_impl_from_checkpoint:
        shown = f"attn_impl is {impl} (line {attn.span.line})" if attn.span is not None else "attn_impl is not set"
        yield Finding(
            span=feature.span,
            message=f"{feature.key} needs a flash-attention attn_impl, but {shown}",
            notes=(f"the flash-attention values are {', '.join(FLASH)}; ms-swift refuses to start",),
            fix="set attn_impl: flash_attn (or flash_attention_2/3/4)",
            related=(Related(f"attn_impl = {impl}", attn.span),) if attn.span is not None else (),
            premise="packing needs flash attention" if feature is swift.packing else "padding_free needs flash attention",
        )
    rlhf = plan.rl.algorithm if plan.rl is not None else None
    kind = rlhf.value if rlhf is not None else None
    if rlhf is not None and rlhf.span is not None and kind not in PACKING_RLHF:
        yield Finding(
            span=feature.span,
            message=f"{feature.key} is enabled with rlhf_type {kind} (line {rlhf.span.line})",
            notes=(f"ms-swift packs only for {', '.join(PACKING_RLHF)} and refuses to start",),
            fix=f"set {feature.key}: false",
            related=(Related(f"rlhf_type = {kind}", rlhf.span),),
            # Up to 3.7.x packing turned padding_free off before the RLHF check: refused from 3.8.0.
            premise="rlhf packing" if feature is swift.packing else "rlhf padding_free",
        )


RULE = Rule(
    code="BL356",
    name="swift-packing-requirements",
    severity="error",
    summary="ms-swift: packing or padding_free without a flash attn_impl, or for an RLHF type that cannot pack",
    check=check,
    subject=SwiftSettings,
    premises=(ATTN_PACKING, ATTN_PADDING_FREE, RLHF_PADDING_FREE, RLHF_PACKING),
    doc=__doc__,
    examples=(
        # No release pinned: 3.4.0 and older take packing without flash attention.
        Example("packing_no_attn.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(5,), severity="info",
                message="packing needs a flash-attention attn_impl, but attn_impl is not set",
                fix="set attn_impl: flash_attn (or flash_attention_2/3/4)"),
        Example("packing_no_attn_pinned.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(5,), files=(("requirements.txt", "ms-swift>=3.5\n"),), severity="error",
                message="packing needs a flash-attention attn_impl, but attn_impl is not set",
                fix="set attn_impl: flash_attn (or flash_attention_2/3/4)"),
        Example("packing_no_attn_old.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", files=(("requirements.txt", "ms-swift==3.4.0\n"),)),
        Example("packing_flash.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
attn_impl: flash_attn
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""),
        Example("packing_sdpa.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
attn_impl: sdpa
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(5,), severity="info",
                message="packing needs a flash-attention attn_impl, but attn_impl is sdpa (line 6)",
                fix="set attn_impl: flash_attn (or flash_attention_2/3/4)"),
        Example("packing_orpo.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
attn_impl: flash_attn
rlhf_type: orpo
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(5,), severity="info",
                message="packing is enabled with rlhf_type orpo (line 7)",
                fix="set packing: false"),
        Example("packing_orpo_pinned.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
attn_impl: flash_attn
rlhf_type: orpo
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(5,), files=(("requirements.txt", "ms-swift==3.8.0\n"),), severity="error",
                message="packing is enabled with rlhf_type orpo (line 7)",
                fix="set packing: false"),
        Example("packing_orpo_before.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
attn_impl: flash_attn
rlhf_type: orpo
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", files=(("requirements.txt", "ms-swift==3.7.3\n"),)),
        Example("padding_free_orpo_3_6.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
padding_free: true
attn_impl: flash_attn
rlhf_type: orpo
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
""", flagged=(5,), files=(("requirements.txt", "ms-swift==3.6.0\n"),), severity="error",
                message="padding_free is enabled with rlhf_type orpo (line 7)",
                fix="set padding_free: false"),
        Example("packing_dpo.yaml", """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
attn_impl: flash_attn
rlhf_type: dpo
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""),
    ),
)
