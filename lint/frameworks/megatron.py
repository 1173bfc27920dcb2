"""Megatron-LM arguments, as a launch line passes them to pretrain_*.py
(`--micro-batch-size 1 --global-batch-size 1536 --tensor-model-parallel-size 8`).

dp = W / (tp x pp x cp), which must divide exactly; the global batch must be a
multiple of micro batch x dp, gradient accumulation being derived from it
(megatron/core/num_microbatches_calculator.py). With context parallelism the
sequence length must split into 2 x cp chunks. The settings (MegatronSettings)
carry what the batch-size ramp-up (BL190) and the layer split over the pipeline
stages (BL191) read.
"""

from __future__ import annotations

import re

from ..document import Document, Node, Scalar, Span
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, divide, flag, number
from .spec import FLAGS, LAUNCHER_VARIABLES, STARTS_PROCESSES, Framework, Launcher, OneProcess

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "megatron"
FORMATS = ("yaml",)  # launch lines become YAML-like documents; Megatron has no config file
# Every key of _KEYS: one of them is how plan() recognises a config (Framework.markers).
MARKERS = (b"micro-batch-size", b"tensor-model-parallel-size", b"global-batch-size", b"pipeline-model-parallel-size")

# `python pretrain_gpt.py --micro-batch-size 1 ...` (or under torchrun): the arguments are the whole config.
# Any other script given Megatron's batch flags (examples/run_simple_mcore_train_loop.py, a project's
# own train_llama.py built on megatron.training's argument parser) reads them the same way.
_BATCH_FLAGS = ("--micro-batch-size", "--global-batch-size")
LAUNCHERS = (Launcher("python", scripts=("pretrain_*",), markers=(b"pretrain_",), flags=FLAGS, config_files=False,
                      inline=True),
             Launcher("python", scripts=("*.py",), markers=(b"micro-batch-size",), flags=FLAGS, config_files=False,
                      inline=True, requires=_BATCH_FLAGS))
# `python pretrain_gpt.py ...` without a launcher: Megatron takes W from WORLD_SIZE, 1 when unset
# (megatron/training/arguments.py:145 @ d98e8a6; Megatron-DeepSpeed megatron/arguments.py:67 @ f4157be), and
# checks the batch arithmetic with it (validate_args, set_global_variables' micro-batch calculator:
# arguments.py:108-112; Megatron-DeepSpeed initialize.py:59-63) before torch.distributed starts.
ONE_PROCESS = OneProcess(
    env=LAUNCHER_VARIABLES,
    drives=("megatron",),
    starts=STARTS_PROCESSES,
    why="plain `python` starts one process (Megatron reads WORLD_SIZE, 1 when unset); launch with torchrun for more",
    source="megatron/training/arguments.py:145, :108-112 @ d98e8a6")

FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=90, launchers=LAUNCHERS, one_process=ONE_PROCESS)

# validate_args with tp = 1 (megatron/training/arguments.py, "disable sequence parallelism when tp=1"):
# warnings.warn, warn_rank_0 in newer versions, then sequence_parallel = False.
# Silently before core 0.10.0, with "Disabling sequence parallelism because tensor model parallelism is
# disabled" after it (rules/generic/sequence_parallel_without_tp.py gives the sources).
SEQUENCE_PARALLEL_OFF = "Megatron-LM turns it off at start-up"


@lean_dataclass(frozen=True)
class MegatronSettings(Subject):
    """What Megatron's batch-size ramp-up reads besides the batch and the degrees."""

    FRAMEWORKS = (NAME,)

    # `--rampup-batch-size START INCREMENT SAMPLES` (nargs='*', then int() of each: megatron/microbatches.py
    # :24-26 @ 23.04, core/num_microbatches_calculator.py:238-240 @ core_v0.16.1), each a Fact; None: not written.
    rampup: Optional[tuple[Fact, ...]] = None
    # `--decrease-batch-size-if-needed` (core_v0.9.0 on): a batch micro x dp does not divide is rounded down
    # instead of asserted (num_microbatches_calculator.py:474, 488-491 @ core_v0.16.1).
    decrease_if_needed: Optional[Fact] = None
    # --num-layers, and what validate_args adds to it before dividing by pp: 1 for each of
    # --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split written (core_v0.11.0
    # on: megatron/training/arguments.py:559-568 @ core_v0.16.1).
    num_layers: Optional[Fact] = None
    pipeline_split_extra: int = 0
    # A flag that splits the layers otherwise, or that validate_args does not divide for (an uneven first or last
    # stage, a layout, virtual stages by rank, T5's encoder/decoder layers, a standalone embedding stage): the
    # flag as written, None when there is none.
    uneven_split: Optional[str] = None
    uneven_flags: tuple = ()  # every such flag written, in _UNEVEN's order
    # --num-layers-per-virtual-pipeline-stage (the interleaved schedule), None when not written.
    layers_per_virtual_stage: Optional[Fact] = None
    # --num-attention-heads; --num-query-groups where --group-query-attention is written (else every head its own).
    attention_heads: Optional[Fact] = None
    query_groups: Optional[Fact] = None
    # --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers (core_v0.11.0 on), None when not written.
    first_stage_layers: Optional[Fact] = None
    last_stage_layers: Optional[Fact] = None


_KEYS = {"micro-batch-size", "global-batch-size", "tensor-model-parallel-size", "pipeline-model-parallel-size"}


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    root = doc.root
    if not set(root.items) & _KEYS:
        return None
    # The degrees default to 1 in every release (megatron/arguments.py:930-933 @ 23.04; core_v0.16.1
    # megatron/core/model_parallel_config.py:20, 28, 45; --context-parallel-size from core_v0.4.0, before
    # which there is none: 1). --micro-batch-size has no default: validate_args asserts it is given
    # (arguments.py:130 and :664 @ 23.04, megatron/training/arguments.py:495 @ core_v0.16.1), so unwritten
    # it is unknown and nothing is computed from it.
    degrees = {
        "tp": _degree(root.get("tensor-model-parallel-size"), "--tensor-model-parallel-size"),
        "pp": _degree(root.get("pipeline-model-parallel-size"), "--pipeline-model-parallel-size"),
        "cp": _degree(root.get("context-parallel-size"), "--context-parallel-size"),
    }
    micro = number(root.get("micro-batch-size"), "--micro-batch-size")
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=micro,
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
        parallel=degrees,
        layout=tuple(degrees.values()),
        layout_exact=False,
        data_parallel=divide(outside.world_size, list(degrees.values())),
        declared_global_batch=number(root.get("global-batch-size"), "--global-batch-size"),
        derived_from_global="grad_accum",
        seq_len=number(root.get("seq-length"), "--seq-length"),
        sequence_parallel=flag(root.get("sequence-parallel"), "--sequence-parallel"),
        sequence_parallel_off=SEQUENCE_PARALLEL_OFF,
        fp16=flag(root.get("fp16"), "--fp16"),
        bf16=flag(root.get("bf16"), "--bf16"),
        settings=MegatronSettings(rampup=_rampup(doc, root.get("rampup-batch-size")),
                                  decrease_if_needed=flag(root.get("decrease-batch-size-if-needed"),
                                                          "--decrease-batch-size-if-needed"),
                                  num_layers=number(root.get("num-layers"), "--num-layers"),
                                  pipeline_split_extra=sum(_written_true(root.get(k)) for k in _SPLIT_EXTRA),
                                  uneven_split=next((f"--{k}" for k in _UNEVEN if root.get(k) is not None), None),
                                  uneven_flags=tuple(f"--{k}" for k in _UNEVEN if root.get(k) is not None),
                                  layers_per_virtual_stage=number(root.get("num-layers-per-virtual-pipeline-stage"),
                                                                  "--num-layers-per-virtual-pipeline-stage"),
                                  attention_heads=number(root.get("num-attention-heads"), "--num-attention-heads"),
                                  query_groups=number(root.get("num-query-groups"), "--num-query-groups")
                                  if _written_true(root.get("group-query-attention")) else None,
                                  first_stage_layers=number(root.get("decoder-first-pipeline-num-layers"),
                                                            "--decoder-first-pipeline-num-layers"),
                                  last_stage_layers=number(root.get("decoder-last-pipeline-num-layers"),
                                                           "--decoder-last-pipeline-num-layers")),
    )
    cp = degrees["cp"]
    cp_size = cp.number
    if cp_size is not None and cp_size > 1:
        plan.seq_len_multiple = Fact(2 * cp_size, "seq_len divisor", cp.span, Origin.DERIVED,
                                     detail=f"2 x --context-parallel-size {cp_size}")
    if plan.declared_global_batch is None:
        # Without --global-batch-size Megatron trains micro x dp with no accumulation.
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail="no --global-batch-size")
    return plan


_SPLIT_EXTRA = ("account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split")
_UNEVEN = ("decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers", "pipeline-model-parallel-layout",
           "num-virtual-stages-per-pipeline-rank", "encoder-num-layers", "decoder-num-layers",
           "standalone-embedding-stage",
           # MindSpeed-LLM's (a Megatron fork): its list's length stands in for --num-layers in the check
           # (mindspeed_llm/features_manager/pipeline_parallel/num_layer_list.py:18-22, 40-43).
           "num-layer-list")


def _written_true(node: Optional[Node]) -> bool:
    """A store_true flag as a launch line writes it (bare: true)."""
    return isinstance(node, Scalar) and node.value is True


def _degree(node: Optional[Node], key: str) -> Fact:
    if node is None:
        return Fact(1, key, None, Origin.DEFAULT, detail="the default of every Megatron-LM release")
    return number(node, key)


_NAMES = ("start", "increment", "samples")


def _rampup(doc: Document, node: Optional[Node]) -> Optional[tuple[Fact, ...]]:
    """The three values of `--rampup-batch-size`. The launch line keeps only the word after the flag; the
    other two are read from the text after it on the same line, when written there as plain numbers.
    A value given as one word (`"$RAMPUP"` = "32 32 1000") is split. Anything else: None (not judged)."""
    if not isinstance(node, Scalar):
        return None
    key = "--rampup-batch-size"
    if isinstance(node.value, str) and len(node.value.split()) == 3:  # one word holding all three
        words = node.value.split()
        return tuple(Fact(int(w) if w.isascii() and w.isdigit() else None, f"{key} {name}", node.span)
                     for w, name in zip(words, _NAMES))
    if not isinstance(node.value, int) or isinstance(node.value, bool):
        return None
    span = node.span
    lines = doc.text.splitlines() if doc.text else []
    if span.path is not None or not 0 < span.end_line <= len(lines):
        return None
    rest = lines[span.end_line - 1][span.end_column - 1:]
    found = [(node.value, span)]
    for match in re.finditer(r"\S+", rest):
        if len(found) == 3:
            break
        text = match.group()
        if not (text.isascii() and text.isdigit()):
            return None  # a variable, a continuation, the next flag: not judged
        column = span.end_column + match.start()
        found.append((int(text), Span(span.end_line, column, span.end_line, column + len(text))))
    if len(found) != 3:
        return None
    return tuple(Fact(value, f"{key} {name}", where) for (value, where), name in zip(found, _NAMES))
