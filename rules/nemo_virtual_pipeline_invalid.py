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

## Source
NeMo @ 8cfedd7: nemo/collections/nlp/models/language_modeling/
megatron_base_model.py:180-193 (vp 1 means none; the chunk assertion);
megatron-core core_v0.14.0 megatron/core/parallel_state.py:656-660.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


def check(plan: TrainingPlan) -> Iterator[Finding]:
    settings = plan.settings
    vp = settings.virtual_pipeline_model_parallel_size
    pp = plan.parallel.get("pp")
    if not vp.known or vp.value <= 1 or pp is None or not pp.known or pp.value < 1:
        return
    if pp.value == 1:
        yield Finding(
            span=vp.span,
            message=(
                f"{vp.describe()} asks for an interleaved pipeline schedule, but {pp.describe()} is 1: "
                f"megatron-core refuses to start"
            ),
            fix=f"set {vp.key} to null, or {pp.key} above 1",
            related=(Related(f"{pp.key} = 1", pp.span),) if pp.span else (),
        )
        return
    layers = settings.num_layers
    if layers is None or not layers.known or _split_accounted(settings):
        return
    per_stage = layers.value // pp.value
    if per_stage % vp.value == 0:
        return
    yield Finding(
        span=vp.span,
        message=(
            f"{layers.describe()} // {pp.describe()} = {per_stage} layers per pipeline stage do not split into "
            f"{vp.value} model chunks: NeMo asserts they do and refuses to start"
        ),
        fix=f"set {vp.key} to a divisor of {per_stage}, or {layers.key} to a multiple of {pp.value * vp.value}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (layers, pp) if f.span),
    )


def _split_accounted(settings) -> bool:
    flags = (settings.account_for_embedding_in_pipeline_split, settings.account_for_loss_in_pipeline_split)
    return all(f is not None and f.value is True for f in flags)


_CONFIG = """\
trainer:
  devices: 8
model:
  micro_batch_size: 1
  global_batch_size: 64
  num_layers: {layers}
  pipeline_model_parallel_size: {pp}
  virtual_pipeline_model_parallel_size: {vp}
"""

RULE = Rule(
    code="BL242",
    name="nemo-virtual-pipeline-invalid",
    severity="error",
    summary="NeMo: an interleaved (virtual) pipeline that the layers or the pipeline size cannot give",
    check=check,
    needs=("parallel.pp", "settings.virtual_pipeline_model_parallel_size"),
    doc=__doc__,
    examples=(
        Example("vp_uneven.yaml", _CONFIG.format(layers=30, pp=4, vp=2), flagged=(8,)),
        Example("vp_even.yaml", _CONFIG.format(layers=32, pp=4, vp=2)),
        Example("vp_without_pp.yaml", _CONFIG.format(layers=32, pp=1, vp=2), flagged=(8,)),
        Example("vp_null.yaml", _CONFIG.format(layers=30, pp=1, vp="null")),
        Example("vp_one.yaml", _CONFIG.format(layers=30, pp=1, vp=1)),
    ),
)
