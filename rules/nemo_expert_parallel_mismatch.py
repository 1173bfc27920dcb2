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

## Source
megatron-core core_v0.14.0: megatron/core/transformer/transformer_config.py:739-740,
megatron/core/transformer/moe/moe_layer.py:64, megatron/core/parallel_state.py:696-706;
NeMo @ 8cfedd7 nemo/collections/nlp/modules/common/megatron/megatron_init.py:369-380;
NeMo 2 checks the first two in nemo/collections/llm/api.py:1401-1409.
"""

from collections.abc import Iterator

from batchlint.plan import TrainingPlan
from batchlint.rule import Example, Finding, Related, Rule


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
    doc=__doc__,
    examples=(
        Example("experts_6.yaml", _CONFIG.format(tp=1, experts=6), flagged=(9,)),
        Example("experts_8.yaml", _CONFIG.format(tp=1, experts=8)),
        Example("experts_null.yaml", _CONFIG.format(tp=1, experts="null"), flagged=(9,)),
        # tp 4 x ep 4 = 16 expert ranks on 8 GPUs.
        Example("experts_tp4.yaml", _CONFIG.format(tp=4, experts=8), flagged=(9,)),
        Example("experts_tp2.yaml", _CONFIG.format(tp=2, experts=8)),
    ),
)
