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

from ..document import Document, LaunchDocument, Mapping, Scalar
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass
from ..own_trainer import program_imports
from ..plan import Fact, Origin, Subject
from ..premise import HOLDS, Premise, judge
from ..project import ProjectView
from . import hf, llamafactory_v1
from .facts import Outside, divide, flag, number
from .releases import LLAMAFACTORY
from .spec import ASSIGN, FLAGS, Count, Framework, Launcher
from .training_arguments import FORMATS, MARKERS as _TA_MARKERS, is_training_arguments, plan_from

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "llamafactory"
__all__ = ["NAME", "FORMATS", "MARKERS", "FRAMEWORK", "plan"]

MARKERS = _TA_MARKERS + (b"micro_batch_size", b"global_batch_size")  # v1 configs (llamafactory_v1.plan)

# `llamafactory-cli train x.yaml key=value` runs torchrun with NPROC_PER_NODE x NNODES (llamafactory/cli.py);
# without a YAML, `llamafactory-cli train --stage sft ...` hands its flags to HfArgumentParser (hparams/parser.py
# _parse_args:48 @ v0.8.0, read_args:98-99 @ v0.9.5): they are the whole config (inline).
# `torchrun/deepspeed src/train.py --stage sft ...` in a checkout runs the program the checkout holds
# (src/train.py imports llamafactory.train.tuner.run_exp @ v0.8.0 to v0.9.5, whose get_train_args parses
# the flags with HfArgumentParser); so does `python -m llamafactory.launcher` (its `__main__` runs run_exp
# @ v0.9.3, v0.9.5: what llamafactory-cli runs under torchrun). `--stage` is the flag
# that picks this entry point over transformers' (hf.py); whether the program is LLaMA-Factory's is
# decided in `plan` by what it imports, and a program that is not is read as hf.py reads it.
# Without NPROC_PER_NODE it starts one process per device the machine shows it (cli.py:87 @ v0.8.0,
# launcher.py:66 @ v0.9.5: get_device_count(), torch.cuda/npu.device_count(), which CUDA_VISIBLE_DEVICES and
# ASCEND_RT_VISIBLE_DEVICES limit); v0.7 ran one process. 1 device: one process, no torchrun.
LAUNCHERS = (Launcher("llamafactory-cli", commands=("llamafactory-cli",), subcommands=("*",),
                      markers=(b"llamafactory-cli",),
                      nproc=Count(env=("NPROC_PER_NODE",), devices=("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES")),
                      nnodes=Count(env=("NNODES",)), flags=ASSIGN, inline=True),
             Launcher("python", scripts=("*.py",), modules=("llamafactory.launcher",), markers=(b"--stage",),
                      flags=FLAGS, inline=True, config_flags=("config", "config_file", "cfg"),
                      linked=("deepspeed",), requires=("--stage",)))
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=100, launchers=LAUNCHERS, distribution=LLAMAFACTORY)

KEYS = {"stage", "finetuning_type", "cutoff_len", "template", "neat_packing"}

# cutoff_len's default: 2048 from 0.9.1 (src/llamafactory/hparams/data_args.py:48-49 @ v0.9.1, 46-47 @ v0.9.5);
# 1024 before (src/llmtuner/hparams/data_args.py:27-28 @ v0.7.1, src/llamafactory/hparams/data_args.py:44-45
# @ v0.9.0). A project pinned to those releases gets 1024; any other, 2048.
CUTOFF_LEN_1024 = Premise(
    LLAMAFACTORY, until="0.9.0",
    source="v0.7.1 src/llmtuner/hparams/data_args.py:27-28; v0.9.0 src/llamafactory/hparams/data_args.py:44-45 "
           "(last 1024); v0.9.1 data_args.py:48-49 (2048)")

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
    ours = _program(doc, outside.view)
    if ours == "":
        return None  # `llamafactory-cli chat ...`: no training
    if ours is False:
        return hf.plan(doc, outside)  # a program of its own given a `--stage` flag: transformers' arguments
    if ours is None and (not (set(root.items) & KEYS) or not is_training_arguments(root)):
        ours = _by_keys(doc)  # a `--stage` line with no batch flag: the Trainer's defaults apply
        if ours is None:
            return None
    # LLaMA-Factory keeps transformers' defaults and turns neither precision on itself.
    # logging_steps 500: transformers' default, which LLaMA-Factory keeps (TRL's configs and ms-swift set their own).
    plan = plan_from(doc, outside, NAME, precision_off=("fp16", "bf16"), logging_steps_default=500)
    streaming = flag(root.get("streaming"), "streaming")
    if streaming is not None and streaming.value is True:
        plan.unsized_data = streaming
    plan.max_steps = number(root.get("max_steps"), "max_steps")
    plan.seq_len = number(root.get("cutoff_len"), "cutoff_len", default=2048)
    if plan.seq_len.origin is Origin.DEFAULT and judge(CUTOFF_LEN_1024, doc.path, outside.view).outcome == HOLDS:
        plan.seq_len = Fact(1024, "cutoff_len", None, Origin.DEFAULT, detail="default before LLaMA-Factory 0.9.1")
    plan.settings = _arguments(root)
    if plan.packing is None and stage(root) == "pt":
        plan.packing = Fact(True, "packing", None, Origin.DEFAULT, detail="default for stage pt")
    if set(root.items) & set(_MEGATRON):
        _megatron(plan, root, outside.world_size)
    if ours:
        plan.basis = ours
    return plan


# Keys of LLaMA-Factory's own arguments (hparams/finetuning_args.py, data_args.py) besides `stage`.
_OWN_KEYS = ("finetuning_type", "template", "cutoff_len", "neat_packing")


def _by_keys(doc: Document) -> Optional[str]:
    """Why the settings of a `--stage` line whose program is out of view are LLaMA-Factory's: `stage` and
    another key only its arguments have (`--finetuning_type lora`, `--template chatml`); None otherwise."""
    if not isinstance(doc, LaunchDocument) or doc.launched_by != NAME or doc.entry is None:
        return None
    own = [key for key in _OWN_KEYS if key in doc.root.items]
    if "stage" not in doc.root.items or not own:
        return None
    return f"{doc.entry} is not in the project; keys only LLaMA-Factory has: stage, {', '.join(own)}"


def _written(node, key: str) -> Optional[Fact]:
    """A scalar as written (None: not written, or a null, which leaves the argument unset)."""
    if not isinstance(node, Scalar) or node.value is None:
        return None
    return Fact(node.value, key, node.span, node=node)


_CLI_TRAIN = LazyPattern(r"llamafactory-cli(?:\s|\\)+train\b")


def _program(doc: Document, view: ProjectView):
    """For a launch line's own settings: why they are LLaMA-Factory's (`llamafactory-cli train --stage sft
    ...`; a program that imports llamafactory); "" for a llamafactory-cli command that does not train;
    False when the program the line runs is the project's and does not import llamafactory; None for
    a config file, or a program out of view (judged by its keys)."""
    if not isinstance(doc, LaunchDocument) or doc.launched_by != NAME:
        return None
    entry = doc.entry
    if entry is None:  # llamafactory-cli: only `train` trains (not chat, export, webui, eval...)
        lines = doc.text.splitlines()[doc.root.span.line - 1:doc.root.span.end_line]
        return "llamafactory-cli train" if _CLI_TRAIN.search("\n".join(lines)) else ""
    if entry.startswith("llamafactory."):
        return f"{entry}, LLaMA-Factory's by its name"
    imports = program_imports(doc.path, entry, "llamafactory", view=view)
    if imports is None:
        return None
    return f"{entry} imports llamafactory" if imports else False


@lean_dataclass(frozen=True)
class LlamaFactorySettings(Subject):
    """The LLaMA-Factory arguments its own rules read (hparams/finetuning_args.py, data_args.py)."""

    FRAMEWORKS = (NAME,)

    stage: Fact  # value None when not a plain string; "sft" by default
    neat_packing: Optional[Fact]
    flash_attn: Optional[Fact]  # as written ("fa2", "auto", ...)
    gpt_oss: bool  # a gpt-oss model, which LLaMA-Factory runs with FlashAttention-3
    streaming: Optional[Fact] = None  # as written (a bool), None when not written
    val_size: Optional[Fact] = None  # a number as written
    max_samples: Optional[Fact] = None  # as written (null: not set)


def _arguments(root: Mapping) -> LlamaFactorySettings:
    node, attn = root.get("stage"), root.get("flash_attn")
    model = str(getattr(root.get("model_name_or_path"), "value", "")).lower()
    return LlamaFactorySettings(
        stage=Fact(stage(root), "stage", node.span, node=node) if node is not None else Fact("sft", "stage", None, Origin.DEFAULT),
        neat_packing=flag(root.get("neat_packing"), "neat_packing"),
        streaming=flag(root.get("streaming"), "streaming"),
        val_size=number(root.get("val_size"), "val_size"),
        max_samples=_written(root.get("max_samples"), "max_samples"),
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
