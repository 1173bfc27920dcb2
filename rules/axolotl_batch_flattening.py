"""
## What it does
Flags an axolotl config with `batch_flattening: true` together with
`sample_packing: true`, or without an attention backend that takes varlen
rows (`flash_attention_2`/`_3`, `flex_attention`, `xformers`, `sage` and their
kernels-community builds). `batch_flattening: auto` is fine: it turns itself
off where it cannot apply.

## Why is this bad?
Batch flattening concatenates the rows of an unpacked micro batch into one
varlen row: packed rows are already that, and only a varlen-capable kernel
keeps the samples apart. axolotl's validation refuses both ("batch_flattening
not compatible with sample_packing", "batch_flattening requires a
varlen-capable attention backend") before training.

## Example
```yaml
sample_packing: true
batch_flattening: true
```

## Use instead
```yaml
sample_packing: true
batch_flattening: auto
```

## Source
axolotl 067b021 (0.18.0): src/axolotl/utils/schemas/validation.py:966-1002
(`check_batch_flattening_fa`); utils/schemas/enums.py:136-147
(ATTN_IMPLS_SUPPORTING_PACKING).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    flattening, chosen = plan.settings.batch_flattening, plan.attention
    if flattening is None or flattening.value is not True:
        return
    impl = chosen.value
    if impl != "unknown" and impl not in VARLEN:
        shown = f"attention is {impl} (line {chosen.span.line})" if chosen.span is not None else "no attention backend is chosen"
        yield Finding(
            span=flattening.span,
            message=f"batch_flattening is true, but {shown}: flattened rows need a varlen-capable kernel and the "
                    f"config fails validation",
            fix="set attn_implementation: flash_attention_2 (or flex_attention), or batch_flattening: auto",
        )
        return  # validation stops at the first error
    packing = plan.packing
    if packing is not None and packing.value is True:
        yield Finding(
            span=flattening.span,
            message=f"batch_flattening is true together with sample_packing (line {packing.span.line}): packed rows "
                    f"cannot be flattened again and the config fails validation",
            fix="remove batch_flattening (or set it to auto), or turn sample_packing off",
            related=(Related("sample_packing enabled here", packing.span),),
        )


# Backends that take varlen rows (utils/schemas/enums.py:136-147).
VARLEN = {"flash_attention_2", "flash_attention_3", "flex_attention", "xformers", "sage",
          "kernels-community/flash-attn2", "kernels-community/flash-attn3", "kernels-community/sage-attention"}

_CONFIG = """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_2
sample_packing: true
batch_flattening: {flattening}
micro_batch_size: 4
gradient_accumulation_steps: 1
"""

RULE = Rule(
    code="BL352",
    name="axolotl-batch-flattening",
    severity="error",
    summary="axolotl: batch_flattening with sample_packing or without a varlen attention backend",
    check=check,
    needs=("settings", "attention"),
    frameworks=("axolotl",),
    doc=__doc__,
    examples=(
        Example("flatten_packed.yaml", _CONFIG.format(flattening="true"), flagged=(4,)),
        Example("flatten_auto.yaml", _CONFIG.format(flattening="auto")),
        Example("flatten_sdpa.yaml", _CONFIG.format(flattening="true").replace("flash_attention_2", "sdpa")
                .replace("sample_packing: true", "sample_packing: false"), flagged=(4,)),
        Example("flatten_unpacked.yaml", _CONFIG.format(flattening="true").replace("sample_packing: true",
                                                                                 "sample_packing: false")),
    ),
)
