"""XTuner v0.1: mmengine-style Python configs.

Global batch = batch_size x accumulative_counts x W / sequence_parallel_size
(xtuner docs/zh_cn/user_guides/sequence_parallel.md). XTuner v1 configs
(`from xtuner.v1 ...`) are a different schema and are not read here.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar, Symbol
from ..plan import Fact, TrainingPlan
from .facts import Outside, divide, find_key, flag, number

NAME = "xtuner"
FORMATS = ("python",)
MARKERS = (b"train_dataloader", b"accumulative_counts")

LENGTH_GROUPED = "LengthGroupedSampler"


def is_v1(doc: Document) -> bool:
    return any(
        isinstance(node, Scalar) and isinstance(node.value, Symbol) and node.value.qualname.startswith("xtuner.v1")
        for node in doc.namespace.values()
    )


def plan(doc: Document, outside: Outside):
    if doc.format != "python" or is_v1(doc):
        return None
    loader = doc.get("train_dataloader")
    optim = doc.get("optim_wrapper")
    if not isinstance(loader, Mapping) and not isinstance(optim, Mapping):
        return None
    loader = loader if isinstance(loader, Mapping) else Mapping()
    optim = optim if isinstance(optim, Mapping) else Mapping()

    sp = number(doc.namespace.get("sequence_parallel_size"), "sequence_parallel_size", default=1)
    accumulation = optim.get("accumulative_counts")
    if accumulation is None:
        accumulation = doc.namespace.get("accumulative_counts")
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(loader.get("batch_size"), "train_dataloader.batch_size", default=1),
        # mmengine's OptimWrapper defaults accumulative_counts to 1.
        grad_accum=number(accumulation, "optim_wrapper.accumulative_counts", default=1),
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
        parallel={"sp": sp},
        seq_len=number(doc.namespace.get("max_length"), "max_length"),
        packing=flag(find_key(loader.get("dataset"), "pack_to_max_length"), "pack_to_max_length"),
    )
    plan.data_parallel = divide(outside.world_size, [sp])
    sampler = loader.get("sampler")
    sampler_type = sampler.get("type") if isinstance(sampler, Mapping) else None
    if isinstance(sampler_type, Scalar) and isinstance(sampler_type.value, Symbol):
        plan.sampler = Fact(sampler_type.value, "train_dataloader.sampler.type", sampler_type.span, node=sampler_type)
        grouped = sampler_type.value.name == LENGTH_GROUPED
        plan.length_grouping = Fact(grouped, sampler_type.value.name, sampler_type.span, node=sampler_type)
    return plan
