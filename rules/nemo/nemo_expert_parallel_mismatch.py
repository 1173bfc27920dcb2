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

from batchlint.frameworks.releases import NEMO
from batchlint.plan import TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

EXPERTS = Premise(
    NEMO, since="1.23.0", until="2.5.0", runs_until="2.5.0",  # NeMo-1 Megatron YAML: gone after 2.5.0

    source="v1.22.0 (neither key read); v1.23.0 nemo/collections/nlp/models/language_modeling/"
           "megatron_base_model.py:192, megatron_gpt_model.py:1715 (first); 2.5.0 "
           "nemo/collections/nlp/modules/common/megatron/megatron_init.py:370-380 (last); 2.5.1 has no "
           "nemo/collections/nlp/models; megatron-core core_v0.5.0 transformer_config.py:176, moe_layer.py:28, "
           "parallel_state.py:215-217 to core_v0.14.0")


def check(plan: TrainingPlan) -> Iterator[Finding]:
    ep = plan.parallel.get("ep")
    if ep is None or not ep.known or ep.value <= 1 or ep.span is None:
        return
    experts = plan.settings.num_moe_experts
    if experts.value is None:
        yield Finding(
            span=ep.span,
            message=f"{ep.describe()} splits experts over ranks, but {experts.key} is not set: megatron-core refuses to start",
            fix=f"set {experts.key} to a multiple of {ep.value}, or {ep.key} to 1",
        )
        return
    if experts.known and experts.value % ep.value:
        yield Finding(
            span=ep.span,
            message=(
                f"{experts.describe()} is not divisible by {ep.describe()}: each expert-parallel rank must hold "
                f"the same number of experts, and megatron-core refuses to start"
            ),
            fix=f"set {ep.key} to a divisor of {experts.value}",
            related=(Related(f"{experts.key} = {experts.value}", experts.span),) if experts.span else (),
        )
        return
    yield from _expert_layout(plan, ep)


def _expert_layout(plan, ep):
    world, tp, pp = plan.world_size, plan.parallel.get("tp"), plan.parallel.get("pp")
    if world is None or not world.known or not all(f is not None and f.known and f.value > 0 for f in (tp, pp)):
        return
    size = tp.value * ep.value * pp.value
    if world.value % size == 0:
        return
    yield Finding(
        span=ep.span,
        message=(
            f"W ({world.value}) is not divisible by {tp.describe()} x {ep.describe()} x {pp.describe()} = {size}, "
            f"the expert layout: megatron-core refuses to start"
        ),
        fix=f"launch on a multiple of {size} GPUs, or lower {ep.key}",
        related=tuple(Related(f"{f.key} = {f.value}", f.span) for f in (tp, pp, world) if f.span),
    )


_CONFIG = """\
trainer:
  devices: 8
  num_nodes: 1
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: {tp}
  num_moe_experts: {experts}
  expert_model_parallel_size: 4
"""

RULE = Rule(
    code="BL243",
    name="nemo-expert-parallel-mismatch",
    severity="error",
    summary="NeMo: expert parallelism that the experts or the GPUs cannot split",
    check=check,
    needs=("parallel.ep", "settings.num_moe_experts"),
    premises=(EXPERTS,),
    doc=__doc__,
    examples=(
        Example("experts_6.yaml", _CONFIG.format(tp=1, experts=6), flagged=(9,),
                files=(("requirements.txt", "nemo_toolkit==1.23.0\n"),), severity="error"),
        Example("experts_8.yaml", _CONFIG.format(tp=1, experts=8)),
        Example("experts_null.yaml", _CONFIG.format(tp=1, experts="null"), flagged=(9,),
                files=(("requirements.txt", "nemo_toolkit==2.4.0\n"),), severity="error"),
        # tp 4 x ep 4 = 16 expert ranks on 8 GPUs.
        Example("experts_tp4.yaml", _CONFIG.format(tp=4, experts=8), flagged=(9,),
                files=(("requirements.txt", "nemo_toolkit==2.5.0\n"),), severity="error"),
        # No NeMo release pinned: 1.22 ignores the keys, and 2.5.1 removed NeMo 1's Megatron models.
        Example("experts_6_unpinned.yaml", _CONFIG.format(tp=1, experts=6),
                flagged=(9,), severity="info"),  # NeMo before the check can run it too
        Example("experts_6_1_22.yaml", _CONFIG.format(tp=1, experts=6),
                files=(("requirements.txt", "nemo_toolkit==1.22.0\n"),)),
        Example("experts_6_2_6.yaml", _CONFIG.format(tp=1, experts=6),
                files=(("requirements.txt", "nemo_toolkit==2.6.0\n"),)),
        Example("experts_tp2.yaml", _CONFIG.format(tp=2, experts=8)),
    ),
)
