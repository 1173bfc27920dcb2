"""torchtune YAML recipes (`tune run [--nproc_per_node N] RECIPE --config FILE`).

A torchtune config names its builders with `_component_` (`model`,
`tokenizer`, `dataset`, `optimizer`, ...); a YAML file without such a mapping
is not taken. The recipe is chosen on the command line, not in the file, so
the traits below (LoRA model, knowledge distillation, PPO, GRPO, DPO,
single device) are read from the config's content and name: each rule only
fires for the recipes that perform its check (recipes/*.py @ bd2a0fc).

Batch arithmetic: global batch = batch_size x gradient_accumulation_steps x dp.
full_finetune_distributed, lora_finetune_distributed and qat_distributed build
`training.ParallelDims(dp_replicate, dp_shard, tp, cp)` from the
`*_parallel_dim` keys: dp_replicate x dp_shard x tp x cp == W, dp_shard = -1
takes W // (dp_replicate x tp x cp), and dp = dp_replicate x dp_shard
(torchtune/training/_distributed.py:62-91). The other distributed recipes do
not read those keys (dp = W); for single-device configs dp is left unknown
(their header comment is sometimes copied from another recipe). W is the
launch's `--nproc_per_node` x `--nnodes`: only the user can give it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

from ..document import Document, Mapping, Scalar, Sequence
from ..plan import RL, Fact, Origin, TrainingPlan
from .facts import Outside, flag, number
from .spec import ASSIGN, Framework, Launcher

NAME = "torchtune"
FORMATS = ("yaml",)
MARKERS = (b"_component_",)

# `tune run <recipe> --config x.yaml key=value`: the recipe comes first.
LAUNCHERS = (Launcher("tune run", commands=("tune",), subcommands=("run",), markers=(b"tune",), skip=1, flags=ASSIGN),)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=60, launchers=LAUNCHERS)

_DIMS = {
    "dp_replicate": ("data_parallel_replicate_dim", 1),
    "dp_shard": ("data_parallel_shard_dim", -1),
    "tp": ("tensor_parallel_dim", 1),
    "cp": ("context_parallel_dim", 1),
}


def plan(doc: Document, outside: Outside):
    root = doc.root
    if not is_torchtune(root):
        return None
    found = traits(doc)
    world = outside.world_size
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=number(root.get("batch_size"), "batch_size"),
        grad_accum=number(root.get("gradient_accumulation_steps"), "gradient_accumulation_steps"),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        seq_len=number(root.get("tokenizer", "max_seq_len"), "tokenizer.max_seq_len"),
        packing=_packing(root),
    )
    if "ppo" in found:
        plan.rl, plan.settings = _ppo(root, plan)
    if "training" not in found or "single_device" in found:
        return plan  # single device: dp = 1, but the header that says so is sometimes copied wrong
    if "parallel_dims" in found:
        plan.parallel = {short: number(root.get(key), key, default=default) for short, (key, default) in _DIMS.items()}
        plan.layout = tuple(plan.parallel[k] for k in ("dp_replicate", "dp_shard", "tp", "cp"))
        plan.data_parallel = _data_parallel(plan.parallel, world)
    elif world is not None and world.known:
        plan.data_parallel = Fact(world.value, "dp", world.span, world.origin, detail=world.detail)
    return plan


@dataclass(frozen=True)
class PPOSchedule:
    num_steps: Optional[Fact]  # trajectories to train on in all (not optimizer steps)


def _ppo(root: Mapping, plan: TrainingPlan) -> tuple:
    """The PPO recipe (recipes/ppo_full_finetune_single_device.py): batch_size
    trajectories per step, generated forward_batch_size at a time, optimised in
    ppo_batch_size mini-batches."""
    rl = RL(prompts_per_step=plan.micro_batch, mini_batch=number(root.get("ppo_batch_size"), "ppo_batch_size"))
    forward = number(root.get("forward_batch_size"), "forward_batch_size")
    if forward is not None:
        rl.micro_batch = {"policy": forward}
    return rl, PPOSchedule(number(root.get("num_steps"), "num_steps"))


def _data_parallel(parallel: dict, world):
    """dp_replicate x dp_shard, the shard degree -1 resolved with W."""
    if world is None or not world.positive or not all(f.known for f in parallel.values()):
        return None
    replicate, shard, tp, cp = (parallel[k].value for k in ("dp_replicate", "dp_shard", "tp", "cp"))
    if min(replicate, tp, cp) < 1 or (shard < 1 and shard != -1):
        return None  # a degree below 1 (other than the shard's -1) is no layout
    if shard == -1:
        if world.value % (replicate * tp * cp):
            return None  # the layout does not fit W: BL202's finding
        shard = world.value // (replicate * tp * cp)
    if shard < 1 or replicate * shard * tp * cp != world.value:
        return None
    return Fact(replicate * shard, "dp", None, Origin.DERIVED, detail=f"data_parallel_replicate_dim x data_parallel_shard_dim ({shard})")


def _packing(root: Mapping):
    """`dataset.packed`, or the first packed entry of a list of datasets."""
    facts = [flag(entry.get("packed"), "dataset.packed") for entry in datasets(root)]
    return next((f for f in facts if f is not None and f.value), next((f for f in facts if f), None))


# --------------------------------------------------------------------------- shared with the rules


def is_torchtune(root) -> bool:
    """A mapping whose top level holds at least one `_component_` builder."""
    return isinstance(root, Mapping) and any(
        isinstance(value, Mapping) and isinstance(value.get("_component_"), Scalar) for value in root.items.values()
    )


def component(node) -> str:
    """The `_component_` of a builder mapping ("" when there is none)."""
    target = node.get("_component_") if isinstance(node, Mapping) else None
    return target.value if isinstance(target, Scalar) and isinstance(target.value, str) else ""


def datasets(root: Mapping) -> list:
    """The dataset builder mappings: `dataset`, or each entry of a list of them."""
    node = root.get("dataset")
    if isinstance(node, Sequence):
        return [entry for entry in node.items if isinstance(entry, Mapping)]
    return [node] if isinstance(node, Mapping) else []


_RECIPE_IN_HEADER = re.compile(r"\A\s*#[^\n]*\bin (?:recipes/)?([\w/]+)\.py")


def traits(doc: Document) -> set:
    """What the config says about the recipe it is for:
    training (it has an optimizer), lora, quantizer, kd, ppo, grpo, dpo,
    early_exit, single_device, and parallel_dims (the recipe reads the
    `*_parallel_dim` keys)."""
    root = doc.root
    found = set()
    if isinstance(root.get("optimizer"), Mapping):
        found.add("training")
    if "lora" in component(root.get("model")).rsplit(".", 1)[-1].lower():
        found.add("lora")
    if component(root.get("quantizer")):
        found.add("quantizer")
    for trait, key in (("kd", "teacher_model"), ("ppo", "ppo_batch_size"), ("grpo", "grpo_samples"),
                       ("grpo", "orchestration"), ("early_exit", "early_exit_params")):
        if key in root.items:
            found.add(trait)
    loss = component(root.get("loss")).rsplit(".", 1)[-1]
    if "DPO" in loss or "SimPO" in loss or "RSO" in loss:
        found.add("dpo")
    header = _RECIPE_IN_HEADER.match(doc.text)
    if "single_device" in os.path.basename(doc.path) or (header and header.group(1).endswith("single_device")):
        found.add("single_device")
    if "training" in found and not found & {"kd", "ppo", "grpo", "dpo", "early_exit", "single_device"} \
            and not {"lora", "quantizer"} <= found:
        # full_finetune_distributed, qat_distributed, lora_finetune_distributed
        found.add("parallel_dims")
    return found
