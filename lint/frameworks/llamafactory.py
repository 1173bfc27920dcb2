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

from typing import Optional

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin
from . import llamafactory_v1
from .facts import Outside, divide, flag, number
from .releases import LLAMAFACTORY
from .spec import ASSIGN, Count, Framework, Launcher
from .training_arguments import FORMATS, MARKERS as _TA_MARKERS, is_training_arguments, plan_from

NAME = "llamafactory"
__all__ = ["NAME", "FORMATS", "MARKERS", "FRAMEWORK", "plan"]

MARKERS = _TA_MARKERS + (b"micro_batch_size", b"global_batch_size")  # v1 configs (llamafactory_v1.plan)

# `llamafactory-cli train x.yaml key=value` runs torchrun with NPROC_PER_NODE x NNODES (llamafactory/cli.py).
LAUNCHERS = (Launcher("llamafactory-cli", commands=("llamafactory-cli",), subcommands=("*",),
                      markers=(b"llamafactory-cli",), nproc=Count(env=("NPROC_PER_NODE",)),
                      nnodes=Count(env=("NNODES",)), flags=ASSIGN),)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=100, launchers=LAUNCHERS, distribution=LLAMAFACTORY)

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
    # LLaMA-Factory keeps transformers' defaults and turns neither precision on itself.
    # logging_steps 500: transformers' default, which LLaMA-Factory keeps (TRL's configs and ms-swift set their own).
    plan = plan_from(doc, outside, NAME, precision_off=("fp16", "bf16"), logging_steps_default=500)
    streaming = flag(root.get("streaming"), "streaming")
    if streaming is not None and streaming.value is True:
        plan.unsized_data = streaming
    plan.max_steps = number(root.get("max_steps"), "max_steps")
    plan.seq_len = number(root.get("cutoff_len"), "cutoff_len", default=2048)  # hparams/data_args.py:46-49 @ ff6d4d1
    plan.settings = _arguments(root)
    if plan.packing is None and stage(root) == "pt":
        plan.packing = Fact(True, "packing", None, Origin.DEFAULT, detail="default for stage pt")
    if set(root.items) & set(_MEGATRON):
        _megatron(plan, root, outside.world_size)
    return plan


@lean_dataclass(frozen=True)
class Arguments:
    """The LLaMA-Factory arguments its own rules read (hparams/finetuning_args.py, data_args.py)."""

    stage: Fact  # value None when not a plain string; "sft" by default
    neat_packing: Optional[Fact]
    flash_attn: Optional[Fact]  # as written ("fa2", "auto", ...)
    gpt_oss: bool  # a gpt-oss model, which LLaMA-Factory runs with FlashAttention-3


def _arguments(root: Mapping) -> Arguments:
    node, attn = root.get("stage"), root.get("flash_attn")
    model = str(getattr(root.get("model_name_or_path"), "value", "")).lower()
    return Arguments(
        stage=Fact(stage(root), "stage", node.span, node=node) if node is not None else Fact("sft", "stage", None, Origin.DEFAULT),
        neat_packing=flag(root.get("neat_packing"), "neat_packing"),
        flash_attn=Fact(getattr(attn, "value", None), "flash_attn", attn.span, node=attn) if attn is not None else None,
        gpt_oss="gpt-oss" in model or "gpt_oss" in model,
    )


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
