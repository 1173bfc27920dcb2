"""Differential test: batchlint's TorchTitan rules against TorchTitan 0.2.2's own start-up code.

For every generated TOML config and world size W, TorchTitan itself decides whether
start-up accepts it, on a CPU-only machine, without building a model. The judge runs,
in the order ``Trainer.__init__`` runs them, the installed lines of:

1. parse: the real ``ConfigManager`` steps of ``parse_args(["--job.config_file", path])``
   (torchtitan/config/manager.py:46-62; unknown or renamed keys such as the old
   ``training.batch_size`` raise ValueError in ``_dict_to_dataclass``, manager.py:160-171),
   all but ``tyro.cli``, which has no override to apply and costs 0.2 s a file;
   test_fast_parse_is_parse_args checks that the result equals ``parse_args``'.
2. layout: the real ``ParallelDims`` validation (distributed/parallel_dims.py:35-59:
   degrees >= 1, dp_shard = -1 resolved at :49-50, product == W at :53-56, etp in {1, tp}
   when ep > 1 at :58-59), constructed by executing the installed lines of
   ``Trainer.init_distributed`` (train.py:372-382) with ``world_size = W``; then the
   device meshes, as start-up builds them: the batch degree (train.py:98-102,
   ``parallel_dims.get_mesh("batch")``) and ``dist_utils.set_determinism`` (train.py:111-116),
   on a "fake" process group of size W, as TorchTitan's own ``comm.mode = "fake_backend"``
   does. ``build_mesh`` unflattens the expert mesh (parallel_dims.py:136-158), which fails
   when ep x etp does not divide dp_shard x cp x tp.
3. batch: the installed lines of ``Trainer.__init__`` that verify the global batch
   (train.py:195-215):

       global_batch_size = job_config.training.global_batch_size
       if global_batch_size < 0:
           global_batch_size = job_config.training.local_batch_size * batch_degree
       assert global_batch_size > 0
       assert (
           global_batch_size % (job_config.training.local_batch_size * batch_degree)
           == 0
       ), (...)
       self.gradient_accumulation_steps = global_batch_size // (
           job_config.training.local_batch_size * batch_degree
       )
       assert self.gradient_accumulation_steps > 0

4. parallelize: the checks of llama3's ``parallelize_llama`` that need no model
   (models/llama3/infra/parallelize.py): the sequence-length assertion (:69-74,
   ``seq_len % (tp * 2 * cp)``) and the data-parallel branch up to "DDP has not supported
   > 1D parallelism" (:125-151), with ``apply_fsdp`` a no-op. With pp > 1 they run per
   pipeline stage, before the schedule is built (pipeline_parallel.py:136-144).
5. pipeline (pp > 1): the installed ``build_pipeline_schedule``
   (distributed/pipeline_parallel.py:158-233: local_batch_size % microbatch size, then the
   torch schedule's own checks, e.g. Schedule1F1B's "Number of microbatches (1) must be
   greater than or equal to the number of stages (4)"), given stand-in stages (1 per rank
   for single-stage schedules, 2 for looped ones, as ``pipeline_llm`` makes by default,
   pipeline_parallel.py:58 and :110-115). Schedules are drawn from 1F1B (the default),
   GPipe, Interleaved1F1B and LoopedBFS, whose constructors need nothing else from a stage.

These blocks are not re-typed here: they are cut out of the installed files by their
first and last lines (or, for build_pipeline_schedule, by its ``def``) and executed, so
the judge is TorchTitan's code.

Comparison, per case, stage by stage: TorchTitan refuses at a stage <=> batchlint reports
one of that stage's codes as an error, and every stage the case got past has none of its
codes. The codes: layout BL202 (layout-world-mismatch), BL210 (expert layout), BL211
(degree < 1); batch BL103, or BL104 where the refusal comes from a local batch <= 0 or a
global batch of 0; parallelize BL401 (seq-len-indivisible), BL212 (DDP with tp/pp);
pipeline BL110, BL111. Stages after the refusing one are not compared (TorchTitan never
reaches them; batchlint may rightly report them too).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import random
import subprocess
import sys
import textwrap
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.differential

REPO = Path(__file__).resolve().parents[2]
WORLD_SIZES = (1, 2, 4, 8, 16)
N_CONFIGS = 300  # x 5 world sizes = 1500 cases
SEED = 20250122
TORCHTITAN_VERSION = "0.2.2"

STAGES = ("layout", "batch", "parallelize", "pipeline")
STAGE_CODES = {
    "layout": {"BL202", "BL210", "BL211"},
    "batch": {"BL103", "BL104"},
    "parallelize": {"BL401", "BL212"},
    "pipeline": {"BL110", "BL111"},
}
DIM_NAMES = ("dp_replicate", "dp_shard", "cp", "tp", "pp", "ep", "etp", "world_size")

# Shaped like torchtitan/models/llama3/train_configs/debug_model.toml @ v0.2.2;
# {training} and {parallelism} are replaced per case (its seq_len = 2048 and
# pipeline_parallel_schedule = "Interleaved1F1B" are among the varied keys).
TEMPLATE = """\
[job]
dump_folder = "./outputs"
description = "Llama 3 debug training"
print_config = false

[profiling]
enable_profiling = false
save_traces_folder = "profile_trace"
profile_freq = 10
enable_memory_snapshot = false
save_memory_snapshot_folder = "memory_snapshot"

[metrics]
log_freq = 1
disable_color_printing = false
enable_tensorboard = false
save_tb_folder = "tb"
enable_wandb = false

[model]
name = "llama3"
flavor = "debugmodel"
# test folder with tokenizer.json, for debug purpose only
hf_assets_path = "./tests/assets/tokenizer"
# converters = ["float8"]

[optimizer]
name = "AdamW"
lr = 8e-4
eps = 1e-8

[lr_scheduler]
warmup_steps = 2  # lr scheduler warm up, normally 20% of the train steps
decay_ratio = 0.8  # lr scheduler decay ratio, 80% of the train steps
decay_type = "linear"
min_lr_factor = 0.0

[training]
{training}max_norm = 1.0  # grad norm clipping
steps = 10
dataset = "c4_test"  # supported datasets: c4_test (2K), c4 (177M)

[parallelism]
{parallelism}fsdp_reshard_after_forward = "default" # default / never / always
enable_async_tensor_parallel = false

[checkpoint]
enable = false
folder = "checkpoint"
interval = 10
last_save_model_only = false
export_dtype = "float32"
async_mode = "disabled"  # ["disabled", "async", "async_with_pinned_mem"]

[activation_checkpoint]
mode = "selective"  # ["none", "selective", "full"]
selective_ac_option = '2'  # 'int' = ac every positive int layer or 'op', ac based on ops policy

[compile]
enable=false
components = ["model", "loss"]

[quantize.linear.float8]
enable_fsdp_float8_all_gather = false
precompute_float8_dynamic_scale_for_fsdp = false
filter_fqns = ["output"]

[validation]
enable = false
dataset = "c4_validation"
freq = 5
steps = 10
"""

TRAINING_KEYS = ("local_batch_size", "global_batch_size", "seq_len")
PARALLELISM_KEYS = (
    "data_parallel_replicate_degree",
    "data_parallel_shard_degree",
    "tensor_parallel_degree",
    "pipeline_parallel_degree",
    "context_parallel_degree",
    "pipeline_parallel_microbatch_size",
    "pipeline_parallel_schedule",
    "expert_parallel_degree",
    "expert_tensor_parallel_degree",
)
SCHEDULES = ("1F1B", "GPipe", "Interleaved1F1B", "LoopedBFS", "interleaved1f1b")


# --------------------------------------------------------------------------- configs


def _generate_configs() -> list[dict[str, object]]:
    """Deterministic configs; a key missing from the dict is absent from the TOML."""
    rng = random.Random(SEED)
    configs: list[dict[str, object]] = [
        # debug_model.toml itself
        {
            "local_batch_size": 8,
            "seq_len": 2048,
            "data_parallel_replicate_degree": 1,
            "data_parallel_shard_degree": -1,
            "tensor_parallel_degree": 1,
            "pipeline_parallel_degree": 1,
            "context_parallel_degree": 1,
            "pipeline_parallel_schedule": "Interleaved1F1B",
        },
        {},  # every varied key absent: TorchTitan's defaults
    ]
    seen = {tuple(sorted(c.items())) for c in configs}
    while len(configs) < N_CONFIGS:
        c: dict[str, object] = {}
        r = rng.random()
        if r < 0.03:
            c["local_batch_size"] = rng.choice((0, -2))
        elif r < 0.9:
            c["local_batch_size"] = rng.choice((1, 2, 3, 4, 6, 8, 9, 12, 16))
        r = rng.random()
        if r < 0.15:
            pass  # absent = -1
        elif r < 0.28:
            c["global_batch_size"] = -1
        elif r < 0.30:
            c["global_batch_size"] = rng.choice((-2, -8))  # any negative means local x dp
        elif r < 0.32:
            c["global_batch_size"] = 0
        elif r < 0.66:
            c["global_batch_size"] = c.get("local_batch_size", 8) * rng.choice(
                (1, 2, 3, 4, 6, 8, 16)
            )
        else:
            c["global_batch_size"] = rng.choice(
                (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384)
            )
        if rng.random() < 0.4:
            c["seq_len"] = rng.choice((2048, 4096, 1024, 2050, 2052, 2056, 2060))
        if rng.random() > 0.25:
            c["data_parallel_replicate_degree"] = rng.choice((1, 1, 1, 2, 4))
        r = rng.random()
        if r < 0.15:
            pass  # absent = -1
        elif r < 0.75:
            c["data_parallel_shard_degree"] = -1
        else:
            c["data_parallel_shard_degree"] = rng.choice((1, 2, 4, 8))
        if rng.random() > 0.3:
            c["tensor_parallel_degree"] = rng.choice((1, 1, 2, 4))
        if rng.random() > 0.4:
            c["pipeline_parallel_degree"] = rng.choice((1, 1, 2, 2, 4))
        if rng.random() > 0.4:
            c["context_parallel_degree"] = rng.choice((1, 1, 2))
        if rng.random() < 0.3:
            c["pipeline_parallel_microbatch_size"] = rng.choice((1, 2, 3, 4))
        if rng.random() < 0.5:
            c["pipeline_parallel_schedule"] = rng.choice(SCHEDULES)
        if rng.random() < 0.2:
            c["expert_parallel_degree"] = rng.choice((1, 2, 4, 8))
        if rng.random() < 0.15:
            c["expert_tensor_parallel_degree"] = rng.choice((1, 2, 4))
        if rng.random() < 0.02:  # a degree out of range
            c[rng.choice(PARALLELISM_KEYS[:5])] = rng.choice((0, -2))
        key = tuple(sorted(c.items()))
        if key not in seen:
            seen.add(key)
            configs.append(c)
    return configs


def _toml(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _render(c: dict[str, object]) -> str:
    training = "".join(f"{k} = {_toml(c[k])}\n" for k in TRAINING_KEYS if k in c)
    parallelism = "".join(f"{k} = {_toml(c[k])}\n" for k in PARALLELISM_KEYS if k in c)
    return TEMPLATE.format(training=training, parallelism=parallelism)


def _snippet(c: dict[str, object]) -> str:
    t = [f"{k} = {_toml(c[k])}" for k in TRAINING_KEYS if k in c]
    p = [f"{k} = {_toml(c[k])}" for k in PARALLELISM_KEYS if k in c]
    return "[training] " + ", ".join(t or ["(defaults)"]) + " | [parallelism] " + ", ".join(
        p or ["(defaults)"]
    )


# --------------------------------------------------------------------------- TorchTitan


def _import_torchtitan():
    """Import the parts of TorchTitan the judge needs, or skip.

    torchtitan/__init__.py imports components.quantization, which reaches
    models/moe/kernels.py: ``import triton``. The CPU torch wheel has no triton and
    torchtitan does not declare it, so on a CPU box the package cannot be imported
    as a whole (and pytest.importorskip would silently skip on that
    ModuleNotFoundError). config/ and distributed/{parallel_dims,utils} do not need
    triton: then the package is registered without running its __init__ (which only
    registers quantization converters), and its submodules are imported for real.
    distributed/pipeline_parallel.py does need it (through dual_pipe_v): the judge
    executes its build_pipeline_schedule from source instead of importing it.
    """
    pytest.importorskip("torch")
    spec = importlib.util.find_spec("torchtitan")
    if spec is None:
        pytest.importorskip("torchtitan")  # skips
    from importlib.metadata import version

    if version("torchtitan") != TORCHTITAN_VERSION:
        pytest.skip(f"needs torchtitan=={TORCHTITAN_VERSION}, found {version('torchtitan')}")
    if "torchtitan" not in sys.modules and importlib.util.find_spec("triton") is None:
        pkg = types.ModuleType("torchtitan")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__file__ = spec.origin
        pkg.__spec__ = spec
        pkg.__version__ = TORCHTITAN_VERSION
        sys.modules["torchtitan"] = pkg
    manager = pytest.importorskip("torchtitan.config.manager")
    pdims = pytest.importorskip("torchtitan.distributed.parallel_dims")
    return manager, pdims


def _source_block(lines: list[str], first: str, last: str, path: str) -> tuple[str, int, int]:
    """The lines of ``path`` from the one that starts with ``first`` to the next one
    that starts with ``last`` (stripped, at most 30 lines on), dedented; with 1-based
    line numbers. Exactly one such block must exist."""
    found = []
    for i, line in enumerate(lines):
        if line.strip().startswith(first):
            ends = [j for j in range(i, min(i + 30, len(lines))) if lines[j].strip().startswith(last)]
            if ends:
                found.append((i, ends[0]))
    assert len(found) == 1, f"{path}: expected one block {first!r} .. {last!r}, found {len(found)}"
    i, j = found[0]
    return textwrap.dedent("".join(lines[i : j + 1])), i + 1, j + 1


def _compile_block(block: tuple[str, int, int], path: str):
    """Blank lines in front keep the file's line numbers in tracebacks."""
    src, first, _ = block
    return compile("\n" * (first - 1) + src, path, "exec")


def _source_path(relative: str) -> str:
    """A file of the installed package, found without importing the module (which
    may need triton, e.g. models/llama3 through distributed/pipeline_parallel.py)."""
    return os.path.join(importlib.util.find_spec("torchtitan").submodule_search_locations[0], relative)


def _function_from_source(path: str, name: str, namespace: dict):
    """Define the top-level function ``name`` of ``path`` in ``namespace`` (line numbers kept)."""
    tree = ast.parse(Path(path).read_text(), path)
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    assert len(nodes) == 1, f"{path}: expected one def {name}"
    exec(compile(ast.Module(body=nodes, type_ignores=[]), path, "exec"), namespace)
    node = nodes[0]
    return namespace[name], node.lineno, node.end_lineno


def _describe(e: BaseException) -> str:
    """The exception and the TorchTitan (or torch pipelining) line that raised it."""
    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if "torchtitan" in f.filename or "pipelining" in f.filename] or frames[-1:]
    where = ""
    if mine:
        f = mine[-1]
        name = f.filename.split("site-packages/")[-1]
        where = f" [{name}:{f.lineno}: {f.line}]"
    return f"{type(e).__name__}: {e}{where}"


class _StandInStage(SimpleNamespace):
    """What the pipeline schedule constructors read from a PipelineStage."""


class TorchTitanJudge:
    """TorchTitan's verdict on (toml path, W): None (accepted) or (stage, message)."""

    def __init__(self, manager, pdims):
        import torch
        import torch.distributed as dist
        import torch.distributed.pipelining.schedules as schedules
        from torchtitan.config import TORCH_DTYPE_MAP
        from torchtitan.distributed import utils as dist_utils

        self.torch = torch
        self.dist = dist
        # One manager for all files: each ConfigManager() registers its tyro rule again in
        # the module-global registry (manager.py:44, 239-240), which makes every later
        # parse slower; parse_args keeps no other state between calls.
        self.config_manager = manager.ConfigManager()
        self.schedules = schedules
        # ParallelDims.build_mesh uses tools.utils.device_type, which falls back to
        # "cuda" on a machine without accelerators; the meshes are built on the fake
        # process group, so the device type only names where tensors would live.
        pdims.device_type = "cpu"
        self.where: dict[str, str] = {}

        train_py = _source_path("train.py")
        lines = Path(train_py).read_text().splitlines(keepends=True)
        # train.py:372-382 (Trainer.init_distributed, after init_distributed returns W)
        src, a, b = _source_block(
            lines, "parallelism_config = job_config.parallelism", "world_size=world_size,", train_py
        )
        assert lines[b].strip() == ")", f"{train_py}:{b + 1}: expected ')'"
        src += ")\n"
        dims = compile(
            "\n" * (a - 2) + f"def _build(job_config, world_size):\n{textwrap.indent(src, '    ')}",
            train_py,
            "exec",
        )
        self.where["dims"] = f"torchtitan/train.py:{a}-{b + 1}"
        ns = {"ParallelDims": pdims.ParallelDims}
        exec(dims, ns)
        self._build_dims = ns["_build"]
        self.code = {}
        for name, first, last in (
            ("degree", "if parallel_dims.dp_enabled:", "batch_degree, batch_rank = 1, 0"),  # 98-102
            ("seed", "dist_utils.set_determinism(", ")"),  # 111-116
            ("batch", "# verify batch sizes", "assert self.gradient_accumulation_steps > 0"),  # 195-215
        ):
            block = _source_block(lines, first, last, train_py)
            self.code[name] = _compile_block(block, train_py)
            self.where[name] = f"torchtitan/train.py:{block[1]}-{block[2]}"

        llama_py = _source_path("models/llama3/infra/parallelize.py")
        lines = Path(llama_py).read_text().splitlines(keepends=True)
        short = "torchtitan/models/llama3/infra/parallelize.py"
        for name, first, last in (
            ("seq_len", "assert (", '"""'),  # 69-74
            ("ddp", "if parallel_dims.fsdp_enabled:", 'raise RuntimeError("DDP has not supported'),  # 125-151
        ):
            block = _source_block(lines, first, last, llama_py)
            self.code[name] = _compile_block(block, llama_py)
            self.where[name] = f"{short}:{block[1]}-{block[2]}"
        self.parallelize_ns = {
            "model": None,
            "apply_fsdp": lambda *args, **kwargs: None,
            "TORCH_DTYPE_MAP": TORCH_DTYPE_MAP,
            "logger": logging.getLogger("torchtitan-judge"),
        }
        self.dist_utils = dist_utils

        pipeline_py = _source_path("distributed/pipeline_parallel.py")
        names = ("_PipelineSchedule", "_PipelineScheduleRuntime", "get_schedule_class", "OVERLAP_F_B",
                 "PipelineScheduleMulti", "PipelineScheduleSingle", "ScheduleDualPipeV")
        pipeline_ns = {n: getattr(schedules, n) for n in names}
        pipeline_ns.update(os=os, logger=logging.getLogger("torchtitan-judge"), Callable=object,
                           JobConfig=object, PipelineStage=object, overlap_callback=None)
        self.build_pipeline_schedule, a, b = _function_from_source(pipeline_py, "build_pipeline_schedule", pipeline_ns)
        self.where["pipeline"] = f"torchtitan/distributed/pipeline_parallel.py:{a}-{b}"
        self.configs: dict[str, object] = {}

    def parse(self, path: str):
        """The file parsed as ConfigManager.parse_args does, once per file (it does not depend on W)."""
        if path not in self.configs:
            try:
                self.configs[path] = self._parse(path)
            except Exception as e:  # noqa: BLE001 - any refusal is a verdict
                self.configs[path] = ("parse", _describe(e))
        return self.configs[path]

    def _parse(self, path: str):
        """ConfigManager.parse_args (manager.py:46-62) without its tyro.cli step: with no
        command-line override but the file, tyro returns the TOML's dataclass with
        job.config_file set, at 0.2 s a file. test_fast_parse_is_parse_args checks the two agree."""
        m = self.config_manager
        args = ["--job.config_file", path]
        toml_values = m._maybe_load_toml(args)
        config_cls = m._maybe_add_custom_config(args, toml_values)
        m.config = m._dict_to_dataclass(config_cls, toml_values) if toml_values else config_cls()
        m.config.job.config_file = path
        m._validate_config()
        return m.config

    def layout(self, cfg, world_size: int):
        """(parallel_dims, batch_degree) or a refusal; meshes built once per layout."""
        try:
            parallel_dims = self._build_dims(cfg, world_size)
        except Exception as e:  # noqa: BLE001
            return ("layout", _describe(e))
        key = tuple(getattr(parallel_dims, k) for k in DIM_NAMES)
        if key not in self._meshed:
            try:
                ns = {"parallel_dims": parallel_dims}
                exec(self.code["degree"], ns)
                exec(self.code["seed"], {
                    "dist_utils": self.dist_utils,
                    "parallel_dims": parallel_dims,
                    "job_config": cfg,
                    "self": SimpleNamespace(device=self.torch.device("cpu")),
                })
                self._meshed[key] = (parallel_dims, ns["batch_degree"])
            except Exception as e:  # noqa: BLE001
                self._meshed[key] = ("layout", _describe(e))
        return self._meshed[key]

    def verdict(self, path: str, world_size: int):
        cfg = self.parse(path)
        if isinstance(cfg, tuple):
            return cfg
        laid_out = self.layout(cfg, world_size)
        if isinstance(laid_out[0], str):
            return laid_out
        parallel_dims, batch_degree = laid_out
        for stage, run in (
            ("batch", lambda: exec(self.code["batch"], {
                "job_config": cfg, "batch_degree": batch_degree, "self": SimpleNamespace()})),
            ("parallelize", lambda: self._parallelize(cfg, parallel_dims)),
            ("pipeline", lambda: self._pipeline(cfg, parallel_dims)),
        ):
            try:
                run()
            except Exception as e:  # noqa: BLE001
                return (stage, _describe(e))
        return None

    def _parallelize(self, cfg, parallel_dims):
        ns = dict(self.parallelize_ns, job_config=cfg, parallel_dims=parallel_dims)
        exec(self.code["seq_len"], ns)
        exec(self.code["ddp"], ns)

    def _pipeline(self, cfg, parallel_dims):
        if not parallel_dims.pp_enabled:  # train.py:218
            return
        schedule = self.schedules.get_schedule_class(cfg.parallelism.pipeline_parallel_schedule)
        # pipeline_llm's default stages per rank (pipeline_parallel.py:58, :110-115)
        per_rank = 1 if issubclass(schedule, self.schedules.PipelineScheduleSingle) else 2
        pp = parallel_dims.pp
        stages = [
            _StandInStage(num_stages=pp * per_rank, group_size=pp, group_rank=0, stage_index=i * pp,
                          is_first=i == 0, is_last=False)
            for i in range(per_rank)
        ]
        self.build_pipeline_schedule(cfg, stages, lambda *args: None)

    def run(self, paths: list[str], world_size: int) -> dict[str, object]:
        """Verdicts for all paths at one W, on a fake process group of size W."""
        assert not self.dist.is_initialized(), "torch.distributed already initialised"
        self.dist.init_process_group("fake", rank=0, world_size=world_size)
        self._meshed: dict[tuple, object] = {}
        try:
            return {p: self.verdict(p, world_size) for p in paths}
        finally:
            self.dist.destroy_process_group()


# --------------------------------------------------------------------------- batchlint


def _batchlint(paths: list[str], world_size: int) -> dict[str, list[dict]]:
    cmd = [sys.executable, "-m", "batchlint", "--format", "json", "--world-size", str(world_size)]
    proc = subprocess.run(cmd + paths, cwd=REPO, capture_output=True, text=True, timeout=600)
    try:
        findings = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"batchlint (W={world_size}) exited {proc.returncode} without JSON on stdout.\n"
            f"stdout: {proc.stdout[:2000]}\nstderr: {proc.stderr[-4000:]}"
        )
    assert isinstance(findings, list), f"batchlint JSON is not a list: {str(findings)[:500]}"
    by_file: dict[str, list[dict]] = {os.path.basename(p): [] for p in paths}
    for f in findings:
        name = os.path.basename(str(f.get("path", "")))
        assert name in by_file, f"batchlint reported an unknown path: {f}"
        by_file[name].append(f)
    return by_file


# --------------------------------------------------------------------------- the test


@dataclass
class Case:
    index: int
    config: dict[str, object]
    world_size: int
    titan: object  # None or (stage, message)
    findings: list[dict] = field(default_factory=list)

    def lint_summary(self) -> str:
        return "; ".join(
            f"{f.get('code')}[{f.get('severity')}] {f.get('message')}" for f in self.findings
        ) or "(no findings)"


def _error_codes(findings: list[dict]) -> set[str]:
    return {str(f.get("code")) for f in findings if f.get("severity") == "error"}


def _expected_codes(stage: str, config: dict[str, object]) -> set[str]:
    """Codes that stand for TorchTitan's refusal of this config at this stage.

    At the batch check, with a positive local batch and a global batch that is positive
    or negative ("local x dp"), the only way to fail train.py:195-215 is the modulo
    assert: BL103. A local batch <= 0 or a global batch of 0 fails
    `assert global_batch_size > 0`, the modulo (ZeroDivisionError, or a negative divisor)
    or the accumulation assert; batchlint reports those values as BL104
    (non-positive-batch), BL103 also counts.
    """
    if stage != "batch":
        return STAGE_CODES[stage]
    local = config.get("local_batch_size", 8)
    global_ = config.get("global_batch_size", -1)
    return {"BL103"} if local > 0 and global_ != 0 else {"BL103", "BL104"}


def _disagreements(case: Case) -> list[str]:
    """Stage by stage, up to the one TorchTitan refused at (all of them if it accepted)."""
    refused_at = case.titan[0] if case.titan else None
    reached = STAGES if refused_at is None else STAGES[: STAGES.index(refused_at) + 1]
    errors = _error_codes(case.findings)
    found = []
    for stage in reached:
        flagged = errors & STAGE_CODES[stage]
        if stage == refused_at:
            if not flagged & _expected_codes(stage, case.config):
                found.append(f"{stage} refusal missed" + (f" ({'/'.join(sorted(flagged))} instead)" if flagged else ""))
        elif flagged:
            found.append(f"{'/'.join(sorted(flagged))} false alarm ({stage} passed)")
    return found


def test_fast_parse_is_parse_args(tmp_path):
    """The judge's parse equals the real ConfigManager.parse_args on a sample of the configs."""
    manager, pdims = _import_torchtitan()
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        judge = TorchTitanJudge(manager, pdims)
        for i, c in enumerate(_generate_configs()[:12]):
            path = tmp_path / f"case_{i:04d}.toml"
            path.write_text(_render(c))
            assert judge.parse(str(path)) == judge.config_manager.parse_args(["--job.config_file", str(path)])
    finally:
        root.setLevel(level)


def test_torchtitan_batch_differential(tmp_path):
    manager, pdims = _import_torchtitan()

    configs = _generate_configs()
    # a tree shaped like TorchTitan's own, in case batchlint looks at the path
    folder = tmp_path / "torchtitan" / "models" / "llama3" / "train_configs"
    folder.mkdir(parents=True)
    paths = []
    for i, c in enumerate(configs):
        p = folder / f"case_{i:04d}.toml"
        p.write_text(_render(c))
        paths.append(str(p))

    import torch

    root = logging.getLogger()  # torchtitan.tools.logging.logger is the root logger
    level = root.level
    root.setLevel(logging.ERROR)  # "HF assets path ... does not exist!" per parse
    device_type = pdims.device_type
    rng_state, hash_seed = torch.get_rng_state(), os.environ.get("PYTHONHASHSEED")
    try:
        judge = TorchTitanJudge(manager, pdims)
        import warnings

        with warnings.catch_warnings():  # set_determinism: "DTensor ... cpu device mesh"
            warnings.simplefilter("ignore", UserWarning)
            verdicts = {w: judge.run(paths, w) for w in WORLD_SIZES}
    finally:
        root.setLevel(level)
        pdims.device_type = device_type
        torch.set_rng_state(rng_state)  # set_determinism seeds the global generators
        if hash_seed is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = hash_seed

    cases = [Case(i, configs[i], w, verdicts[w][p]) for w in WORLD_SIZES for i, p in enumerate(paths)]

    parse_refused = [c for c in cases if c.titan and c.titan[0] == "parse"]
    assert not parse_refused, (
        f"the generator made configs TorchTitan cannot parse, e.g. {parse_refused[0].titan}"
    )

    version = subprocess.run(
        [sys.executable, "-m", "batchlint", "--version"], cwd=REPO, capture_output=True, text=True
    )
    assert version.returncode == 0, f"`python -m batchlint --version` failed: {version.stderr[-2000:]}"

    for w in WORLD_SIZES:
        by_file = _batchlint(paths, w)
        for c in cases:
            if c.world_size == w:
                c.findings = by_file[os.path.basename(paths[c.index])]

    disagreements = [(kind, c) for c in cases for kind in _disagreements(c)]
    refusals = {stage: sum(1 for c in cases if c.titan and c.titan[0] == stage) for stage in STAGES}
    summary = (
        f"torchtitan differential: {len(configs)} configs x W in {WORLD_SIZES} = {len(cases)} cases; "
        f"refused at {', '.join(f'{s} {n}' for s, n in refusals.items())}; "
        f"accepted {sum(1 for c in cases if c.titan is None)}; "
        f"cases in full agreement {len(cases) - len({id(c) for _, c in disagreements})}/{len(cases)}; "
        f"judge code: {', '.join(f'{k} {v}' for k, v in judge.where.items())}"
    )
    print(summary)
    # Every stage and code must have been exercised, or the comparison proves little.
    assert all(refusals.values()), summary
    flagged = {code for c in cases for code in _error_codes(c.findings)}
    assert set().union(*STAGE_CODES.values()) <= flagged, sorted(set().union(*STAGE_CODES.values()) - flagged)
    if disagreements:
        kinds: dict[str, int] = {}
        for kind, _ in disagreements:
            kinds[kind] = kinds.get(kind, 0) + 1
        lines = [summary, f"{len(disagreements)} disagreements: {kinds}", ""]
        for kind, c in disagreements[:20]:
            lines += [
                f"- {kind}: case_{c.index:04d}.toml W={c.world_size}",
                f"    {_snippet(c.config)}",
                f"    torchtitan: {c.titan[1] if c.titan else 'accepted'}",
                f"    batchlint:  {c.lint_summary()}",
            ]
        pytest.fail("\n".join(lines), pytrace=False)
