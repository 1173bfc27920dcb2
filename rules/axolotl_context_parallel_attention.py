"""
## What it does
Flags an axolotl config with `context_parallel_size` (or the deprecated
`sequence_parallel_degree`) above 1 whose attention is not a flash-attn
backend: `attn_implementation` other than `flash_attention_2`/`_3` (or their
kernels-community builds), a legacy flag that maps to another backend, or no
attention chosen at all.

## Why is this bad?
axolotl's context parallelism runs ring attention from `ring-flash-attn`,
which needs the flash-attn kernels: config validation refuses anything else
("context_parallel_size > 1 requires flash attention") before the model is
loaded, after the job got its GPUs.

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
axolotl 067b021 (0.18.0): src/axolotl/utils/schemas/validation.py:1633-1658
(`check_context_parallel_size`); utils/schemas/enums.py:117-156 (legacy flags,
ATTN_IMPLS_USING_FLASH_LIB); utils/schemas/config.py:1527-1570 (flag mapping).
GLM DSA kernels (`use_glm_dsa_kernels`) bring their own attention and are exempt.
"""

from collections.abc import Iterator

from batchlint.frameworks.axolotl import FLASH_LIB
from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    cp = plan.parallel.get("cp")
    if cp is None or not cp.known or cp.value <= 1 or cp.span is None or plan.settings.glm_dsa_kernels:
        return
    impl, at = plan.attention.value, plan.attention.span
    if impl == "unknown" or impl in FLASH_LIB:
        return
    chosen = f"attention is {impl}" if impl else "no attention backend is chosen"
    related = (Related(f"attention chosen here ({impl})", at),) if at is not None else ()
    yield Finding(
        span=cp.span,
        message=f"{cp.key} is {cp.value}, but {chosen}: context parallelism needs a flash-attn backend and "
                f"axolotl refuses the config",
        fix="set attn_implementation: flash_attention_2 (or flash_attention_3)",
        related=related,
    )


_CONFIG = """\
base_model: NousResearch/Llama-3.2-1B
micro_batch_size: 1
gradient_accumulation_steps: 4
context_parallel_size: 2
{attention}"""

RULE = Rule(
    code="BL250",
    name="axolotl-context-parallel-attention",
    severity="error",
    summary="axolotl: context parallelism without a flash-attn backend",
    check=check,
    needs=("settings", "attention", "parallel.cp"),
    frameworks=("axolotl",),
    doc=__doc__,
    examples=(
        Example("cp_sdpa.yaml", _CONFIG.format(attention="attn_implementation: sdpa\n"), flagged=(4,)),
        Example("cp_fa2.yaml", _CONFIG.format(attention="attn_implementation: flash_attention_2\n")),
        Example("cp_legacy_flash.yaml", _CONFIG.format(attention="flash_attention: true\n")),
        Example("cp_none.yaml", _CONFIG.format(attention=""), flagged=(4,)),
    ),
)
