"""
## What it does
Checks a NeMo 1 Megatron config's interleaved pipeline schedule:
`model.virtual_pipeline_model_parallel_size` above 1 needs
`pipeline_model_parallel_size` above 1, and the layers of each pipeline stage
(`num_layers // pipeline_model_parallel_size`) must divide into that many
model chunks (unless both `account_for_embedding_in_pipeline_split` and
`account_for_loss_in_pipeline_split` are set). It holds whatever the GPU count.

## Why is this bad?
NeMo asserts "Make sure the number of model chunks is the same across all
pipeline stages", and megatron-core raises "pipeline-model-parallel size
should be greater than 1 with interleaved schedule", both while the model is
built, after the job has its GPUs.

## Example
```yaml
model:
  num_layers: 30
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2   # 30 // 4 = 7 layers per stage
```

## Use instead
```yaml
model:
  num_layers: 32
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2
```

NeMo reads `virtual_pipeline_model_parallel_size` from 1.13.0 (before, the
key is ignored) to 2.5.0 (2.5.1 removed NeMo 1's Megatron models). Judged by
the NeMo release the project pins: without one, no finding.

## Source
NeMo 2.5.0: nemo/collections/nlp/models/language_modeling/
megatron_base_model.py:179-193 and 1058-1070 (vp 1 means none; the chunk
assertion; the `account_for_*` exemption since 2.2.0), first in v1.13.0
megatron_base_model.py:95 (passed on) and 467-471 (asserted). pp 1 is refused
by apex (NeMo 1.13-1.17: apex 22.03 apex/transformer/parallel_state.py:104-107,
pp > 2) and megatron-core (1.18 on: parallel_state.py 23.04 :129-132, pp > 2;
core_v0.8.0 :447-451 and core_v0.14.0 :656-660, pp > 1).
"""

from collections.abc import Iterator

from batchlint.frameworks.nemo import NemoSettings
from batchlint.frameworks.releases import NEMO
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

INTERLEAVED = Premise(
    NEMO, since="1.13.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0

    source="v1.12.0 megatron_base_model.py (the key is not read); v1.13.0 nemo/collections/nlp/models/"
           "language_modeling/megatron_base_model.py:95, 467-471 (first); 2.5.0 megatron_base_model.py:179-193, "
           "1058-1070 (last); 2.5.1 has no nemo/collections/nlp/models; pp 1 refused by apex 22.03 "
           "apex/transformer/parallel_state.py:104-107 and megatron-core parallel_state.py (23.04 :129-132, "
           "core_v0.14.0 :656-660)")


def check(plan: TrainingPlan, nemo: NemoSettings) -> Iterator[Finding]:
    vp, pp = nemo.virtual_pipeline_model_parallel_size, plan.parallel["pp"]
    chunks, stages = vp.number, pp.number
    if chunks is None or chunks <= 1 or stages is None or stages < 1:
        return
    if stages == 1:
        yield Finding(
            span=vp.span,
            message=f"{vp.describe()} needs pipeline parallelism, but pp is 1",
            notes=(f"{vp.key} asks for an interleaved pipeline schedule, and {pp.describe()} is 1: "
                   "megatron-core refuses to start",),
            fix=f"set {vp.key} to null, or {pp.key} above 1",
            related=(Related(f"{pp.key} = 1", pp.span),) if pp.span else (),
        )
        return
    layers = nemo.num_layers
    count = layers.number if layers is not None else None
    if layers is None or count is None or _split_accounted(nemo):
        return
    per_stage = count // stages
    if per_stage % chunks == 0:
        return
    yield Finding(
        span=vp.span,
        message=f"{per_stage} layers per pipeline stage do not split into {chunks} model chunks",
        notes=(f"{layers.describe()} // {pp.describe()} = {per_stage} layers per pipeline stage",
               "NeMo asserts they split evenly into the virtual pipeline's model chunks and refuses to start"),
        fix=f"set {vp.key} to a divisor of {per_stage}, or {layers.key} to a multiple of {stages * chunks}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (layers, pp) if f.span),
    )


def _split_accounted(nemo: NemoSettings) -> bool:
    flags = (nemo.account_for_embedding_in_pipeline_split, nemo.account_for_loss_in_pipeline_split)
    return all(f is not None and f.value is True for f in flags)


RULE = Rule(
    code="BL242",
    name="nemo-virtual-pipeline-invalid",
    severity="error",
    summary="NeMo: an interleaved (virtual) pipeline that the layers or the pipeline size cannot give",
    check=check,
    subject=NemoSettings,
    needs=("parallel.pp",),
    premises=(INTERLEAVED,),
    doc=__doc__,
    examples=(
        Example("vp_uneven.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 30
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2
""", flagged=(8,),
                message="7 layers per pipeline stage do not split into 2 model chunks",
                fix="set model.virtual_pipeline_model_parallel_size to a divisor of 7, or model.num_layers to a "
                    "multiple of 8",
                files=(("requirements.txt", "nemo_toolkit==1.13.0\n"),),
                severity="error"),
        Example("vp_even.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 32
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2
"""),
        Example("vp_without_pp.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 32
  pipeline_model_parallel_size: 1
  virtual_pipeline_model_parallel_size: 2
""", flagged=(8,),
                message="model.virtual_pipeline_model_parallel_size (2) needs pipeline parallelism, but pp is 1",
                fix="set model.virtual_pipeline_model_parallel_size to null, or model.pipeline_model_parallel_size "
                    "above 1",
                files=(("requirements.txt", "nemo_toolkit==2.5.0\n"),),
                severity="error"),
        # No NeMo release pinned: 1.12 ignores the key, and 2.5.1 removed NeMo 1's Megatron models.
        Example("vp_uneven_unpinned.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 30
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2
""", flagged=(8,),
                message="7 layers per pipeline stage do not split into 2 model chunks",
                fix="set model.virtual_pipeline_model_parallel_size to a divisor of 7, or model.num_layers to a "
                    "multiple of 8",
                severity="info"),  # NeMo before the check can run it too
        Example("vp_uneven_1_12.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 30
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2
""", files=(("requirements.txt", "nemo_toolkit==1.12.0\n"),)),
        Example("vp_without_pp_2_5_1.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 32
  pipeline_model_parallel_size: 1
  virtual_pipeline_model_parallel_size: 2
""", files=(("requirements.txt", "nemo_toolkit==2.5.1\n"),)),
        Example("vp_null.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 30
  pipeline_model_parallel_size: 1
  virtual_pipeline_model_parallel_size: null
"""),
        Example("vp_one.yaml", """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: 30
  pipeline_model_parallel_size: 1
  virtual_pipeline_model_parallel_size: 1
"""),
    ),
)
