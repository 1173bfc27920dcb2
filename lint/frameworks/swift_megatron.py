"""ms-swift Megatron YAML (`megatron sft/pt/rlhf config.yaml`; Ray configs with `train:`/`rollout:` groups).

micro_batch_size (default 1) and global_batch_size (default 16) as in
Megatron-LM; dp = W // (tensor x pipeline x context parallel size), the
global batch must divide by micro x dp and the accumulation is the quotient
(swift/megatron/arguments/megatron_args.py:480-483, 943-959); megatron core
needs W % (tp x pp x cp) == 0. A Ray config's `train:` group overrides the
shared keys and names the train group's GPUs (`train.gpus`,
swift/ray/megatron/driver_utils.py:87-170). Read through the ms-swift
adapter (swift.py), which tries this schema first.
"""

from __future__ import annotations

from typing import Optional

from ..document import Document, Mapping, Node, Scalar
from ..plan import Fact, Origin, TrainingPlan
from .facts import Outside, divide, flag, number

NAME = "swift-megatron"

DEGREES = {"tp": "tensor_model_parallel_size", "pp": "pipeline_model_parallel_size", "cp": "context_parallel_size"}


def plan(doc: Document, outside: Outside, world: Optional[Fact]) -> Optional[TrainingPlan]:
    """`world`: the world size the ms-swift adapter settled on; a Ray config's train.gpus wins over it."""
    if lookup(doc.root, "micro_batch_size") is None and lookup(doc.root, "global_batch_size") is None:
        return None
    world = _train_gpus(doc.root, outside) or world
    parallel = {short: number(lookup(doc.root, key), key, default=1) for short, key in DEGREES.items()}
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(lookup(doc.root, "micro_batch_size"), "micro_batch_size", default=1),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel=parallel,
        data_parallel=divide(world, list(parallel.values())),
        layout=tuple(parallel.values()),
        layout_exact=False,
        packing=flag(lookup(doc.root, "packing"), "packing"),
        seq_len=number(lookup(doc.root, "max_length"), "max_length"),
        sequence_parallel=flag(lookup(doc.root, "sequence_parallel"), "sequence_parallel"),
    )
    declared = number(lookup(doc.root, "global_batch_size"), "global_batch_size")
    if declared is not None:  # the default 16 has no line to point at: left out
        plan.declared_global_batch, plan.derived_from_global = declared, "grad_accum"
    return plan


def lookup(root: Mapping, key: str) -> Optional[Node]:
    """A key of the train group when a Ray config gives one there, else the shared (top-level) one."""
    train = root.get("train")
    if isinstance(train, Mapping) and key in train.items:
        return train.items[key]
    return root.get(key)


def padding_free(root: Mapping) -> Optional[Fact]:
    """padding_free as it runs: forced on by packing (megatron_base_args.py:35-37), default true
    (megatron_args.py:524); None when written as something else than true/false."""
    packing = flag(lookup(root, "packing"), "packing")
    if packing is not None and packing.value:
        return packing
    node = lookup(root, "padding_free")
    if node is None:
        return Fact(True, "padding_free", None, Origin.DEFAULT)
    return flag(node, "padding_free")  # None when not a plain true/false


def _train_gpus(root: Mapping, outside: Outside) -> Optional[Fact]:
    if outside.world_size is not None and outside.world_size.origin is Origin.DIRECTIVE:
        return None
    gpus = root.get("train", "gpus")
    if isinstance(gpus, Scalar) and isinstance(gpus.value, int) and not isinstance(gpus.value, bool) and gpus.value > 0:
        return Fact(gpus.value, "world size", gpus.span, Origin.FILE, detail="train.gpus")
    return None
