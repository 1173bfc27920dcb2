"""
## What it does
Flags an axolotl config that enables `sample_packing` together with an RL
trainer (`rl: dpo`, `grpo`, `kto`, `orpo`, ...), and `eval_sample_packing`
with `rl: kto`.

## Why is this bad?
The preference and RL trainers batch chosen/rejected pairs or prompts and
their completions, which packing would mix into one row: axolotl's
validation refuses the config ("`sample_packing: true` does not work with
RLHF training") before anything is loaded, after the job got its GPUs.

## Example
```yaml
rl: dpo
sample_packing: true
```

## Use instead
```yaml
rl: dpo
sample_packing: false
```

## Source
axolotl v0.18.0: src/axolotl/utils/schemas/validation.py:686-691
(`check_sample_packing_w_rl`) and 693-702 (`check_kto_config`); 0.19.0:
axolotl/utils/schemas/validation.py:704-720. `sample_packing` with `rl` is
refused since v0.4.0 (src/axolotl/utils/config.py:207-208, before the first
PyPI release); `eval_sample_packing` with `rl: kto` from 0.6.0
(src/axolotl/utils/config/models/input/v0_4_1/__init__.py:1480-1483; 0.5.2
has no such check).
"""

from collections.abc import Iterator

from batchlint.frameworks.axolotl import AxolotlSettings
from batchlint.frameworks.releases import AXOLOTL
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

PACKING = Premise(
    AXOLOTL, name="sample_packing",
    source="v0.4.0 src/axolotl/utils/config.py:207-208 (before the first PyPI release); v0.5.0 "
           "src/axolotl/utils/config/models/input/v0_4_1/__init__.py:898-901; 0.19.0 (PyPI wheel) "
           "axolotl/utils/schemas/validation.py:704-709 (still)")
KTO_EVAL = Premise(
    AXOLOTL, since="0.6.0", name="eval_sample_packing",
    source="v0.5.2 src/axolotl/utils/config/models/input/v0_4_1/__init__.py (no check_kto_config); v0.6.0 "
           "same file:1480-1483 (first); 0.19.0 (PyPI wheel) axolotl/utils/schemas/validation.py:711-720 (still)")


def check(plan: TrainingPlan, axolotl: AxolotlSettings) -> Iterator[Finding]:
    rl = plan.rl.algorithm if plan.rl is not None else None
    packing = plan.packing
    if rl is None or rl.span is None:
        return  # present (needs rl.algorithm): the guard is for the type checker
    if (packing is None or not packing.value) and rl.value == "kto":
        packing = plan.eval_packing  # kto refuses it too
    if packing is None or not packing.value or packing.span is None:
        return
    yield Finding(
        span=packing.span,
        message=f"{packing.key} is enabled with rl: {rl.value} (line {rl.span.line})",
        notes=("axolotl's RL trainers cannot take packed rows; the config fails validation",),
        fix=f"set {packing.key}: false",
        related=(Related(f"rl = {rl.value}", rl.span),),
        premise=packing.key,
    )


RULE = Rule(
    code="BL351",
    name="axolotl-packing-with-rl",
    severity="error",
    summary="axolotl: sample packing with an RL trainer",
    check=check,
    subject=AxolotlSettings,
    needs=("rl.algorithm",),
    premises=(PACKING, KTO_EVAL),
    doc=__doc__,
    examples=(
        Example("dpo_packed.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: dpo
micro_batch_size: 2
gradient_accumulation_steps: 4
sample_packing: true
""", flagged=(5,),
                message="sample_packing is enabled with rl: dpo (line 2)",
                fix="set sample_packing: false"),
        Example("dpo_unpacked.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: dpo
micro_batch_size: 2
gradient_accumulation_steps: 4
sample_packing: false
"""),
        # No release pinned: 0.5.x does not refuse eval_sample_packing with kto.
        Example("kto_eval_packed.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: kto
micro_batch_size: 2
gradient_accumulation_steps: 4
sample_packing: false
eval_sample_packing: true
""", flagged=(6,), severity="info",
                message="eval_sample_packing is enabled with rl: kto (line 2)",
                fix="set eval_sample_packing: false"),
        Example("kto_eval_packed_pinned.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: kto
micro_batch_size: 2
gradient_accumulation_steps: 4
sample_packing: false
eval_sample_packing: true
""", flagged=(6,), files=(("requirements.txt", "axolotl==0.6.0\n"),), severity="error",
                message="eval_sample_packing is enabled with rl: kto (line 2)",
                fix="set eval_sample_packing: false"),
        Example("kto_eval_packed_old.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: kto
micro_batch_size: 2
gradient_accumulation_steps: 4
sample_packing: false
eval_sample_packing: true
""", files=(("requirements.txt", "axolotl==0.5.2\n"),)),
        Example("dpo_eval_packed.yaml", """\
base_model: Qwen/Qwen2.5-0.5B-Instruct
rl: dpo
micro_batch_size: 2
gradient_accumulation_steps: 4
sample_packing: false
eval_sample_packing: true
"""),
    ),
)
