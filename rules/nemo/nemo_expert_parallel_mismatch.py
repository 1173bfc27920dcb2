"""
## What it does
Checks a NeMo 1 Megatron config's expert parallelism
(`model.expert_model_parallel_size` above 1): `model.num_moe_experts` must
be set and divisible by it, and - when the world size W is known - W must be
divisible by tensor x expert x pipeline parallel size (NeMo 1 gives experts
the dense tensor-parallel size).

## Why is this bad?
Each expert-parallel rank holds `num_moe_experts / ep` experts; megatron-core
raises "num_moe_experts must be non None to use expert-parallel", asserts the
division when it builds the MoE layer, and refuses an expert layout that does
not tile the GPUs. The job dies while the model is built.

## Example
```yaml
model:
  num_moe_experts: 6
  expert_model_parallel_size: 4
```

## Use instead
```yaml
model:
  num_moe_experts: 8
  expert_model_parallel_size: 4
```

NeMo 1 reads `expert_model_parallel_size` and `num_moe_experts` from 1.23.0
(before, both keys are ignored) to 2.5.0 (2.5.1 removed NeMo 1's Megatron
models). Judged by the NeMo release the project pins: without one, no finding.

## Source
megatron-core core_v0.14.0: megatron/core/transformer/transformer_config.py:739-740,
megatron/core/transformer/moe/moe_layer.py:64, megatron/core/parallel_state.py:696-706
(core_v0.5.0: transformer_config.py:176, moe_layer.py:28, parallel_state.py:215-217,
dp % ep); NeMo 2.5.0 nemo/collections/nlp/modules/common/megatron/megatron_init.py:370-380;
first in NeMo v1.23.0 megatron_base_model.py:192 and megatron_gpt_model.py:1715.
"""

from collections.abc import Iterator

from batchlint.frameworks.nemo import NemoSettings
from batchlint.frameworks.releases import NEMO
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

EXPERTS = Premise(
    NEMO, since="1.23.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0

    source="v1.22.0 (neither key read); v1.23.0 nemo/collections/nlp/models/language_modeling/"
           "megatron_base_model.py:192, megatron_gpt_model.py:1715 (first); 2.5.0 "
           "nemo/collections/nlp/modules/common/megatron/megatron_init.py:370-380 (last); 2.5.1 has no "
           "nemo/collections/nlp/models; megatron-core core_v0.5.0 transformer_config.py:176, moe_layer.py:28, "
           "parallel_state.py:215-217 to core_v0.14.0")


def check(plan: TrainingPlan, nemo: NemoSettings) -> Iterator[Finding]:
    ep = plan.parallel["ep"]
    split = ep.number
    if split is None or split <= 1 or ep.span is None:
        return
    experts = nemo.num_moe_experts
    if experts.value is None:
        yield Finding(
            span=ep.span,
            message=f"{ep.describe()} splits experts over ranks, but {experts.key} is not set",
            notes=("megatron-core refuses to start: expert parallelism needs MoE experts to split",),
            fix=f"set {experts.key} to a multiple of {split}, or {ep.key} to 1",
        )
        return
    if experts.number is not None and experts.number % split:
        yield Finding(
            span=ep.span,
            message=f"{experts.describe()} is not divisible by {ep.describe()}",
            notes=("each expert-parallel rank must hold the same number of experts, and megatron-core refuses "
                   "to start",),
            fix=f"set {ep.key} to a divisor of {experts.value}",
            related=(Related(f"{experts.key} = {experts.value}", experts.span),) if experts.span else (),
        )
        return
    yield from _expert_layout(plan, ep, split)


def _expert_layout(plan: TrainingPlan, ep: Fact, split: int) -> Iterator[Finding]:
    world, tp, pp = plan.world_size, plan.parallel.get("tp"), plan.parallel.get("pp")
    gpus = world.number if world is not None else None
    tps, pps = (tp.count if tp is not None else None), (pp.count if pp is not None else None)
    if world is None or tp is None or pp is None or gpus is None or tps is None or pps is None:
        return
    size = tps * split * pps
    if gpus % size == 0:
        return
    yield Finding(
        span=ep.span,
        message=f"W ({gpus}) is not divisible by the expert layout tp x ep x pp = {size}",
        notes=(f"{tp.describe()} x {ep.describe()} x {pp.describe()} = {size} ranks per expert layout; "
               f"W is {world.describe()}",
               "megatron-core refuses to start"),
        fix=f"launch on a multiple of {size} GPUs, or lower {ep.key}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (tp, pp, world) if f.span),
    )


RULE = Rule(
    code="BL243",
    name="nemo-expert-parallel-mismatch",
    severity="error",
    summary="NeMo: expert parallelism that the experts or the GPUs cannot split",
    check=check,
    subject=NemoSettings,
    needs=("parallel.ep",),
    premises=(EXPERTS,),
    doc=__doc__,
    examples=(
        Example("experts_6.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  num_moe_experts: 6
  expert_model_parallel_size: 4
""", flagged=(9,),
                message="model.num_moe_experts (6) is not divisible by model.expert_model_parallel_size (4)",
                fix="set model.expert_model_parallel_size to a divisor of 6",
                files=(("requirements.txt", "nemo_toolkit==1.23.0\n"),),
                severity="error"),
        Example("experts_8.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  num_moe_experts: 8
  expert_model_parallel_size: 4
"""),
        Example("experts_null.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  num_moe_experts: null
  expert_model_parallel_size: 4
""", flagged=(9,),
                message="model.expert_model_parallel_size (4) splits experts over ranks, but model.num_moe_experts "
                        "is not set",
                fix="set model.num_moe_experts to a multiple of 4, or model.expert_model_parallel_size to 1",
                files=(("requirements.txt", "nemo_toolkit==2.4.0\n"),),
                severity="error"),
        # tp 4 x ep 4 = 16 expert ranks on 8 GPUs.
        Example("experts_tp4.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 4
  num_moe_experts: 8
  expert_model_parallel_size: 4
""", flagged=(9,),
                message="W (8) is not divisible by the expert layout tp x ep x pp = 16",
                fix="launch on a multiple of 16 GPUs, or lower model.expert_model_parallel_size",
                files=(("requirements.txt", "nemo_toolkit==2.5.0\n"),),
                severity="error"),
        # No NeMo release pinned: 1.22 ignores the keys, and 2.5.1 removed NeMo 1's Megatron models.
        Example("experts_6_unpinned.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  num_moe_experts: 6
  expert_model_parallel_size: 4
""", flagged=(9,),
                message="model.num_moe_experts (6) is not divisible by model.expert_model_parallel_size (4)",
                fix="set model.expert_model_parallel_size to a divisor of 6",
                severity="info"),  # NeMo before the check can run it too
        Example("experts_6_1_22.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  num_moe_experts: 6
  expert_model_parallel_size: 4
""", files=(("requirements.txt", "nemo_toolkit==1.22.0\n"),)),
        Example("experts_6_2_6.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 1
  num_moe_experts: 6
  expert_model_parallel_size: 4
""", files=(("requirements.txt", "nemo_toolkit==2.6.0\n"),)),
        Example("experts_tp2.yaml", """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 2
  num_moe_experts: 8
  expert_model_parallel_size: 4
"""),
    ),
)
