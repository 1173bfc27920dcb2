"""
## What it does
Checks TorchTitan's expert-parallel degrees:
- with `expert_parallel_degree` (ep) > 1, `expert_tensor_parallel_degree`
  (etp) must be 1 or equal `tensor_parallel_degree` (tp);
- ep x etp must divide dp_shard x cp x tp, the ranks the expert mesh is cut
  from (its FSDP part is dp_shard x cp x tp // (etp x ep)). The shard degree
  -1 is resolved with the world size; this part stays silent while it
  cannot be known, and on one GPU (no mesh is built);
- `expert_parallel_comm_backend = "deepep"` needs ep > 1 and etp = 1 (llama4
  and deepseek_v3).

## Why is this bad?
`ParallelDims` asserts "Currently we only support ETP=TP or ETP=1"; a mesh whose
degrees do not multiply back to the world size fails to unflatten ("The
product of mesh_sizes=(1, 1, 2, 3, 1) is 6, but the original dimension at
dim=0 has size 8"); DeepEP raises in the model's parallelize function. All
at start-up, after the job has its GPUs.

## Example
```toml
[parallelism]
tensor_parallel_degree = 2
expert_parallel_degree = 4
expert_tensor_parallel_degree = 4   # neither 1 nor tp
```

## Use instead
```toml
[parallelism]
tensor_parallel_degree = 2
expert_parallel_degree = 4
expert_tensor_parallel_degree = 2
```

## Source
torchtitan/distributed/parallel_dims.py @ v0.2.2: 58-59 (etp), 136-158 and
190-210 (`build_mesh`: efsdp = dp_shard x cp x tp // (etp x ep), unflattened from
the world mesh); the mesh is built at start-up by `set_determinism` when W > 1
(train.py:111, distributed/utils.py:156-158); DeepEP:
models/llama4/infra/parallelize.py:114-126, models/deepseek_v3/infra/parallelize.py:100-112.
The expert degrees are keys from 0.2.0 (0.1.0 and main before it have none:
they cannot run such a config), and `expert_parallel_comm_backend` from 0.2.1.
0.2.0 asserted ep x etp dividing the ranks in `ParallelDims` (parallel_dims.py:
57-64) but built no expert mesh for ep 1, so etp > 1 with ep 1 is refused
from 0.2.1 on only. See "When it holds".
"""

from collections.abc import Iterator

from batchlint.frameworks.torchtitan import DISTRIBUTION, NO_TOML, TitanSettings, model_premises, model_window
from batchlint.plan import Fact, TrainingPlan
from batchlint.premise import Premise
from batchlint.rule import Example, Finding, Related, Rule

_NO_KEYS = "v0.1.0 has no expert_parallel_degree nor expert_tensor_parallel_degree (config_manager.py)"
ETP = model_premises({
    "0.2.0": "torchtitan/distributed/parallel_dims.py:57-58",
    "0.2.1": "torchtitan/distributed/parallel_dims.py:58-59",
    "0.2.2": "torchtitan/distributed/parallel_dims.py:58-59",
}, since="0.2.0", keys_since="0.2.0", before=_NO_KEYS, what="etp, ")
_MESH = {
    "0.2.0": "torchtitan/distributed/parallel_dims.py:57-64 (asserts dp_shard x cp [x tp] divisible by ep)",
    "0.2.1": "torchtitan/distributed/parallel_dims.py:134-155 (efsdp, the sparse mesh unflattened from the world)",
    "0.2.2": "torchtitan/distributed/parallel_dims.py:136-158",
}
MESH = model_premises(_MESH, since="0.2.0", keys_since="0.2.0", before=_NO_KEYS, what="mesh, ")
# ep 1 with etp > 1: 0.2.0 builds no expert mesh then (parallel_dims.py:66-73: ep 1 takes
# _build_mesh_without_ep, which never reads etp); 0.2.1 always unflattens the sparse mesh.
MESH_EP1 = model_premises(_MESH, since="0.2.1", keys_since="0.2.0", what="mesh without ep, ",
                          before="v0.2.0 torchtitan/distributed/parallel_dims.py:66-73 builds no expert mesh for ep 1")
DEEPEP = Premise(
    DISTRIBUTION, since="0.2.1", runs_since="0.2.1", name="deepep",
    source="v0.2.0 has no expert_parallel_comm_backend (config/job_config.py); v0.2.1 "
           "models/llama4/infra/parallelize.py:110-122, models/deepseek_v3/infra/parallelize.py:94-106 (first); "
           "v0.2.2 models/llama4/infra/parallelize.py:114-126, models/deepseek_v3/infra/parallelize.py:100-112 "
           "(still); " + NO_TOML)


def check(plan: TrainingPlan, titan: TitanSettings) -> Iterator[Finding]:
    p = plan.parallel
    ep, etp, tp = p["ep"], p["etp"], p["tp"]
    e, et, t = ep.count, etp.count, tp.count
    if e is None or et is None or t is None:
        return  # degrees below 1 are BL211's finding
    if e > 1 and et not in (1, t):
        yield Finding(
            span=etp.span or ep.span,
            message=f"etp = {et} must be 1 or equal tp = {t} when ep = {e} > 1",
            notes=(f"The degrees: {etp.describe()}, {tp.describe()}, {ep.describe()}.",
                   "TorchTitan refuses the layout at start-up (\"Currently we only support ETP=TP or ETP=1\")."),
            fix=f"set {etp.key} to 1 or {t}",
            related=_related(ep, tp),
            premise=model_window(titan.model_support, "etp, "),
        )
        return
    yield from _mesh(plan, titan, (ep, e), (etp, et), t)
    yield from _deepep(titan, (ep, e), (etp, et))


def _mesh(plan: TrainingPlan, titan: TitanSettings, ep_degree: tuple[Fact, int], etp_degree: tuple[Fact, int],
          t: int) -> Iterator[Finding]:
    (ep, e), (etp, et) = ep_degree, etp_degree
    shard = titan.shard_degree.number if titan.shard_degree is not None else None
    c, r, s = (plan.parallel[k].count for k in ("cp", "dp_replicate", "pp"))
    if shard is None or c is None or r is None or s is None or e * et == 1:
        return
    ranks = shard * c * t
    world = ranks * r * s
    if world <= 1 or ranks % (e * et) == 0:
        return
    w = plan.world_size.number if plan.world_size is not None else None
    if w is not None and w != world:
        return  # the layout itself does not fit W: BL202's finding, raised first
    at_fault = ep if e > 1 else etp
    yield Finding(
        span=at_fault.span or etp.span or ep.span,
        message=f"ep {e} x etp {et} = {e * et} does not divide the {ranks} ranks the expert mesh is cut from",
        notes=(f"The expert mesh is cut from dp_shard ({shard}) x cp ({c}) x tp ({t}) = {ranks} ranks; "
               f"{ep.describe()} x {etp.describe()} = {e * et}.",
               "The device mesh cannot be built and the job refuses to start."),
        fix=f"choose {ep.key} x {etp.key} dividing {ranks}",
        related=_related(etp if at_fault is ep else ep, plan.parallel["tp"]),
        premise=model_window(titan.model_support, "mesh, " if e > 1 else "mesh without ep, "),
    )


def _deepep(titan: TitanSettings, ep_degree: tuple[Fact, int], etp_degree: tuple[Fact, int]) -> Iterator[Finding]:
    (ep, e), (etp, et) = ep_degree, etp_degree
    backend = titan.ep_comm_backend
    if backend.value != "deepep" or not titan.model_support.deepep:
        return
    if e == 1:
        why, fix = f"DeepEP requires {ep.key} > 1", f"set {ep.key} > 1, or expert_parallel_comm_backend to \"standard\""
    elif et > 1:
        why, fix = f"DeepEP does not support {etp.describe()}", f"set {etp.key} to 1, or use the \"standard\" backend"
    else:
        return
    yield Finding(span=backend.span, message=why,
                  notes=("The model's parallelize function raises at start-up.",), fix=fix,
                  related=_related(ep, etp), premise="deepep")


def _related(*facts: Fact) -> tuple[Related, ...]:
    return tuple(Related(f"{f.key} = {f.value}", f.span) for f in facts if f.span)


_TITAN_DEEPEP_EP1 = """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
expert_parallel_degree = 1
expert_tensor_parallel_degree = 1
expert_parallel_comm_backend = "deepep"
"""

_ETP_2_EP_1 = """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
expert_parallel_degree = 1
expert_tensor_parallel_degree = 2
"""


RULE = Rule(
    code="BL210",
    name="torchtitan-expert-parallel-layout",
    severity="error",
    summary="TorchTitan: expert-parallel degrees the device mesh cannot hold (etp not 1 or tp, ep x etp not dividing the ranks)",
    check=check,
    subject=TitanSettings,
    needs=("parallel.ep", "parallel.etp", "parallel.tp", "parallel.cp", "parallel.dp_replicate", "parallel.pp"),
    premises=ETP + MESH + MESH_EP1 + (DEEPEP,),
    doc=__doc__,
    examples=(
        Example("titan_etp_4.toml", """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
expert_parallel_degree = 4
expert_tensor_parallel_degree = 4
""", flagged=(9,), severity="error",
                message="etp = 4 must be 1 or equal tp = 2 when ep = 4 > 1",
                fix="set [parallelism] expert_tensor_parallel_degree to 1 or 2"),
        Example("titan_etp_tp.toml", """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
expert_parallel_degree = 4
expert_tensor_parallel_degree = 2
"""),
        # W=8, tp=2: dp_shard = 4; the expert mesh has 4 x 2 = 8 ranks; ep 3 does not divide them.
        Example("titan_ep_3_w8.toml", """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
expert_parallel_degree = 3
expert_tensor_parallel_degree = 1
""", flagged=(8,), world_size=8,
                message="ep 3 x etp 1 = 3 does not divide the 8 ranks the expert mesh is cut from",
                fix="choose [parallelism] expert_parallel_degree x [parallelism] expert_tensor_parallel_degree "
                    "dividing 8"),
        Example("titan_ep_8_w8.toml", """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
expert_parallel_degree = 8
expert_tensor_parallel_degree = 1
""", world_size=8),
        # A written shard degree needs no W: 2 x 2 = 4 ranks, ep 8 does not divide them.
        Example("titan_ep_8_shard_2.toml", """\
[model]
name = "deepseek_v3"
flavor = "16B"

[parallelism]
data_parallel_shard_degree = 2
tensor_parallel_degree = 2
expert_parallel_degree = 8
expert_tensor_parallel_degree = 1
""", flagged=(8,),
                message="ep 8 x etp 1 = 8 does not divide the 4 ranks the expert mesh is cut from",
                fix="choose [parallelism] expert_parallel_degree x [parallelism] expert_tensor_parallel_degree "
                    "dividing 4"),
        Example("titan_deepep_ep1.toml", _TITAN_DEEPEP_EP1, flagged=(10,), severity="error",
                message="DeepEP requires [parallelism] expert_parallel_degree > 1",
                fix='set [parallelism] expert_parallel_degree > 1, or expert_parallel_comm_backend to "standard"'),
        # 0.2.0 has no expert_parallel_comm_backend (it refuses the key: BL510's finding).
        Example("titan_deepep_ep1_020.toml", _TITAN_DEEPEP_EP1, files=(('requirements.txt', 'torchtitan==0.2.0\n'),)),
        # etp 2 with ep 1 on 3 ranks: 0.2.0 builds no expert mesh for ep 1, 0.2.1 on cannot unflatten it.
        Example("titan_etp_2_ep_1_w3.toml", _ETP_2_EP_1, flagged=(9,), world_size=3, severity="info",
                message="ep 1 x etp 2 = 2 does not divide the 3 ranks the expert mesh is cut from",
                fix="choose [parallelism] expert_parallel_degree x [parallelism] expert_tensor_parallel_degree "
                    "dividing 3"),
        Example("titan_etp_2_ep_1_w3_021.toml", _ETP_2_EP_1, flagged=(9,), world_size=3,
                files=(('requirements.txt', 'torchtitan==0.2.1\n'),), severity="error",
                message="ep 1 x etp 2 = 2 does not divide the 3 ranks the expert mesh is cut from",
                fix="choose [parallelism] expert_parallel_degree x [parallelism] expert_tensor_parallel_degree "
                    "dividing 3"),
        Example("titan_etp_2_ep_1_w3_020.toml", _ETP_2_EP_1, world_size=3,
                files=(('requirements.txt', 'torchtitan==0.2.0\n'),)),
    ),
)
