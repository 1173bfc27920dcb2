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
varlen-capable attention backend") before training. The check exists from
0.7.0, the release that added the key; up to 0.16.1 it asked for the legacy
`flash_attention: true` flag, and from 0.19.0 `flash_attention_4`,
`flash_attention_torch` and hub kernels with an `@revision` count as varlen
(flagged with those only for a project on 0.18.0 or older).

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
axolotl v0.18.0: src/axolotl/utils/schemas/validation.py:966-1002
(`check_batch_flattening_fa`); utils/schemas/enums.py:136-147
(ATTN_IMPLS_SUPPORTING_PACKING). 0.19.0: axolotl/utils/schemas/validation.py:
1075-1089, enums.py:142-155 (adds flash_attention_4, flash_attention_torch),
config.py:1501-1502 (`attn_impl_base` strips a hub kernel's suffix). First:
v0.7.0 src/axolotl/utils/config/models/input/v0_4_1/__init__.py:1057-1063.
"""

from collections.abc import Iterator

from batchlint.frameworks.axolotl import AxolotlSettings
from batchlint.frameworks.releases import AXOLOTL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

_FIRST = "v0.6.0 (no batch_flattening); v0.7.0 src/axolotl/utils/config/models/input/v0_4_1/__init__.py:1057-1063"
_NEWEST = "0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:1083-1089 (still)"
# batch_flattening is new in 0.7.0: older releases cannot run such a config.
ATTENTION = Premise(AXOLOTL, since="0.7.0", runs_since="0.7.0", name="attention", source=f"{_FIRST} (first); {_NEWEST}")
VARLEN_FROM_0_19 = Premise(
    AXOLOTL, since="0.7.0", until="0.18.0", runs_since="0.7.0", name="varlen from 0.19.0",
    source=f"{_FIRST} (first); v0.18.0 src/axolotl/utils/schemas/enums.py:136-147 (last without them); "
           "0.19.0 (PyPI wheel) axolotl/utils/schemas/enums.py:142-155 and config.py:1501-1502 (varlen)")
PACKING = Premise(AXOLOTL, since="0.7.0", runs_since="0.7.0", name="sample_packing",
                  source=f"{_FIRST} (first); {_NEWEST}")


def check(plan: TrainingPlan, axolotl: AxolotlSettings) -> Iterator[Finding]:
    flattening, chosen = axolotl.batch_flattening, plan.attention
    if flattening is None or flattening.value is not True or flattening.span is None or chosen is None:
        return  # attention is present (needs): that guard is for the type checker
    impl = chosen.value
    if impl != "unknown" and impl not in VARLEN:
        base = impl.split(":", 1)[0].split("@", 1)[0].strip() if isinstance(impl, str) else impl
        shown = f"attention is {impl} (line {chosen.span.line})" if chosen.span is not None else "no attention backend is chosen"
        yield Finding(
            span=flattening.span,
            message=f"batch_flattening is true, but {shown}",
            notes=("flattened rows need a varlen-capable kernel (flash_attention_2/3, flex_attention, xformers, "
                   "sage); the config fails validation",),
            fix="set attn_implementation: flash_attention_2 (or flex_attention), or batch_flattening: auto",
            premise="varlen from 0.19.0" if base in VARLEN_0_19 else "attention",
        )
        return  # validation stops at the first error
    packing = plan.packing
    if packing is not None and packing.value is True and packing.span is not None:
        yield Finding(
            span=flattening.span,
            message=f"batch_flattening is true together with sample_packing (line {packing.span.line})",
            notes=("packed rows cannot be flattened again; the config fails validation",),
            fix="remove batch_flattening (or set it to auto), or turn sample_packing off",
            related=(Related("sample_packing enabled here", packing.span),),
            premise="sample_packing",
        )


# Backends that take varlen rows (utils/schemas/enums.py:136-147 @ v0.18.0), and those 0.19.0 adds
# (enums.py:142-155), which also strips a hub kernel's `@revision`/`:name` first.
VARLEN = {"flash_attention_2", "flash_attention_3", "flex_attention", "xformers", "sage",
          "kernels-community/flash-attn2", "kernels-community/flash-attn3", "kernels-community/sage-attention"}
VARLEN_0_19 = VARLEN | {"flash_attention_4", "flash_attention_torch"}

RULE = Rule(
    code="BL352",
    name="axolotl-batch-flattening",
    severity="error",
    summary="axolotl: batch_flattening with sample_packing or without a varlen attention backend",
    check=check,
    subject=AxolotlSettings,
    needs=("attention",),
    premises=(ATTENTION, VARLEN_FROM_0_19, PACKING),
    doc=__doc__,
    examples=(
        # No release pinned: every release that knows batch_flattening (0.7.0 on) refuses it.
        Example("flatten_packed.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_2
sample_packing: true
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
""", flagged=(4,), severity="error",
                message="batch_flattening is true together with sample_packing (line 3)",
                fix="remove batch_flattening (or set it to auto), or turn sample_packing off"),
        Example("flatten_packed_pinned.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_2
sample_packing: true
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
""", flagged=(4,), files=(("requirements.txt", "axolotl==0.7.0\n"),), severity="error",
                message="batch_flattening is true together with sample_packing (line 3)",
                fix="remove batch_flattening (or set it to auto), or turn sample_packing off"),
        Example("flatten_packed_old.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_2
sample_packing: true
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
""", files=(("requirements.txt", "axolotl==0.6.0\n"),)),
        Example("flatten_auto.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_2
sample_packing: true
batch_flattening: auto
micro_batch_size: 4
gradient_accumulation_steps: 1
"""),
        Example("flatten_sdpa.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: sdpa
sample_packing: false
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
""", flagged=(4,), severity="error",
                message="batch_flattening is true, but attention is sdpa (line 2)",
                fix="set attn_implementation: flash_attention_2 (or flex_attention), or batch_flattening: "
                    "auto"),
        Example("flatten_unpacked.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_2
sample_packing: false
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
"""),
        Example("flatten_fa4_pinned_old.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_4
sample_packing: false
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
""", flagged=(4,), files=(("requirements.txt", "axolotl==0.18.0\n"),), severity="error",
                message="batch_flattening is true, but attention is flash_attention_4 (line 2)",
                fix="set attn_implementation: flash_attention_2 (or flex_attention), or batch_flattening: "
                    "auto"),
        Example("flatten_fa4_pinned_new.yaml", """\
base_model: NousResearch/Llama-3.2-1B
attn_implementation: flash_attention_4
sample_packing: false
batch_flattening: true
micro_batch_size: 4
gradient_accumulation_steps: 1
""", files=(("requirements.txt", "axolotl==0.19.0\n"),)),
    ),
)
