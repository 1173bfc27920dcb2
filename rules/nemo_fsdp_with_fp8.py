"""
## What it does
Flags a NeMo 1 Megatron config that enables Torch FSDP (`model.fsdp: true`)
together with FP8 (`model.fp8: true`).

## Why is this bad?
NeMo's Torch FSDP path has no FP8 support and raises "Torch FSDP does not
support FP8." while the model is built, after the job has its GPUs. It holds
whatever the GPU count.

## Example
```yaml
model:
  fsdp: true
  fp8: true
```

## Use instead
```yaml
model:
  fsdp: false
  fp8: true
```
(tensor/pipeline parallelism with the distributed optimizer), or FSDP with
bf16.

## Source
NeMo @ 8cfedd7: nemo/collections/nlp/models/language_modeling/
megatron_base_model.py:1089-1090 (`_validate_and_override_config`).
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    fsdp, fp8 = plan.settings.fsdp, plan.settings.fp8
    if fsdp is None or fp8 is None or fsdp.value is not True or fp8.value is not True:
        return
    yield Finding(
        span=fp8.span,
        message=f"{fp8.key} is true with {fsdp.key} true: NeMo's Torch FSDP does not support FP8 and refuses to start",
        fix=f"turn {fsdp.key} off (tensor/pipeline parallelism with the distributed optimizer), or {fp8.key} off",
        related=(Related(f"{fsdp.key} enabled here", fsdp.span),),
    )


_CONFIG = """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  fsdp: {fsdp}
  fp8: true
"""

RULE = Rule(
    code="BL540",
    name="nemo-fsdp-with-fp8",
    severity="error",
    summary="NeMo: Torch FSDP together with FP8",
    check=check,
    needs=("settings.fsdp", "settings.fp8"),
    doc=__doc__,
    examples=(
        Example("fsdp_fp8.yaml", _CONFIG.format(fsdp="true"), flagged=(7,)),
        Example("no_fsdp_fp8.yaml", _CONFIG.format(fsdp="false")),
    ),
)
