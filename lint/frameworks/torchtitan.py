"""TorchTitan TOML (up to v0.2.2).

dp = data_parallel_replicate_degree x data_parallel_shard_degree, where a
shard degree of -1 takes the ranks left over: W // (dp_rep x cp x tp x pp)
(torchtitan/distributed/parallel_dims.py). The global batch must divide by
local_batch_size x dp; gradient accumulation is derived from it
(torchtitan/train.py). `training.batch_size` is the name before PR #1238.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..plan import Fact, TrainingPlan
from .facts import Outside, number

NAME = "torchtitan"
FORMATS = ("toml",)
MARKERS = (b"[training]", b"[parallelism]")

_DEGREES = {
    "dp_replicate": "data_parallel_replicate_degree",
    "dp_shard": "data_parallel_shard_degree",
    "tp": "tensor_parallel_degree",
    "pp": "pipeline_parallel_degree",
    "cp": "context_parallel_degree",
    "ep": "expert_parallel_degree",
}


def plan(doc: Document, outside: Outside):
    training = doc.get("training")
    parallelism = doc.get("parallelism")
    if not isinstance(training, Mapping) and not isinstance(parallelism, Mapping):
        return None
    training = training if isinstance(training, Mapping) else Mapping()
    parallelism = parallelism if isinstance(parallelism, Mapping) else Mapping()

    local_key = "local_batch_size" if "local_batch_size" in training.items else "batch_size"
    parallel = {
        short: number(parallelism.get(key), f"[parallelism] {key}", default=-1 if short == "dp_shard" else 1)
        for short, key in _DEGREES.items()
    }
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(training.get(local_key), f"[training] {local_key}", default=8),
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
        parallel=parallel,
        seq_len=number(training.get("seq_len"), "[training] seq_len", default=2048),
        derived_from_global="grad_accum",
    )
    declared = number(training.get("global_batch_size"), "[training] global_batch_size")
    if declared is not None and not (declared.known and declared.value < 0):
        plan.declared_global_batch = declared  # -1 means local x dp: nothing declared
    plan.layout = tuple(parallel[k] for k in ("dp_replicate", "dp_shard", "cp", "tp", "pp"))
    plan.seq_len_multiple = _seq_len_multiple(doc, parallel)
    plan.data_parallel = _data_parallel(parallel, outside.world_size)
    if plan.data_parallel is None and parallel["dp_replicate"].known:
        plan.data_parallel_factor = parallel["dp_replicate"]
    if plan.declared_global_batch is None and plan.data_parallel and plan.micro_batch.known:
        # No global batch given: TorchTitan trains with local x dp and no accumulation.
        plan.grad_accum = Fact(1, "gradient accumulation", None, "derived: no global_batch_size")
    return plan


# Models whose parallelize.py asserts seq_len % parallel_dims.seq_len_divisor (v0.2.2).
_SEQ_LEN_CHECKED = {"llama3", "llama4", "qwen3", "deepseek_v3", "gpt_oss", "transformers_modeling_backend", "vlm"}


def _seq_len_multiple(doc: Document, parallel: dict):
    """tp x 2 x cp: sequence parallelism splits by tp, load-balanced context parallelism by 2 x cp."""
    model = doc.get("model", "name")
    tp, cp = parallel["tp"], parallel["cp"]
    if not (isinstance(model, Scalar) and model.value in _SEQ_LEN_CHECKED and tp.known and cp.known):
        return None
    return Fact(tp.value * 2 * cp.value, "seq_len divisor", None, f"tensor_parallel_degree {tp.value} x 2 x context_parallel_degree {cp.value}")


def _data_parallel(parallel: dict, world):
    replicate, shard = parallel["dp_replicate"], parallel["dp_shard"]
    if not (replicate.known and shard.known):
        return None
    if shard.value != -1:
        return Fact(replicate.value * shard.value, "dp", None, f"derived: {replicate.describe()} x {shard.describe()}")
    others = [parallel[k] for k in ("dp_replicate", "cp", "tp", "pp")]
    if world is None or not world.known or not all(f.known and f.value > 0 for f in others):
        return None
    product = 1
    for f in others:
        product *= f.value
    resolved = world.value // product
    if resolved < 1 or world.value % product:
        return None  # the layout itself does not fit W: a layout rule's business
    shown = f"dp_shard -1 resolved to W ({world.value}) // {product} = {resolved}"
    return Fact(replicate.value * resolved, "dp", None, f"derived: {shown}")
