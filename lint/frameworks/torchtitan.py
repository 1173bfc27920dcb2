"""TorchTitan TOML (up to v0.2.2); its Python config registries (after it) are read by
torchtitan_registry.py, which this module's adapter hands a Python document to.

dp = data_parallel_replicate_degree x data_parallel_shard_degree, where a
shard degree of -1 takes the ranks left over: W // (dp_rep x cp x tp x pp)
(torchtitan/distributed/parallel_dims.py). The global batch must divide by
local_batch_size x dp; gradient accumulation is derived from it
(torchtitan/train.py). `training.batch_size` is the name before PR #1238.

The TorchTitan rules (rules/torchtitan_*.py) read `plan.settings`, a
TitanSettings: the settings TorchTitan's start-up checks read, written or
defaulted, and what the chosen model supports (MODELS, the one table of
TorchTitan's models). The v0.2.2 key set is generated into torchtitan_keys.py.

Which releases read a TOML file (DISTRIBUTION.releases): "0.0.2" is the main branch from
2024-04-16 to 0.1.0 (PyPI's 0.0.2 is an empty placeholder wheel; version.txt read 0.0.2 all that
time). Its layouts changed: the degrees moved from [training]/[experimental] to [parallelism] at
785c34c99 (2025-03-18), so a rule judges that span by the commits that read the keys it fires on
(a [parallelism] degree: main from 785c34c99 on). 0.1.0 to 0.2.2 read TOML; 0.3.0 reads none
(config registries, torchtitan_registry.py): a TOML file in a project that runs it is no TorchTitan
config (`reads_no_toml`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..document import Document, Mapping, Node, Scalar, Sequence
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin, Subject, TrainingPlan
from ..versions import version_key
from .facts import Outside, number
from .releases import NO_TOML, TORCHTITAN as DISTRIBUTION
from .spec import Count, Framework, Launcher, Select

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from ..premise import Premise
    from ..project import ProjectView


NAME = "torchtitan"
# TOML up to v0.2.2; Python config registries after it (torchtitan_registry.py).
FORMATS = ("toml", "python")
MARKERS = (b"[training]", b"[parallelism]", b"Trainer.Config", b"TrainingConfig(")


def registry_files(module: str) -> tuple:
    """The files `--module` may name, relative to the project root, as ConfigManager imports them
    (config/manager.py:98-141 @ b5bcd76): a name TorchTitan ships is `<prefix>.<name>.config_registry`
    for each prefix in turn; any other is `<module>.config_registry`, else `<module>` itself."""
    path = module.replace(".", "/")
    if module in SHIPPED_MODULES:
        return tuple(f"{prefix}/{path}/config_registry.py" for prefix in _SHIPPED_PREFIXES)
    return (f"{path}/config_registry.py", f"{path}.py")


# models/__init__.py:7-18 and experiments/__init__.py:7-23 @ b5bcd76 (`_supported_models`, `_supported_experiments`).
SHIPPED_MODULES = frozenset({
    "deepseek_v3", "flux", "gpt_oss", "kimi_k2_7", "llama3", "muse_glimmer", "qwen3", "qwen3_5",
    "graph_trainer.llama3", "graph_trainer.deepseek_v3", "graph_trainer.qwen3", "graph_trainer.muse_glimmer",
    "transformers_modeling_backend", "autoparallel.llama3", "autoparallel.local_map_deepseek_v3", "torchft.llama3",
    "rl", "alphabet_sort", "dapo_math", "search_r1",
})
_SHIPPED_PREFIXES = ("torchtitan/models", "torchtitan/experiments", "torchtitan/experiments/rl/examples")


def _select(document, name, view):
    from .torchtitan_registry import select

    return select(document, name, view)


# `--module X --config NAME` (config/manager.py:56-88 @ b5bcd76: the last of each wins), the rest
# `--section.key value` overrides; v0.2's `--job.config_file x.toml` still read where it is given.
_REGISTRY = Select(registry_files, _select, module_flags=("--module",), name_flags=("--config",))
# run_train.sh @ b5bcd76: NGPU=${NGPU:-"8"} (:29), MODULE=${MODULE:-"llama3"} (:31),
# CONFIG=${CONFIG:-"llama3_debugmodel"} (:32), then `torchrun --nproc_per_node=${NGPU} ... -m
# torchtitan.train --module ${MODULE} --config ${CONFIG} "$@"` (:46-47). Read as it is when the
# project holds it; this spec is for a run_train.sh the project does not hold.
_RUN_TRAIN = Select(registry_files, _select, module_flags=("--module",), name_flags=("--config",),
                    module_env=("MODULE",), name_env=("CONFIG",), module_default="llama3",
                    name_default="llama3_debugmodel")
LAUNCHERS = (
    Launcher("run_train.sh", commands=("run_train.sh",), markers=(b"run_train.sh",),
             nproc=Count(env=("NGPU",), default=8, source='run_train.sh: NGPU=${NGPU:-"8"}'), selects=_RUN_TRAIN),
    Launcher("torchtitan.train", modules=("torchtitan.train",), markers=(b"torchtitan.train",),
             config_flags=("job.config_file",), selects=_REGISTRY),
    # Main before torchtitan/train.py (2025-02) ran the checkout's top-level train.py (run_llama_train.sh @
    # 2a4437014: `torchrun ... train.py --job.config_file ${CONFIG_FILE}`); only with that flag, a name too common.
    Launcher("torchtitan train.py", scripts=("train.py",), markers=(b"job.config_file",),
             config_flags=("job.config_file",), requires=("--job.config_file",)),
)
# A project's own config manager (`class JobConfig` in its config_manager.py, outside a copy of
# TorchTitan): its train.py reads the TOML through that, not through TorchTitan's.
FRAMEWORK = Framework(NAME, FORMATS, MARKERS, order=30, launchers=LAUNCHERS, distribution=DISTRIBUTION,
                      own_loader=rb"^class[ \t]+\w*JobConfig\b")

# Keys main read between 0.0.2 (2024-04-16) and 0.1.0 that no embedded release (0.1.0-0.2.2) has:
# the fields at every commit that changed torchtitan/config_manager.py from b889f3d50 to v0.1.0
# (argparse's `--section.key` until c1c2f55d1, 2025-04-18; JobConfig's dataclasses after it). A
# config written for those layouts holds them (`[experimental] pipeline_parallel_degree`, `[training]
# batch_size`): main read them; 0.1.0 drops them, 0.2.0 on refuse them (rules/torchtitan/torchtitan_unknown_key.py).
PRE_RELEASE_KEYS = frozenset({
    "checkpoint.interval_type", "checkpoint.model_weights_only", "estimate.", "estimate.memory", "estimate.mode",
    "experimental.context_parallel_degree", "experimental.context_parallel_rotate_method",
    "experimental.custom_model_path", "experimental.enable_async_tensor_parallel",
    "experimental.enable_compiled_autograd", "experimental.pipeline_parallel_degree",
    "experimental.pipeline_parallel_microbatches", "experimental.pipeline_parallel_schedule",
    "experimental.pipeline_parallel_schedule_csv", "experimental.pipeline_parallel_split_mode",
    "experimental.pipeline_parallel_split_points", "experimental.torch_spmd", "float8.enable_float8_linear",
    "float8.scaling_type_grad_output", "float8.scaling_type_input", "float8.scaling_type_weight",
    "metrics.disable_logging_from_checkpoint", "metrics.enable_color_printing", "metrics.rank_0_only",
    "model.attn_mask_type", "model.norm_type", "model.use_flex_attn", "optimizer.fused",
    "parallelism.pipeline_parallel_microbatches", "training.batch_size", "training.data_parallel_degree",
    "training.data_parallel_replicate_degree", "training.data_parallel_shard_degree", "training.data_parallel_type",
    "training.disable_loss_parallel", "training.enable_float8_linear", "training.enable_fp8_linear",
    "training.enable_fsdp_float8_all_gather", "training.enable_fsdp_fp8_all_gather", "training.enable_loss_parallel",
    "training.float8_scaling_type_grad_output", "training.float8_scaling_type_input",
    "training.float8_scaling_type_weight", "training.fp8_linear", "training.fsdp_reshard_after_forward",
    "training.pipeline_parallel_degree", "training.precompute_float8_dynamic_scale_for_fsdp",
    "training.tensor_parallel_degree", "training.warmup_steps",
})


def reads_no_toml(path: str, view: Optional[ProjectView]) -> bool:
    """Whether the project of `path` runs a TorchTitan that reads no TOML: a release from 0.3.0 on
    (its ConfigManager takes `--module`/`--config` only, config/manager.py:34-48 @ 0.3.0), pinned or
    the version of its copy, or a copy of the config-registry kind whatever its version file says."""
    from .. import versions

    found = versions.release(DISTRIBUTION, path, DISTRIBUTION.releases, view)
    if found is None:
        return False
    key = version_key(found.version) if found.version else None
    if key is not None and key >= _REGISTRIES_FROM:
        return True
    return found.copy is not None and copy_arithmetic(path, view) is not None


TOKENS, SEQUENCES = "tokens", "sequences"  # the batch arithmetic of a config registry (torchtitan_registry.py)


def copy_arithmetic(path: str, view: Optional[ProjectView]) -> Optional[str]:
    """The arithmetic of the copy of TorchTitan inside the project of `path`, if there is one."""
    from .. import versions

    found = versions.release(DISTRIBUTION, path, view=view)
    if found is None or found.copy is None:
        return None
    text = versions.copy_reader(found.copy, view)("torchtitan/config/configs.py") or ""
    if "num_tokens_per_microbatch_per_dp_rank" in text:
        return TOKENS
    if "class TrainingConfig" in text and "local_batch_size" in text:
        return SEQUENCES
    return None


_REGISTRIES_FROM: tuple = version_key("0.3.0.dev0")  # type: ignore[assignment]  # a version: never None

# Where JobConfig is defined: torchtitan/config/job_config.py since 0.2.0, config_manager.py in 0.1.0.
KEY_SOURCES = ("torchtitan/config/job_config.py", "torchtitan/config_manager.py")


def keys_from_source(read: Callable[[str], Optional[str]]) -> Optional[frozenset[str]]:
    """The sections and keys of JobConfig in a TorchTitan source tree, as dotted paths (a section
    ends with "."; keysets.nest rebuilds the table), read with `ast`, never imported. Empty when the
    file is there but defines no JobConfig read here; None when the tree holds none of the files."""
    from ..keysets import flatten, nested_fields

    for name in KEY_SOURCES:
        text = read(name)
        if text is None:
            continue
        try:
            table = nested_fields(text, "JobConfig")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
        return frozenset(flatten(table)) if table else frozenset()
    return None

_DEGREES = {
    "dp_replicate": "data_parallel_replicate_degree",
    "dp_shard": "data_parallel_shard_degree",
    "tp": "tensor_parallel_degree",
    "pp": "pipeline_parallel_degree",
    "cp": "context_parallel_degree",
    "ep": "expert_parallel_degree",
    "etp": "expert_tensor_parallel_degree",
}


def plan(doc: Document, outside: Outside):
    if doc.format == "python":
        from .torchtitan_registry import plans

        return plans(doc, outside)
    training = doc.get("training")
    parallelism = doc.get("parallelism")
    if not isinstance(training, Mapping) and not isinstance(parallelism, Mapping):
        return None
    if reads_no_toml(doc.path, outside.view):
        return None  # the project runs a TorchTitan of config registries: this file configures nothing
    training = training if isinstance(training, Mapping) else Mapping()
    parallelism = parallelism if isinstance(parallelism, Mapping) else Mapping()

    # Defaults (torchtitan/config/job_config.py @ v0.2.2): local_batch_size 8 (:253), seq_len 2048
    # (:261), data_parallel_shard_degree -1 (:324), every other degree 1 (:313-464); the same in every
    # release that reads TOML: v0.1.0 torchtitan/config_manager.py :199, :207, :272, and main before it
    # (`--training.batch_size` 8 and `--training.seq_len` 2048, config_manager.py:162-165 @ c22d1a8d1).
    local_key = "local_batch_size" if "local_batch_size" in training.items else "batch_size"
    parallel = {
        short: number(parallelism.get(key), f"[parallelism] {key}", default=-1 if short == "dp_shard" else 1)
        for short, key in _DEGREES.items()
    }
    if _before_first_release(doc.path, outside.view):
        parallel.update(_pre_release_degrees(doc, parallelism))
    micro = number(training.get(local_key), f"[training] {local_key}", default=8)
    plan = TrainingPlan(
        framework=NAME,
        document=doc,
        micro_batch=micro,
        world_size=outside.world_size,
        target_global_batch=outside.target_global_batch,
        parallel=parallel,
        seq_len=number(training.get("seq_len"), "[training] seq_len", default=2048),
        derived_from_global="grad_accum",
    )
    declared = number(training.get("global_batch_size"), "[training] global_batch_size")
    written = declared.number if declared is not None else None
    if declared is not None and not (written is not None and written < 0):
        plan.declared_global_batch = declared  # -1 means local x dp: nothing declared
    plan.layout = tuple(parallel[k] for k in ("dp_replicate", "dp_shard", "cp", "tp", "pp"))
    plan.settings = settings = _settings(doc, parallel, outside.world_size)
    plan.seq_len_multiple = _seq_len_multiple(settings.model_support, parallel)
    plan.data_parallel = data_parallel(parallel, settings.shard_degree, outside.world_size)
    if plan.data_parallel is None and parallel["dp_replicate"].positive:
        plan.data_parallel_factor = parallel["dp_replicate"]
    if plan.declared_global_batch is None and micro.known:
        # No global batch given: TorchTitan trains with local x dp and no accumulation, whatever W is.
        plan.grad_accum = Fact(1, "gradient accumulation", None, Origin.DERIVED, detail="no global_batch_size")
    return plan


# The degrees of the layouts main read before [parallelism] (785c34c99, 2025-03-18), each verified in
# torchtitan/config_manager.py at the commits named (argparse `--section.key`, default in parentheses):
# [training] data_parallel_degree (-1) c22d1a8d1 (2024-04-11) :186-188 until db6b39acd (2024-09-10) split it
# into [training] data_parallel_replicate_degree (1) :227-229 and data_parallel_shard_degree (-1) :240-242;
# [training] tensor_parallel_degree (1) c22d1a8d1 :192-194 to 785c34c99~1 :363-365; [training]
# pipeline_parallel_degree (1) c22d1a8d1 :204-206 until aafe0e870 (2024-05-21) moved it to [experimental]
# (785c34c99~1 :396-398); [experimental] context_parallel_degree (1) from b19456a98 (2024-10-22, 785c34c99~1
# :462-464). A -1 dp took W // (tp x pp) (torchtitan/parallelisms/__init__.py:29-30 @ c22d1a8d1), as the shard
# degree did later (distributed/parallel_dims.py:44-45 @ 785c34c99~1): read as dp_shard. 0.1.0 drops every
# one of them silently and 0.2.0 on refuse them (rules/torchtitan/torchtitan_unknown_key.py), so they are read only where
# the release in force is main before 0.1.0 ("0.0.2"); else the file is planned as those releases read it.
_PRE_RELEASE_DEGREES = {
    "dp_replicate": (("training", "data_parallel_replicate_degree"),),
    "dp_shard": (("training", "data_parallel_shard_degree"), ("training", "data_parallel_degree")),
    "tp": (("training", "tensor_parallel_degree"),),
    "pp": (("experimental", "pipeline_parallel_degree"), ("training", "pipeline_parallel_degree")),
    "cp": (("experimental", "context_parallel_degree"),),
}


def _pre_release_degrees(doc: Document, parallelism: Mapping) -> dict:
    """The degrees written in the layouts before [parallelism], where [parallelism] does not set them."""
    found = {}
    for short, places in _PRE_RELEASE_DEGREES.items():
        if _DEGREES[short] in parallelism.items:
            continue
        for section, key in places:
            node = doc.get(section, key)
            if node is not None:
                found[short] = number(node, f"[{section}] {key}")
                break
    return found


def _before_first_release(path: str, view: ProjectView) -> bool:
    """Whether the project runs main before 0.1.0 (version.txt said 0.0.2 all that time; releases.py)."""
    from .. import versions

    found = versions.release(DISTRIBUTION, path, DISTRIBUTION.releases, view)
    return found is not None and found.version is not None and version_key(found.version) == version_key("0.0.2")


def _seq_len_multiple(support: ModelSupport, parallel: dict):
    """tp x 2 x cp: sequence parallelism splits by tp, load-balanced context parallelism by 2 x cp."""
    tp, cp = parallel["tp"], parallel["cp"]
    if not (support.seq_len_checked and tp.known and cp.known):
        return None
    return Fact(tp.value * 2 * cp.value, "seq_len divisor", tp.span or cp.span, Origin.DERIVED,
                detail=f"tensor_parallel_degree {tp.value} x 2 x context_parallel_degree {cp.value}")


def data_parallel(parallel: dict, resolved: Optional[Fact], world):
    replicate = parallel["dp_replicate"]
    if resolved is None or not replicate.positive:
        return None  # a degree below 1 is BL211's finding, not a dp
    shard = resolved.value
    if parallel["dp_shard"].value != -1:
        return Fact(replicate.value * shard, "dp", None, Origin.DERIVED,
                    detail=f"{replicate.describe()} x {parallel['dp_shard'].describe()}")
    shown = f"dp_shard -1 resolved to W ({world.value}) // {world.value // shard} = {shard}"
    return Fact(replicate.value * shard, "dp", None, Origin.DERIVED, detail=shown)


# --------------------------------------------------------------------------- the models


@lean_dataclass(frozen=True)
class ModelSupport:
    """What TorchTitan does with one model at start-up, as its TrainSpec
    (`pipelining_fn`) and its parallelize function decide. A model not in MODELS
    gets ModelSupport(): nothing is known of it, so no model-specific check runs."""

    pipelining: bool = True  # a pipelining_fn: without one train.py:218-223 raises for pp > 1
    seq_len_checked: bool = False  # asserts seq_len % parallel_dims.seq_len_divisor (tp x 2 x cp)
    async_tp: bool = False  # maybe_enable_async_tp when tp > 1, which needs torch.compile of the model
    # raises "DDP has not supported > 1D parallelism" (replicate without shard, with tp/pp), in every
    # release that has the model
    refuses_ddp: bool = False
    sharded_with_ep: bool = False  # applies FSDP whenever ep > 1, so never DDP then
    deepep: bool = False  # checks expert_parallel_comm_backend = "deepep" (needs ep > 1, etp 1)
    # The first release that has the model under this [model] name (None: main before 0.1.0 already
    # had it): an older one refuses the name ("Model qwen3 is not registered", protocols/train_spec.py:
    # 108-112 @ v0.1.0), so it cannot run the config at all (a rule's Premise.runs_since). The other
    # fields hold in every release that has the model (checked at each tag).
    since: Optional[str] = None
    # (flavor, attention heads, key/value heads) of the flavors whose attention the parallelize function
    # shards over tp column-wise (wq, wk, wv), each rank viewing its share as whole heads; a flavor's
    # variants (_VARIANTS: `8B_flex`, `debugmodel_flex_attn`) have its heads.
    heads: tuple = ()

    def heads_of(self, flavor: object) -> Optional[tuple]:
        """(attention heads, key/value heads) of a flavor, None when not known."""
        if not isinstance(flavor, str):
            return None
        return next(((n, kv) for name, n, kv in self.heads for variant in _VARIANTS if flavor == name + variant), None)


# Every TorchTitan model the rules know, by [model] name, @ v0.2.2. The lines are of the
# model's infra/parallelize.py (seq_len assert; maybe_enable_async_tp; DeepEP check; the
# data-parallel branch up to the DDP raise) or of its __init__.py (pipelining_fn=None).
# `since`: v0.1.0 registers only llama3, llama4, flux (and deepseek3, llama3_simple_fsdp,
# llama4_multimodal, which the table does not know: nothing model-specific is checked for them);
# main before it had llama3, llama4 (from e4e48349c) and flux (from d2b57cfaa), with the same
# support (pipelining, the async TP and DDP checks: models/llama3/infra/parallelize.py:49-54 and
# 110-112, experiments/llama4/infra/parallelize.py:41-46 and 109-111, experiments/flux/__init__.py:114
# @ v0.1.0). The others are new in 0.2.0 (models/__init__.py, experiments/__init__.py @ v0.2.0) or 0.2.1.
# refuses_ddp: deepseek_v3, qwen3 and vlm raised in 0.2.0 too (`world_mesh.ndim > 1`, their
# parallelize.py:166-168, 166-168, 103-105 @ v0.2.0), but from 0.2.1 they and gpt_oss test the 1-D
# dp_replicate mesh (`dp_mesh.ndim > 1`, never true: deepseek_v3 :197-199, qwen3 :177-179, vlm
# :101-103, gpt_oss :162-164 @ v0.2.2), so the newest releases do not refuse: not flagged.
# A flavor's variants with other attention (v0.2.2 models/llama3/__init__.py: `8B_flex`, `debugmodel_varlen_attn`).
_VARIANTS = ("", "_flex", "_varlen", "_flex_attn", "_varlen_attn")
# llama3's flavors (models/llama/__init__.py:29-56 @ 9a2f5784c, main 2025-03; models/llama3/__init__.py:29-62 @ v0.1.0,
# :29-95 @ v0.2.2: the same heads; debugmodel writes no n_kv_heads: every head its own).
_LLAMA3_HEADS = (("debugmodel", 16, 16), ("8B", 32, 8), ("70B", 64, 8), ("405B", 128, 8))
_LLAMA3 = ModelSupport(seq_len_checked=True, async_tp=True, refuses_ddp=True,  # models/llama3: 70; 96; 148-151
                       heads=_LLAMA3_HEADS)
MODELS = {
    "llama3": _LLAMA3,
    # models/llama3_ft/__init__.py:24 uses llama3's parallelize
    "llama3_ft": ModelSupport(seq_len_checked=True, async_tp=True, refuses_ddp=True, since="0.2.0"),
    # models/llama4: 85; 111; 114-126; 216-219
    "llama4": ModelSupport(seq_len_checked=True, async_tp=True, refuses_ddp=True, sharded_with_ep=True, deepep=True),
    # models/deepseek_v3: 61; 97; 100-112
    "deepseek_v3": ModelSupport(seq_len_checked=True, async_tp=True, sharded_with_ep=True, deepep=True,
                                since="0.2.0"),
    # models/qwen3: __init__.py:199; 63
    "qwen3": ModelSupport(pipelining=False, seq_len_checked=True, since="0.2.0"),
    # models/gpt_oss: __init__.py:85; 67 (experiments/gpt_oss in 0.2.1)
    "gpt_oss": ModelSupport(pipelining=False, seq_len_checked=True, sharded_with_ep=True, since="0.2.1"),
    "flux": ModelSupport(pipelining=False),  # models/flux/__init__.py:113
    # experiments/vlm: __init__.py:54; 46
    "vlm": ModelSupport(pipelining=False, seq_len_checked=True, since="0.2.0"),
    # experiments/transformers_modeling_backend: 50; 74; 115-118
    "transformers_modeling_backend": ModelSupport(seq_len_checked=True, async_tp=True, refuses_ddp=True,
                                                  since="0.2.1"),
    # experiments/simple_fsdp/{llama3,deepseek_v3}/parallelize.py: 82; 107 and 61; 94 (no DDP branch)
    "simple_fsdp.llama3": ModelSupport(seq_len_checked=True, async_tp=True, since="0.2.0"),
    "simple_fsdp.deepseek_v3": ModelSupport(seq_len_checked=True, async_tp=True, since="0.2.0"),
}


def later(*releases: Optional[str]) -> Optional[str]:
    """The latest of some first releases (None: every release), for a finding's window."""
    known = [r for r in releases if r is not None]
    return max(known, key=lambda r: version_key(r) or ()) if known else None


# What a TOML rule's window says of 0.3.0 (the newest release), and of the models new in 0.2.0/0.2.1.
NEW_MODELS = {
    "0.2.0": "v0.1.0 has none of llama3_ft, deepseek_v3, qwen3, vlm, simple_fsdp.* (protocols/train_spec.py:108-112 "
             "refuses the name)",
    "0.2.1": "v0.2.0 has neither gpt_oss nor transformers_modeling_backend (protocols/train_spec.py:71-87 refuses "
             "the name)",
}


def model_window(support: ModelSupport, what: str = "") -> str:
    """The name of the premise (model_premises) a finding about this model rests on."""
    return what + ("every model" if support.since is None else f"models new in {support.since}")


def model_premises(lines: dict[str, str], since: Optional[str] = None, before: str = "", what: str = "",
                   keys_since: Optional[str] = None) -> tuple[Premise, ...]:
    """The premises of a TOML check that holds from `since` (None: from main before 0.1.0), one for
    the models every release has and one for those new in 0.2.0 and in 0.2.1, which an older release
    cannot run at all (runs_since), nor one older than `keys_since` (the keys the check reads are new
    in it). lines: the check's file:line by release: "0.0.2" (at a main commit, named), "0.1.0",
    "0.2.0", "0.2.1", "0.2.2"; before: why the release before `since` lacks the check."""
    from ..premise import Premise

    found = []
    for first in (None, "0.2.0", "0.2.1"):
        start = later(since, first)
        if start is None:
            opening = f"0.0.2 (main) {lines['0.0.2']} (first); v0.1.0 {lines['0.1.0']}"
        else:
            why = NEW_MODELS[first] if first is not None and first == start else before
            opening = f"{why}; v{start} {lines[start]} (first)"
        source = f"{opening}; v0.2.2 {lines['0.2.2']} (still); {NO_TOML}"
        name = model_window(ModelSupport(since=first), what)
        found.append(Premise(DISTRIBUTION, since=start, runs_since=later(keys_since, first), source=source,
                             name=name))
    return tuple(found)


# --------------------------------------------------------------------------- the settings


@lean_dataclass(frozen=True)
class TitanSettings(Subject):
    """What TorchTitan's start-up checks read besides the batch and the degrees:
    each value as written (None when not a plain value) or TorchTitan's default. A TOML
    config's plan holds it; a config registry's holds RegistrySettings (torchtitan_registry.py)."""

    FRAMEWORKS = (NAME,)

    model: Fact  # [model] name (None when not a string)
    model_support: ModelSupport  # MODELS[model]
    flavor: Fact  # [model] flavor
    async_tp: Fact  # [parallelism] enable_async_tensor_parallel
    # Whether the model is compiled: `[training] compile` where written (0.1.0 and main before it),
    # else [compile] (enable, and "model" in components; 0.2.0 on); None when it cannot be told. Its
    # span is that key's or the [compile] section's.
    compile_model: Fact
    pp_schedule: Fact  # [parallelism] pipeline_parallel_schedule
    pp_schedule_csv: Fact  # [parallelism] pipeline_parallel_schedule_csv
    pp_microbatch_size: Fact  # [parallelism] pipeline_parallel_microbatch_size
    ep_comm_backend: Fact  # [parallelism] expert_parallel_comm_backend
    # The shard degree TorchTitan runs with: as written, or -1 resolved with W
    # (distributed/parallel_dims.py:49-50); None when it cannot be known.
    shard_degree: Optional[Fact]
    # pipeline_parallel_split_points ([parallelism], or [experimental] in main before 785c34c99): the node as
    # written, None when not written (0.2.0 on refuse the key: torchtitan_unknown_key.py).
    split_points: Optional[Node] = None


# The defaults are torchtitan/config/job_config.py's @ v0.2.2, at the line given.
def _settings(doc: Document, parallel: dict, world: Optional[Fact]) -> TitanSettings:
    model = _model(doc)
    return TitanSettings(
        model=model,
        model_support=MODELS.get(model.value, ModelSupport()) if isinstance(model.value, str) else ModelSupport(),
        flavor=_setting(doc, "model", "flavor", "debugmodel"),  # job_config.py:104
        split_points=doc.get("parallelism", "pipeline_parallel_split_points")
        or doc.get("experimental", "pipeline_parallel_split_points"),
        async_tp=_setting(doc, "parallelism", "enable_async_tensor_parallel", False),  # :357
        compile_model=_compile_model(doc),
        pp_schedule=_setting(doc, "parallelism", "pipeline_parallel_schedule", "1F1B"),  # :396
        pp_schedule_csv=_setting(doc, "parallelism", "pipeline_parallel_schedule_csv", ""),  # :405
        pp_microbatch_size=_setting(doc, "parallelism", "pipeline_parallel_microbatch_size", 1),  # :412
        ep_comm_backend=_setting(doc, "parallelism", "expert_parallel_comm_backend", "standard"),  # :474
        shard_degree=shard_degree(parallel, world),
    )


def _setting(doc: Document, section: str, key: str, default) -> Fact:
    """A value as written (None when it is not a plain value), or the default."""
    node, name = doc.get(section, key), f"[{section}] {key}"
    if node is None:
        return Fact(default, name, None, Origin.DEFAULT)
    return Fact(node.value if isinstance(node, Scalar) else None, name, node.span, Origin.FILE, node)


def _model(doc: Document) -> Fact:
    name = _setting(doc, "model", "name", "llama3")  # job_config.py:101
    if isinstance(name.value, str) or name.value is None:
        return name
    return Fact(None, name.key, name.span, name.origin, name.node)


def _compile_model(doc: Document) -> Fact:
    old = doc.get("training", "compile")
    if old is not None:
        # The layout of 0.1.0 and main before it (config_manager.py:235 @ v0.1.0): what it compiles.
        # 0.2.0 on refuse the key itself (rules/torchtitan/torchtitan_unknown_key.py), whatever [compile] says.
        value = old.value if isinstance(old, Scalar) and isinstance(old.value, bool) else None
        return Fact(value, "[training] compile", old.span, Origin.FILE, old)
    section = doc.get("compile")
    span, origin = (section.span, Origin.FILE) if section is not None else (None, Origin.DEFAULT)
    return Fact(_model_compiled(doc), "[compile]", span, origin, section)


def _model_compiled(doc: Document) -> Optional[bool]:
    enable = doc.get("compile", "enable")
    components = doc.get("compile", "components")
    if enable is not None and not (isinstance(enable, Scalar) and isinstance(enable.value, bool)):
        return None
    if enable is None or enable.value is False:
        return False  # enable: bool = False, job_config.py:722
    if components is None:
        return True  # components = ["model", "loss"], job_config.py:725
    if not isinstance(components, Sequence) or not all(isinstance(c, Scalar) for c in components.items):
        return None
    return "model" in [c.value for c in components.items]


def shard_degree(parallel: dict, world: Optional[Fact]) -> Optional[Fact]:
    shard = resolved_shard(parallel, world)
    if shard is None:
        return None
    written = parallel["dp_shard"]
    w = world.number if world is not None else None
    if written.value != -1 or w is None:  # -1 resolves only against a known W (resolved_shard)
        return written
    return Fact(shard, "dp_shard", None, Origin.DERIVED, detail=f"-1 resolved to W ({w}) // {w // shard}")


def resolved_shard(parallel: dict, world) -> int | None:
    """The shard degree TorchTitan runs with: as written, or the ranks left over
    for -1 when W is known (parallel_dims.py:49-50); None when it cannot be known
    or the layout does not fit W (that is the layout rule's finding)."""
    shard = parallel["dp_shard"]
    if not shard.known:
        return None
    if shard.value != -1:
        return shard.value if shard.value >= 1 else None
    others = [parallel[k] for k in ("dp_replicate", "cp", "tp", "pp")]
    if world is None or not world.known or not all(f.known and f.value >= 1 for f in others):
        return None
    product = 1
    for f in others:
        product *= f.value
    if world.value % product or world.value < product:
        return None
    return world.value // product


def old_batch_name(doc: Document) -> bool:
    """The local batch written under its name before PR #1238 (8570415c3, 2025-06-05): `[training]
    batch_size`, which main read until then; 0.1.0 drops it (the local batch is then 8), 0.2.0 on
    refuse it. What a rule computes from it differs by release, so the pipeline rules leave it."""
    return doc.get("training", "batch_size") is not None and doc.get("training", "local_batch_size") is None


def custom_config_module(doc: Document) -> bool:
    """`[job] custom_config_module` merges a user JobConfig into TorchTitan's
    (config/manager.py:86-116): any section may then hold keys batchlint cannot know."""
    module = doc.get("job", "custom_config_module")
    return module is not None and not (isinstance(module, Scalar) and module.value == "")
