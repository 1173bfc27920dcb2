"""axolotl YAML.

micro_batch_size is per device; `batch_size` (also per device) derives
gradient_accumulation_steps = batch_size // micro_batch_size, a silent floor
(src/axolotl/utils/schemas/validation.py). dp = W unless context parallelism
is on, whose effect on dp is not modelled here (dp stays unknown).
"""

from __future__ import annotations

from ..document import Document, Scalar
from ..plan import Fact, TrainingPlan
from .facts import Outside, flag, number

NAME = "axolotl"
FORMATS = ("yaml",)
MARKERS = (b"base_model",)


def plan(doc: Document, outside: Outside):
    root = doc.root
    base_model = root.get("base_model")
    if not (isinstance(base_model, Scalar) and isinstance(base_model.value, str)):
        return None  # axolotl names a model; NeMo's muTransfer configs nest one
    micro = number(root.get("micro_batch_size"), "micro_batch_size")
    grad_accum = number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps")
    per_device = number(root.get("batch_size"), "batch_size")
    if grad_accum is None and per_device and per_device.known and micro and micro.known and micro.value > 0:
        grad_accum = Fact(per_device.value // micro.value, "gradient_accumulation_steps", None,
                          f"derived: batch_size ({per_device.value}) // micro_batch_size ({micro.value})")
    elif grad_accum is None and micro is not None:
        grad_accum = Fact(1, "gradient_accumulation_steps", None, "default")
    cp = number(root.get("context_parallel_size") or root.get("sequence_parallel_degree"),
                "context_parallel_size", default=1)
    world = outside.world_size
    data_parallel = None
    if world and world.known and cp.known and cp.value == 1:
        data_parallel = Fact(world.value, "dp", world.span, world.source)
    return TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=micro,
        grad_accum=grad_accum,
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"cp": cp},
        data_parallel=data_parallel,
        packing=flag(root.get("sample_packing"), "sample_packing"),
        length_grouping=flag(root.get("group_by_length"), "group_by_length"),
        seq_len=number(root.get("sequence_len"), "sequence_len"),
    )
