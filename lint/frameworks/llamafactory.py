"""LLaMA-Factory: TrainingArguments-style YAML (`llamafactory-cli train`), and
its v1 schema (llamafactory_v1.py), tried first.

Its arguments extend transformers' Seq2SeqTrainingArguments: a micro batch of
8 and no accumulation unless given. Stage `pt` packs by default
(hparams/parser.py:645). Megatron keys (tensor_model_parallel_size, ...) run
under USE_MCA=1 (mcore_adapter: dp = W / (tp x pp x cp), mcore_adapter
trainer.py `_prepare_train_loop`) or, with Megatron Bridge's own keys, under
USE_MEGATRON_BRIDGE=1 (tp x pp x cp x ep must divide W, parser.py:336-349).
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..plan import Fact, Origin
from . import llamafactory_v1
from .facts import Outside, divide, number
from .training_arguments import FORMATS, MARKERS as _TA_MARKERS, is_training_arguments, plan_from

NAME = "llamafactory"
__all__ = ["NAME", "FORMATS", "MARKERS", "plan"]

MARKERS = _TA_MARKERS + (b"micro_batch_size",)  # v1 configs
KEYS = {"stage", "finetuning_type", "cutoff_len", "template", "neat_packing"}

_MEGATRON = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
             "expert_model_parallel_size")
# MegatronBridgeArguments fields that mcore_adapter does not have (hparams/megatron_bridge_args.py).
_BRIDGE = {"use_packed_sequences", "mixed_precision", "megatron_pretrained_checkpoint", "export_hf_on_finish",
           "extra_config"}


def plan(doc: Document, outside: Outside):
    v1 = llamafactory_v1.plan(doc, outside)
    if v1 is not None:
        return v1
    root = doc.root
    if not (set(root.items) & KEYS) or not is_training_arguments(root):
        return None
    plan = plan_from(doc, outside, NAME)
    if plan.packing is None and stage(root) == "pt":
        plan.packing = Fact(True, "packing", None, Origin.DEFAULT, detail="default for stage pt")
    if set(root.items) & set(_MEGATRON):
        _megatron(plan, root, outside.world_size)
    return plan


def stage(root: Mapping):
    """The training stage as written, "sft" when not (hparams/finetuning_args.py:460-463)."""
    node = root.get("stage")
    if node is None:
        return "sft"
    return node.value if isinstance(node, Scalar) else None


def _megatron(plan, root: Mapping, world):
    tp, pp, cp, ep = (number(root.get(key), key, default=1) for key in _MEGATRON)
    plan.parallel.update(tp=tp, pp=pp, cp=cp, ep=ep)
    plan.layout_exact = False
    if set(root.items) & _BRIDGE:
        plan.layout = (tp, pp, cp, ep)  # dp of the bridge's derived global batch is not modelled
        plan.data_parallel = None
    else:
        plan.layout = (tp, pp, cp)  # megatron core: W % (tp x pp x cp)
        plan.data_parallel = divide(world, [tp, pp, cp])
