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
axolotl 067b021 (0.18.0): src/axolotl/utils/schemas/validation.py:686-691
(`check_sample_packing_w_rl`) and 693-702 (`check_kto_config`).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    rl = plan.rl.algorithm
    packing = plan.packing
    if (packing is None or not packing.value) and rl.value == "kto":
        packing = plan.eval_packing  # kto refuses it too
    if packing is None or not packing.value:
        return
    yield Finding(
        span=packing.span,
        message=f"{packing.key} is enabled with rl: {rl.value} (line {rl.span.line}); axolotl's RL trainers "
                f"cannot take packed rows and the config fails validation",
        fix=f"set {packing.key}: false",
        related=(Related(f"rl = {rl.value}", rl.span),),
    )


_CONFIG = ("base_model: Qwen/Qwen2.5-0.5B-Instruct\nrl: dpo\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
           "sample_packing: {packing}\n")

RULE = Rule(
    code="BL351",
    name="axolotl-packing-with-rl",
    severity="error",
    summary="axolotl: sample packing with an RL trainer",
    check=check,
    needs=("rl.algorithm",),
    frameworks=("axolotl",),
    doc=__doc__,
    examples=(
        Example("dpo_packed.yaml", _CONFIG.format(packing="true"), flagged=(5,)),
        Example("dpo_unpacked.yaml", _CONFIG.format(packing="false")),
        Example("kto_eval_packed.yaml", _CONFIG.format(packing="false").replace("dpo", "kto") + "eval_sample_packing: true\n",
                flagged=(6,)),
        Example("dpo_eval_packed.yaml", _CONFIG.format(packing="false") + "eval_sample_packing: true\n"),
    ),
)
