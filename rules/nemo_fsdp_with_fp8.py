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

from batchlint.frameworks.facts import flag
from batchlint.rule import Example, Finding, Related, Rule


def check(plan):
    model = plan.document.get("model")
    fsdp, fp8 = flag(model.get("fsdp"), "model.fsdp"), flag(model.get("fp8"), "model.fp8")
    if fsdp is None or fp8 is None or fsdp.value is not True or fp8.value is not True:
        return
    yield Finding(
        span=fp8.span,
        message="model.fp8 is true with model.fsdp true: NeMo's Torch FSDP does not support FP8 and refuses to start",
        fix="turn model.fsdp off (tensor/pipeline parallelism with the distributed optimizer), or model.fp8 off",
        related=(Related("model.fsdp enabled here", fsdp.span),),
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
    frameworks=("nemo",),
    doc=__doc__,
    examples=(
        Example("fsdp_fp8.yaml", _CONFIG.format(fsdp="true"), flagged=(7,)),
        Example("no_fsdp_fp8.yaml", _CONFIG.format(fsdp="false")),
    ),
)
