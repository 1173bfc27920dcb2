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

NeMo 1.23.0 (which brought `model.fsdp`) to 2.5.0 (2.5.1 removed NeMo 1's
Megatron models) refuse it. Judged by the NeMo release the project pins:
without one, no finding.

## Source
NeMo 2.5.0: nemo/collections/nlp/models/language_modeling/
megatron_base_model.py:1089-1090 (`_validate_and_override_config`); first in
v1.23.0 at 946-947.
"""

from collections.abc import Iterator

from batchlint.frameworks.nemo import NemoSettings
from batchlint.frameworks.releases import NEMO
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

REFUSED = Premise(
    NEMO, since="1.23.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0

    source="v1.22.0 megatron_base_model.py (no fsdp); v1.23.0 nemo/collections/nlp/models/language_modeling/"
           "megatron_base_model.py:946-947 (first); 2.5.0 megatron_base_model.py:1089-1090 (last); 2.5.1 has no "
           "nemo/collections/nlp/models")


def check(plan: TrainingPlan, nemo: NemoSettings) -> Iterator[Finding]:
    fsdp, fp8 = nemo.fsdp, nemo.fp8
    if fsdp is None or fp8 is None or fsdp.value is not True or fp8.value is not True:
        return
    yield Finding(
        span=fp8.span,
        message=f"{fp8.key} is true with {fsdp.key} true",
        notes=("NeMo's Torch FSDP does not support FP8, and NeMo refuses to start",),
        fix=f"turn {fsdp.key} off (tensor/pipeline parallelism with the distributed optimizer), or {fp8.key} off",
        related=(Related(f"{fsdp.key} enabled here", fsdp.span),),
    )


RULE = Rule(
    code="BL540",
    name="nemo-fsdp-with-fp8",
    severity="error",
    summary="NeMo: Torch FSDP together with FP8",
    check=check,
    subject=NemoSettings,
    premises=(REFUSED,),
    doc=__doc__,
    examples=(
        Example("fsdp_fp8.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  fsdp: true
  fp8: true
""", flagged=(7,),
                message="model.fp8 is true with model.fsdp true",
                fix="turn model.fsdp off (tensor/pipeline parallelism with the distributed optimizer), or "
                    "model.fp8 off",
                files=(("requirements.txt", "nemo_toolkit==2.2.1\n"),),
                severity="error"),
        # No NeMo release pinned: 1.22 has no FSDP, and 2.5.1 removed NeMo 1's Megatron models.
        Example("fsdp_fp8_unpinned.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  fsdp: true
  fp8: true
""", flagged=(7,),
                message="model.fp8 is true with model.fsdp true",
                fix="turn model.fsdp off (tensor/pipeline parallelism with the distributed optimizer), or "
                    "model.fp8 off",
                severity="info"),  # NeMo before the check can run it too
        Example("fsdp_fp8_1_22.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  fsdp: true
  fp8: true
""", files=(("requirements.txt", "nemo_toolkit==1.22.0\n"),)),
        Example("fsdp_fp8_2_5_1.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  fsdp: true
  fp8: true
""", files=(("requirements.txt", "nemo_toolkit==2.5.1\n"),)),
        Example("no_fsdp_fp8.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  fsdp: false
  fp8: true
"""),
    ),
)
