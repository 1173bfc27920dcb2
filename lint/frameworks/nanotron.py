"""Hugging Face nanotron YAML configs (examples/config_tiny_llama.yaml: `parallelism:`,
`tokens:`, `model:`, `optimizer:` ... as `Config.save_as_yaml` writes them).

Every degree is written in the file and W must be their product: dp is
`parallelism.dp` itself, never derived from W, and the trainer's global batch is
micro_batch_size x batch_accumulation_per_replica x dp (no global batch is
declared). The lines below are huggingface/nanotron @ 2411b022 (main after v0.5).

The layout: since context parallelism (49f81226, 2025-03) ParallelContext asserts
`tp * pp * cp * dp == WORLD_SIZE` (src/nanotron/parallel/context.py:26-28), then
reshapes the ranks to (ep, pp, dp, cp, tp) (:62-70), which needs ep x pp x dp x cp
x tp == W too; before it (v0.2-v0.5) it raised unless tp x pp x ep x dp == W
(context.py:22-36 @ v0.5). In every release W must therefore equal
dp x tp x pp x cp x ep (ep and cp default 1), which is the layout checked. A
config's own W is that product; a launch line's W must equal it.

The config generators (examples/config_*.py building a Config in Python and
saving the YAML) are code, never run: they are not read.
"""

from __future__ import annotations

from ..document import Document, Mapping, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from .facts import Outside, number, product
from .releases import NANOTRON as DISTRIBUTION
from .spec import Framework, Launcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NAME = "nanotron"
FORMATS = ("yaml",)
# TokensArgs has no default for it (config/config.py:346), so every config writes it.
MARKERS = (b"batch_accumulation_per_replica",)

# `torchrun --nproc_per_node=8 run_train.py --config-file examples/config_tiny_llama.yaml` (README.md:97),
# and the examples' own entry points (doremi train_*.py, moe/train_moe.py, custom-dataloader/run_train.py)
# which parse the same required --config-file (run_train.py:394-403). W comes from torchrun's spec. The
# program's other flags (--sanity-check-dataloader-interval) are its own, never keys of the config: the
# file is linted as written (`linked`), not with the flags written into it.
LAUNCHERS = (Launcher("nanotron", scripts=("run_train.py", "train_*.py"), markers=(b"--config-file",),
                      linked=("config-file",), requires=("--config-file",)),)
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=35, launchers=LAUNCHERS, distribution=DISTRIBUTION)

# Short name -> key under `parallelism:` and its default (config/parallelism_config.py:29-39): dp, pp, tp
# have none (required), expert_parallel_size and context_parallel_size default to 1 (cp exists since 49f81226).
_DEGREES = {
    "dp": ("dp", None),
    "tp": ("tp", None),
    "pp": ("pp", None),
    "cp": ("context_parallel_size", 1),
    "ep": ("expert_parallel_size", 1),
}


@lean_dataclass(frozen=True)
class NanotronSettings(Subject):
    """What nanotron's start-up checks read besides the batch and the degrees."""

    FRAMEWORKS = (NAME,)

    # parallelism.pp_engine as written ("1f1b" or "afab"; any other string fails to load,
    # config/utils_config.py:103-109), value None when it is not a string; default "afab":
    # ParallelismArgs.__post_init__ takes AllForwardAllBackwardPipelineEngine (parallelism_config.py:43-44).
    pp_engine: Fact


def plan(doc: Document, outside: Outside) -> Optional[TrainingPlan]:
    parallelism, tokens = doc.get("parallelism"), doc.get("tokens")
    if not (isinstance(parallelism, Mapping) and isinstance(tokens, Mapping)):
        return None
    # TokensArgs' batch keys (config/config.py:343-346) and ParallelismArgs' degrees: axolotl's `tokens:`
    # (special tokens) or any other `parallelism:` section has neither.
    if "batch_accumulation_per_replica" not in tokens.items or not {"dp", "tp", "pp"} & set(parallelism.items):
        return None
    written = {short: number(parallelism.get(key), f"parallelism.{key}", default=default)
               for short, (key, default) in _DEGREES.items()}
    parallel = {short: fact for short, fact in written.items() if fact is not None}
    layout = tuple(parallel[short] for short in _DEGREES if short in parallel)
    if len(layout) < len(_DEGREES) or any(f.known and not f.positive for f in layout):
        layout = ()  # a degree missing or below 1 fails every W (BL211), and -1 is no "ranks left over" here
    world = outside.world_size or (product(list(layout), "dp x tp x pp x cp x ep") if layout else None)
    return TrainingPlan(
        framework=NAME,
        document=doc,
        # trainer.py:268-272: global_batch_size = micro_batch_size x n_micro_batches_per_batch x dp_pg.size().
        micro_batch=number(tokens.get("micro_batch_size"), "tokens.micro_batch_size"),
        grad_accum=number(tokens.get("batch_accumulation_per_replica"), "tokens.batch_accumulation_per_replica"),
        world_size=world,
        target_global_batch=outside.target_global_batch,
        parallel=parallel,
        # dp_pg has data_parallel_size ranks (context.py:80): the degree as written, whatever W is.
        data_parallel=parallel.get("dp"),
        layout=layout,
        layout_exact=True,
        # trainer.py:273-275: the global sequence length, not divided by cp.
        seq_len=number(tokens.get("sequence_length"), "tokens.sequence_length"),
        settings=NanotronSettings(pp_engine=_pp_engine(parallelism)),
    )


def _pp_engine(parallelism: Mapping) -> Fact:
    node = parallelism.get("pp_engine")
    if node is None or (isinstance(node, Scalar) and node.value is None):
        return Fact("afab", "parallelism.pp_engine", None, Origin.DEFAULT)
    value = node.value if isinstance(node, Scalar) and isinstance(node.value, str) else None
    return Fact(value, "parallelism.pp_engine", node.span, Origin.FILE, node)
