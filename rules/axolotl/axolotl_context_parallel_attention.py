"""
## What it does
Flags an axolotl config with `context_parallel_size` (or the deprecated
`sequence_parallel_degree`) above 1 whose attention is not a flash-attn
backend: `attn_implementation` other than `flash_attention_2`/`_3` (or their
kernels-community builds), a legacy flag that maps to another backend, or no
attention chosen at all. From 0.19.0 only `flash_attention_2` runs ring
attention: `flash_attention_3` and the kernels-community builds are refused
too (flagged for a project on 0.19.0 or later).

## Why is this bad?
axolotl's context parallelism runs ring attention from `ring-flash-attn`,
which needs the flash-attn kernels: config validation refuses anything else
("context_parallel_size > 1 requires flash attention") before the model is
loaded, after the job got its GPUs. The check reads `sequence_parallel_degree`
from 0.8.0 and `context_parallel_size` from 0.12.0 (older releases do not know
the key, and cannot run such a config); up to 0.16.1 it asked for the legacy
`flash_attention: true` flag.

## Example
```yaml
context_parallel_size: 2
attn_implementation: sdpa
```

## Use instead
```yaml
context_parallel_size: 2
attn_implementation: flash_attention_2
```

## Source
axolotl v0.18.0: src/axolotl/utils/schemas/validation.py:1633-1658
(`check_context_parallel_size`); utils/schemas/enums.py:117-156 (legacy flags,
ATTN_IMPLS_USING_FLASH_LIB); utils/schemas/config.py:1527-1570 (flag mapping).
0.19.0: axolotl/utils/schemas/validation.py:1784-1809 (`attn_impl_base(...) !=
"flash_attention_2"`); v0.8.0 src/axolotl/utils/schemas/config.py:1115-1125
and v0.12.0 utils/schemas/validation.py:1231-1244 (the keys' first checks).
GLM DSA kernels (`use_glm_dsa_kernels`) bring their own attention and are exempt.
"""

from collections.abc import Iterator

from batchlint.frameworks.axolotl import FLASH_LIB, AxolotlSettings
from batchlint.frameworks.releases import AXOLOTL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

_NEWEST = "0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:1784-1809 (still)"
# The check reads each key from the release that introduced it; older releases ignore the key.
DEGREE = Premise(
    AXOLOTL, since="0.8.0", runs_since="0.8.0", name="sequence_parallel_degree",
    source="v0.7.0 and v0.7.1 (no sequence_parallel_degree field: they cannot run such a config); "
           "v0.8.0 src/axolotl/utils/schemas/config.py:1115-1125 "
           f"(\"flash_attention: true must be set with sequence_parallel_degree > 1\"); {_NEWEST}")
CONTEXT = Premise(
    AXOLOTL, since="0.12.0", runs_since="0.12.0", name="context_parallel_size",
    source="v0.11.0 (no context_parallel_size field: it cannot run such a config); "
           f"v0.12.0 src/axolotl/utils/schemas/validation.py:1231-1244 (first); {_NEWEST}")
FA2_ONLY = Premise(
    AXOLOTL, since="0.19.0", name="flash_attention_2 only",
    source="v0.18.0 src/axolotl/utils/schemas/validation.py:1652-1657 (`attn_uses_flash_lib`: fa2, fa3 and the "
           "kernels-community builds pass); 0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:1803-1809 "
           "(only flash_attention_2, suffix stripped by enums.py:171-175)")


def check(plan: TrainingPlan, axolotl: AxolotlSettings) -> Iterator[Finding]:
    cp, attention = plan.parallel["cp"], plan.attention
    degree = cp.count
    if degree is None or degree <= 1 or cp.span is None or axolotl.glm_dsa_kernels or attention is None:
        return  # attention is present (needs): that guard is for the type checker
    impl, at = attention.value, attention.span
    if impl == "unknown" or _base(impl) == "flash_attention_2":
        return
    related = (Related(f"attention chosen here ({impl})", at),) if at is not None else ()
    if impl in FLASH_LIB:
        yield Finding(
            span=cp.span,
            message=f"{cp.key} is {degree} with {impl}; ring attention runs on flash_attention_2 only",
            notes=("from 0.19.0 axolotl runs ring attention on flash_attention_2 only and refuses the config",),
            fix="set attn_implementation: flash_attention_2",
            related=related,
            premise="flash_attention_2 only",
        )
        return
    chosen = f"attention is {impl}" if impl else "no attention backend is chosen"
    yield Finding(
        span=cp.span,
        message=f"{cp.key} is {degree}, but {chosen}; context parallelism needs flash-attn",
        notes=("context parallelism (ring attention) needs a flash-attn backend; axolotl refuses the config",),
        fix="set attn_implementation: flash_attention_2 (or flash_attention_3)",
        related=related,
        premise=cp.key,
    )


def _base(impl: object) -> object:
    """attn_implementation without a hub kernel's `@revision` or `:name` (0.19.0 enums.py:171-175)."""
    return impl.split(":", 1)[0].split("@", 1)[0].strip() if isinstance(impl, str) else impl

RULE = Rule(
    code="BL250",
    name="axolotl-context-parallel-attention",
    severity="error",
    summary="axolotl: context parallelism without a flash-attn backend",
    check=check,
    subject=AxolotlSettings,
    needs=("attention", "parallel.cp"),
    premises=(DEGREE, CONTEXT, FA2_ONLY),
    doc=__doc__,
    examples=(
        # No release pinned: every release that reads context_parallel_size (0.12.0 on) refuses it.
        Example("cp_sdpa.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: sdpa
""", flagged=(4,), severity="error",
                message="context_parallel_size is 2, but attention is sdpa; context parallelism needs "
                        "flash-attn",
                fix="set attn_implementation: flash_attention_2 (or flash_attention_3)"),
        Example("cp_sdpa_pinned.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: sdpa
""", flagged=(4,), files=(("requirements.txt", "axolotl==0.18.0\n"),), severity="error",
                message="context_parallel_size is 2, but attention is sdpa; context parallelism needs "
                        "flash-attn",
                fix="set attn_implementation: flash_attention_2 (or flash_attention_3)"),
        Example("cp_sdpa_before_the_key.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: sdpa
""", files=(("requirements.txt", "axolotl==0.11.0\n"),)),
        Example("cp_fa2.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: flash_attention_2
"""),
        Example("cp_legacy_flash.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
flash_attention: true
"""),
        Example("cp_none.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
""", flagged=(4,), severity="error",
                message="context_parallel_size is 2, but no attention backend is chosen; context parallelism "
                        "needs flash-attn",
                fix="set attn_implementation: flash_attention_2 (or flash_attention_3)"),
        # flash_attention_3 runs ring attention in 0.17.0-0.18.0: with no release pinned, an info.
        Example("cp_fa3.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: flash_attention_3
""", flagged=(4,), severity="info",
                message="context_parallel_size is 2 with flash_attention_3; ring attention runs on "
                        "flash_attention_2 only",
                fix="set attn_implementation: flash_attention_2"),
        Example("sp_degree_pinned.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
sequence_parallel_degree: 2
""", flagged=(4,), files=(("requirements.txt", "axolotl==0.8.0\n"),), severity="error",
                message="sequence_parallel_degree is 2, but no attention backend is chosen; context "
                        "parallelism needs flash-attn",
                fix="set attn_implementation: flash_attention_2 (or flash_attention_3)"),
        Example("cp_fa3_pinned_new.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: flash_attention_3
""", flagged=(4,), files=(("requirements.txt", "axolotl==0.19.0\n"),), severity="error",
                message="context_parallel_size is 2 with flash_attention_3; ring attention runs on "
                        "flash_attention_2 only",
                fix="set attn_implementation: flash_attention_2"),
        Example("cp_fa3_pinned_old.yaml", """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
attn_implementation: flash_attention_3
""", files=(("requirements.txt", "axolotl==0.18.0\n"),)),
    ),
)
