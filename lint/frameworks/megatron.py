"""Megatron-LM arguments, as a launch line passes them to pretrain_*.py
(`--micro-batch-size 1 --global-batch-size 1536 --tensor-model-parallel-size 8`).

dp = W / (tp x pp x cp), which must divide exactly; the global batch must be a
multiple of micro batch x dp, gradient accumulation being derived from it
(megatron/core/num_microbatches_calculator.py). With context parallelism the
sequence length must split into 2 x cp chunks.
"""

from __future__ import annotations

from ..document import Document
from ..plan import Fact, Origin, TrainingPlan
from .facts import Outside, divide, flag, number
from .spec import FLAGS, LAUNCHER_VARIABLES, STARTS_PROCESSES, Framework, Launcher, OneProcess

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
SEQUENCE_PARALLEL_OFF = (
    'Megatron-LM warns ("Disabling sequence parallelism because tensor model parallelism is disabled") '
    "and turns it off at start-up"
)

_KEYS = {"micro-batch-size", "global-batch-size", "tensor-model-parallel-size", "pipeline-model-parallel-size"}


def plan(doc: Document, outside: Outside):
    root = doc.root
    if not set(root.items) & _KEYS:
        return None
    degrees = {
        "tp": number(root.get("tensor-model-parallel-size"), "--tensor-model-parallel-size", default=1),
        "pp": number(root.get("pipeline-model-parallel-size"), "--pipeline-model-parallel-size", default=1),
        "cp": number(root.get("context-parallel-size"), "--context-parallel-size", default=1),
    }
    micro = number(root.get("micro-batch-size"), "--micro-batch-size", default=1)
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
    )
    cp = degrees["cp"]
    if cp.known and cp.value > 1:
        plan.seq_len_multiple = Fact(2 * cp.value, "seq_len divisor", cp.span, Origin.DERIVED,
                                     detail=f"2 x --context-parallel-size {cp.value}")
    if plan.declared_global_batch is None:
        # Without --global-batch-size Megatron trains micro x dp with no accumulation.
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail="no --global-batch-size")
    return plan
