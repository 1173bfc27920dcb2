"""
## What it does
Flags an axolotl config that packs samples (`sample_packing: true`) under
context parallelism (`context_parallel_size` > 1) with a `micro_batch_size`
above 1.

## Why is this bad?
With packing, context parallelism uses ring-flash-attn's varlen kernel, which
takes one packed row per step: axolotl's validation refuses the config
("micro_batch_size must be set to 1 when sample_packing is enabled due to a
`ring-flash-attn` requirement") before training starts. The check reads
`sequence_parallel_degree` from 0.8.1 (0.8.0 has the key, not the check) and
`context_parallel_size` from 0.12.0, the release that added it.

## Example
```yaml
sample_packing: true
context_parallel_size: 4
micro_batch_size: 2
```

## Use instead
```yaml
sample_packing: true
context_parallel_size: 4
micro_batch_size: 1
gradient_accumulation_steps: 2   # keeps the batch per optimizer step
```

## Source
axolotl v0.18.0: src/axolotl/utils/schemas/validation.py:1659-1663
(`check_context_parallel_size`; skipped with `use_glm_dsa_kernels`); 0.19.0:
axolotl/utils/schemas/validation.py:1811-1815. First read: v0.8.1
src/axolotl/utils/schemas/config.py:1161-1165 for `sequence_parallel_degree`
(any micro batch above 1, packed or not), v0.12.0
utils/schemas/validation.py:1246-1250 for `context_parallel_size`.
"""

from collections.abc import Iterator

from batchlint.frameworks.axolotl import AxolotlSettings
from batchlint.frameworks.releases import AXOLOTL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

_NEWEST = "0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:1811-1815 (still)"
DEGREE = Premise(
    AXOLOTL, since="0.8.1", runs_since="0.8.0", name="sequence_parallel_degree",
    source="v0.7.1 (no sequence_parallel_degree field); v0.8.0 src/axolotl/utils/schemas/config.py:1115-1140 "
           "(the key, no micro batch check); v0.8.1 "
           f"src/axolotl/utils/schemas/config.py:1161-1165 (first); {_NEWEST}")
CONTEXT = Premise(
    AXOLOTL, since="0.12.0", runs_since="0.12.0", name="context_parallel_size",
    source="v0.11.0 (no context_parallel_size field: it cannot run such a config); "
           f"v0.12.0 src/axolotl/utils/schemas/validation.py:1246-1250 (first); {_NEWEST}")


def check(plan: TrainingPlan, axolotl: AxolotlSettings) -> Iterator[Finding]:
    cp, packing, micro = plan.parallel["cp"], plan.packing, plan.micro_batch
    degree, rows = cp.count, micro.count if micro is not None else None
    if degree is None or degree <= 1 or packing is None or packing.value is not True:
        return
    if micro is None or rows is None or rows <= 1 or micro.span is None:
        return
    if axolotl.glm_dsa_kernels:
        return  # the GLM DSA kernels bring their own context-parallel attention
    related = tuple(Related(f"{f.key} = {f.value}", f.span) for f in (packing, cp) if f.span)
    yield Finding(
        span=micro.span,
        message=f"micro_batch_size is {rows}; sample_packing with {cp.key} {degree} needs micro_batch_size 1",
        notes=("packed rows under context parallelism run ring-flash-attn's varlen kernel, which takes one row per "
               "micro batch; axolotl refuses the config",),
        fix=f"set micro_batch_size: 1 and multiply gradient_accumulation_steps by {rows} to keep the batch",
        related=related,
        premise=cp.key,
    )


RULE = Rule(
    code="BL350",
    name="axolotl-context-parallel-packing",
    severity="error",
    summary="axolotl: packing under context parallelism with a micro batch above 1",
    check=check,
    subject=AxolotlSettings,
    needs=("parallel.cp",),
    premises=(DEGREE, CONTEXT),
    doc=__doc__,
    examples=(
        # No release pinned: every release that reads context_parallel_size (0.12.0 on) refuses it.
        Example("cp_packed_mb2.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
context_parallel_size: 2
attn_implementation: flash_attention_2
micro_batch_size: 2
gradient_accumulation_steps: 4
""", flagged=(5,), severity="error",
                message="micro_batch_size is 2; sample_packing with context_parallel_size 2 needs "
                        "micro_batch_size 1",
                fix="set micro_batch_size: 1 and multiply gradient_accumulation_steps by 2 to keep the batch"),
        # sequence_parallel_degree: 0.8.0 reads the key but takes any micro batch.
        Example("sp_packed_mb2.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
sequence_parallel_degree: 2
attn_implementation: flash_attention_2
micro_batch_size: 2
gradient_accumulation_steps: 4
""", flagged=(5,), severity="info",
                message="micro_batch_size is 2; sample_packing with sequence_parallel_degree 2 needs "
                        "micro_batch_size 1",
                fix="set micro_batch_size: 1 and multiply gradient_accumulation_steps by 2 to keep the batch"),
        Example("cp_packed_mb2_pinned.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
context_parallel_size: 2
attn_implementation: flash_attention_2
micro_batch_size: 2
gradient_accumulation_steps: 4
""", flagged=(5,), files=(("requirements.txt", "axolotl>=0.12.0\n"),), severity="error",
                message="micro_batch_size is 2; sample_packing with context_parallel_size 2 needs "
                        "micro_batch_size 1",
                fix="set micro_batch_size: 1 and multiply gradient_accumulation_steps by 2 to keep the batch"),
        Example("cp_packed_mb2_old.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
context_parallel_size: 2
attn_implementation: flash_attention_2
micro_batch_size: 2
gradient_accumulation_steps: 4
""", files=(("requirements.txt", "axolotl==0.10.0\n"),)),
        Example("cp_packed_mb1.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: true
context_parallel_size: 2
attn_implementation: flash_attention_2
micro_batch_size: 1
gradient_accumulation_steps: 4
"""),
        Example("cp_unpacked_mb2.yaml", """\
base_model: NousResearch/Llama-3.2-1B
sample_packing: false
context_parallel_size: 2
attn_implementation: flash_attention_2
micro_batch_size: 2
gradient_accumulation_steps: 4
"""),
    ),
)
