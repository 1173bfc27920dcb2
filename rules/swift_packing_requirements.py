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
not support padding_free/packing").

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
ms-swift 3602360: swift/arguments/sft_args.py:185-196 (`_check_padding_free`,
called from `SftArguments.__post_init__`), swift/arguments/rlhf_args.py:709-717;
attn_impl default swift/arguments/base_args/model_args.py:79.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule

FLASH = ("flash_attn", "flash_attention_2", "flash_attention_3", "flash_attention_4")
PACKING_RLHF = ("grpo", "dpo", "kto", "gkd")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    args = plan.settings
    enabled = [f for f in (args.packing, args.padding_free) if f is not None and f.value]
    if not enabled:
        return
    feature, attn = enabled[0], args.attn_impl
    impl = attn.value
    if impl not in FLASH and not args.attn_impl_from_checkpoint:
        shown = f"attn_impl is {impl} (line {attn.span.line})" if attn.span is not None else "attn_impl is not set"
        yield Finding(
            span=feature.span,
            message=f"{feature.key} needs a flash-attention attn_impl ({', '.join(FLASH)}), but {shown}: "
                    f"ms-swift refuses to start",
            fix="set attn_impl: flash_attn (or flash_attention_2/3/4)",
            related=(Related(f"attn_impl = {impl}", attn.span),) if attn.span is not None else (),
        )
    rlhf = plan.rl.algorithm if plan.rl is not None else None
    kind = rlhf.value if rlhf is not None else None
    if rlhf is not None and kind not in PACKING_RLHF:
        yield Finding(
            span=feature.span,
            message=f"{feature.key} is enabled with rlhf_type {kind} (line {rlhf.span.line}); ms-swift packs only for "
                    f"{', '.join(PACKING_RLHF)} and refuses to start",
            fix=f"set {feature.key}: false",
            related=(Related(f"rlhf_type = {kind}", rlhf.span),),
        )


_CONFIG = """\
model: Qwen/Qwen2.5-7B-Instruct
tuner_type: lora
dataset: swift/self-cognition#1000
max_length: 2048
packing: true
{attention}per_device_train_batch_size: 1
gradient_accumulation_steps: 8
"""

RULE = Rule(
    code="BL356",
    name="swift-packing-requirements",
    severity="error",
    summary="ms-swift: packing or padding_free without a flash attn_impl, or for an RLHF type that cannot pack",
    check=check,
    needs=("settings.attn_impl",),
    doc=__doc__,
    examples=(
        Example("packing_no_attn.yaml", _CONFIG.format(attention=""), flagged=(5,)),
        Example("packing_flash.yaml", _CONFIG.format(attention="attn_impl: flash_attn\n")),
        Example("packing_sdpa.yaml", _CONFIG.format(attention="attn_impl: sdpa\n"), flagged=(5,)),
        Example("packing_orpo.yaml", _CONFIG.format(attention="attn_impl: flash_attn\nrlhf_type: orpo\n"), flagged=(5,)),
        Example("packing_dpo.yaml", _CONFIG.format(attention="attn_impl: flash_attn\nrlhf_type: dpo\n")),
    ),
)
