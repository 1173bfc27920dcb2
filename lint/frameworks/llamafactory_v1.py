"""LLaMA-Factory v1 YAML (`examples/v1/*`: micro_batch_size, global_batch_size, dist_config, cp_size).

dp = dp_size when written, else W // cp_size, and dp x cp must be W
(src/llamafactory/v1/accelerator/interface.py:87-99). The released v1 (0.9.5)
reads cp_size and dp_size inside `dist_config` (v0.9.5 interface.py:138-146,
examples/v1/train_full/train_full_ulysses_cp.yaml); the main branch after it
(3f77101) at the top level, where 0.9.5 refuses them as unknown keys: either
place is read, the top level first. Without
global_batch_size the global batch is dp x micro_batch_size and nothing is
accumulated; with it, global_batch_size % (dp x micro_batch_size) must be 0
and the accumulation is the quotient (v1/core/utils/batching.py:184-195).
Read through the LLaMA-Factory adapter (llamafactory.py), which tries this
schema first.
"""

from __future__ import annotations

from ..document import Document, Mapping, Node, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, divide, flag, number

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "llamafactory-v1"

# Keys only v1 configs use (v1/config/*.py); v0 and the other schemas have none of them.
_V1_KEYS = {"model_class", "dist_config", "train_dataset", "batching_strategy", "cp_size", "cp_mode", "dp_size",
            "kernel_config", "peft_config", "init_config", "quant_config", "optim_config", "mp_shard_size",
            "mp_replicate_size", "sample_backend"}


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    root = doc.root
    keys = set(root.items)
    if not keys & {"micro_batch_size", "global_batch_size"} or not keys & _V1_KEYS:
        return None
    world = outside.world_size
    cp_node, cp_key = _degree(root, "cp_size")
    dp_node, dp_key = _degree(root, "dp_size")
    cp = number(cp_node, cp_key, default=1)
    dp_size = number(dp_node, dp_key)
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(_given(root, "micro_batch_size"), "micro_batch_size", default=1),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel={"cp": cp},
        data_parallel=_data_parallel(dp_size, cp, world),
        seq_len=number(_given(root, "cutoff_len"), "cutoff_len", default=2048),
        bf16=flag(root.get("bf16"), "bf16"),
    )
    strategy = root.get("batching_strategy")
    if isinstance(strategy, Scalar) and strategy.value == "dynamic_batching":
        plan.unsized_data = Fact(strategy.value, "batching_strategy", strategy.span, node=strategy)
    plan.max_steps = number(root.get("max_steps"), "max_steps")
    declared = number(_given(root, "global_batch_size"), "global_batch_size")
    if declared is not None:
        plan.declared_global_batch, plan.derived_from_global = declared, "grad_accum"
    else:
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail="no global_batch_size")
    if not _single_gpu(world):
        plan.layout, plan.layout_exact = ((dp_size, cp), True) if dp_size is not None else ((cp,), False)
    plan.settings = LlamaFactoryV1Settings(
        attn_implementation=_attention(root),
        batching_strategy=_written(root.get("batching_strategy"), "batching_strategy"),
        dist_engine=_written(root.get("dist_config", "name"), "dist_config.name"),
    )
    return plan


@lean_dataclass(frozen=True)
class LlamaFactoryV1Settings(Subject):
    """v1's own arguments its rules read."""

    FRAMEWORKS = (NAME,)

    # flash_attn, which v1 passes to from_pretrained as attn_implementation; value None
    # when written as something else than a plain value.
    attn_implementation: Fact
    batching_strategy: Optional[Fact]  # as written
    dist_engine: Optional[Fact]  # dist_config.name as written


def _written(node: Optional[Node], key: str) -> Optional[Fact]:
    """A value as written (None when it is not a plain value), or None when absent."""
    return None if node is None else Fact(getattr(node, "value", None), key, node.span, node=node)


def _single_gpu(world) -> bool:
    # One GPU runs without torchrun: not distributed, dp 1, no mesh check (v1/launcher.py:49, interface.py:87-88).
    return world is not None and world.known and world.value == 1


def _data_parallel(dp_size, cp, world) -> Optional[Fact]:
    """dp_size when written (and positive), else W // cp_size."""
    if _single_gpu(world):
        return Fact(1, "dp", None, Origin.DERIVED, detail="one GPU, not distributed")
    if dp_size is None:
        return divide(world, [cp])
    return dp_size if dp_size.known and dp_size.value > 0 else None


def _given(root: Mapping, key: str) -> Optional[Node]:
    """The node of `key`, or None when absent or written as null (the dataclass default applies)."""
    node = root.get(key)
    return None if isinstance(node, Scalar) and node.value is None else node


def _degree(root: Mapping, key: str) -> tuple[Optional[Node], str]:
    """(node, name) of a parallel degree: at the top level (main after 0.9.5), else in dist_config
    (0.9.5), named by where it was read ("dist_config.cp_size")."""
    node = _given(root, key)
    if node is None and isinstance(root.get("dist_config"), Mapping):
        inner = root.get("dist_config", key)
        if inner is not None and not (isinstance(inner, Scalar) and inner.value is None):
            return inner, f"dist_config.{key}"
    return node, key


def _attention(root: Mapping) -> Fact:
    """flash_attn: v1 passes it to from_pretrained as attn_implementation, default
    "sdpa" (v1/config/model_args.py:36-41, v1/core/model_engine.py:186-192)."""
    node = root.get("flash_attn")
    if node is None:
        return Fact("sdpa", "flash_attn", None, Origin.DEFAULT)
    return Fact(node.value if isinstance(node, Scalar) else None, "flash_attn", node.span, node=node)
