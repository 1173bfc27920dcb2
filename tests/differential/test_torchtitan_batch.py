"""Differential test: batchlint's BL103 against TorchTitan 0.2.2's own start-up code.

For every generated TOML config and world size W, TorchTitan itself decides whether
start-up accepts it, on a CPU-only machine, without building a model:

1. parse: the real ``ConfigManager().parse_args(["--job.config_file", path])``
   (torchtitan/config/manager.py:46-62; unknown or renamed keys such as the old
   ``training.batch_size`` raise ValueError in ``_dict_to_dataclass``, manager.py:160-171).
2. layout: the real ``ParallelDims`` validation (distributed/parallel_dims.py:35-59,
   dp_shard = -1 resolved at :49-50, product == W asserted at :53-56), constructed by
   executing the installed lines of ``Trainer.init_distributed`` (train.py:372-382)
   with ``world_size = W``.
3. batch: the installed lines of ``Trainer.__init__`` that take the batch degree
   (train.py:98-102: ``parallel_dims.get_mesh("batch").size()``, built on a "fake"
   process group of size W, as TorchTitan's own ``comm.mode = "fake_backend"`` does)
   and that verify the global batch (train.py:195-215):

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

   These blocks are not re-typed here: they are cut out of the installed train.py
   by their first and last lines and executed, so the judge is TorchTitan's code.

Comparison: TorchTitan refuses at the batch stage <=> batchlint reports BL103 with
severity error; where the refusal comes from a local batch <= 0 or a global batch of 0
(`assert global_batch_size > 0` and friends), batchlint's BL104 (non-positive-batch)
counts too. An accepted config must get neither BL103 nor BL104 as an error. Cases
refused at the layout stage never reach the batch check; they are compared
(refused <=> some BL2xx error) only if batchlint emits any BL2xx code at all.
"""

from __future__ import annotations

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

# Shaped like torchtitan/models/llama3/train_configs/debug_model.toml @ v0.2.2;
# {training} and {parallelism} are replaced per case.
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
{training}seq_len = 2048
max_norm = 1.0  # grad norm clipping
steps = 10
dataset = "c4_test"  # supported datasets: c4_test (2K), c4 (177M)

[parallelism]
{parallelism}fsdp_reshard_after_forward = "default" # default / never / always
enable_async_tensor_parallel = false
pipeline_parallel_schedule = "Interleaved1F1B"

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

TRAINING_KEYS = ("local_batch_size", "global_batch_size")
PARALLELISM_KEYS = (
    "data_parallel_replicate_degree",
    "data_parallel_shard_degree",
    "tensor_parallel_degree",
    "pipeline_parallel_degree",
    "context_parallel_degree",
)


# --------------------------------------------------------------------------- configs


def _generate_configs() -> list[dict[str, int]]:
    """Deterministic configs; a key missing from the dict is absent from the TOML."""
    rng = random.Random(SEED)
    configs: list[dict[str, int]] = [
        # debug_model.toml itself
        {
            "local_batch_size": 8,
            "data_parallel_replicate_degree": 1,
            "data_parallel_shard_degree": -1,
            "tensor_parallel_degree": 1,
            "pipeline_parallel_degree": 1,
            "context_parallel_degree": 1,
        },
        {},  # every varied key absent: TorchTitan's defaults
    ]
    seen = {tuple(sorted(c.items())) for c in configs}
    while len(configs) < N_CONFIGS:
        c: dict[str, int] = {}
        r = rng.random()
        if r < 0.03:
            c["local_batch_size"] = rng.choice((0, -2))
        elif r < 0.9:
            c["local_batch_size"] = rng.choice((1, 2, 3, 4, 6, 8, 16))
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
            c["pipeline_parallel_degree"] = rng.choice((1, 1, 2))
        if rng.random() > 0.4:
            c["context_parallel_degree"] = rng.choice((1, 1, 2))
        key = tuple(sorted(c.items()))
        if key not in seen:
            seen.add(key)
            configs.append(c)
    return configs


def _render(c: dict[str, int]) -> str:
    training = "".join(f"{k} = {c[k]}\n" for k in TRAINING_KEYS if k in c)
    parallelism = "".join(f"{k} = {c[k]}\n" for k in PARALLELISM_KEYS if k in c)
    return TEMPLATE.format(training=training, parallelism=parallelism)


def _snippet(c: dict[str, int]) -> str:
    t = [f"{k} = {c[k]}" for k in TRAINING_KEYS if k in c]
    p = [f"{k} = {c[k]}" for k in PARALLELISM_KEYS if k in c]
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
    ModuleNotFoundError). config/ and distributed/ do not need triton: then the
    package is registered without running its __init__ (which only registers
    quantization converters), and its submodules are imported for real.
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


def _describe(e: BaseException) -> str:
    """The exception and the TorchTitan line that raised it (some asserts have no text)."""
    frames = [
        f for f in traceback.extract_tb(e.__traceback__) if "torchtitan" in f.filename
    ] or traceback.extract_tb(e.__traceback__)[-1:]
    where = ""
    if frames:
        f = frames[-1]
        name = f.filename.split("site-packages/")[-1]
        where = f" [{name}:{f.lineno}: {f.line}]"
    return f"{type(e).__name__}: {e}{where}"


class TorchTitanJudge:
    """TorchTitan's verdict on (toml path, W): None (accepted) or (stage, message)."""

    def __init__(self, manager, pdims):
        import torch.distributed as dist

        self.dist = dist
        self.manager = manager
        self.pdims = pdims
        # ParallelDims.build_mesh uses tools.utils.device_type, which falls back to
        # "cuda" on a machine without accelerators; the meshes are built on the fake
        # process group, so the device type only names where tensors would live.
        pdims.device_type = "cpu"

        train_py = importlib.util.find_spec("torchtitan.train").origin
        lines = Path(train_py).read_text().splitlines(keepends=True)
        blocks = {}
        # train.py:372-382 (Trainer.init_distributed, after init_distributed returns W)
        src, a, b = _source_block(
            lines, "parallelism_config = job_config.parallelism", "world_size=world_size,", train_py
        )
        assert lines[b].strip() == ")", f"{train_py}:{b + 1}: expected ')'"
        src += ")\n"
        blocks["dims"] = (
            "\n" * (a - 2)
            + f"def _build(job_config, world_size):\n{textwrap.indent(src, '    ')}",
            a,
            b + 1,
        )
        # train.py:98-102
        blocks["degree"] = _source_block(
            lines, "if parallel_dims.dp_enabled:", "batch_degree, batch_rank = 1, 0", train_py
        )
        # train.py:195-215
        blocks["batch"] = _source_block(
            lines, "# verify batch sizes", "assert self.gradient_accumulation_steps > 0", train_py
        )
        self.where = {k: f"torchtitan/train.py:{a}-{b}" for k, (_, a, b) in blocks.items()}
        # Blank lines in front keep train.py's line numbers in tracebacks.
        self.code = {
            k: compile(src if k == "dims" else "\n" * (a - 1) + src, train_py, "exec")
            for k, (src, a, b) in blocks.items()
        }
        ns = {"ParallelDims": pdims.ParallelDims}
        exec(self.code["dims"], ns)
        self._build_dims = ns["_build"]
        self.configs: dict[str, object] = {}

    def parse(self, path: str):
        """ConfigManager.parse_args, once per file (it does not depend on W)."""
        if path not in self.configs:
            try:
                self.configs[path] = self.manager.ConfigManager().parse_args(
                    ["--job.config_file", path]
                )
            except Exception as e:  # noqa: BLE001 - any refusal is a verdict
                self.configs[path] = ("parse", _describe(e))
        return self.configs[path]

    def verdict(self, path: str, world_size: int):
        cfg = self.parse(path)
        if isinstance(cfg, tuple):
            return cfg
        try:
            parallel_dims = self._build_dims(cfg, world_size)
        except Exception as e:  # noqa: BLE001
            return ("layout", _describe(e))
        # Equal dims give equal meshes: build each layout's meshes once per W.
        key = tuple(
            getattr(parallel_dims, k)
            for k in ("dp_replicate", "dp_shard", "cp", "tp", "pp", "ep", "etp", "world_size")
        )
        parallel_dims = self._meshed.setdefault(key, parallel_dims)
        try:
            ns = {"parallel_dims": parallel_dims}
            exec(self.code["degree"], ns)
            ns = {
                "job_config": cfg,
                "batch_degree": ns["batch_degree"],
                "self": SimpleNamespace(),
            }
            exec(self.code["batch"], ns)
        except Exception as e:  # noqa: BLE001
            return ("batch", _describe(e))
        return None

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
    config: dict[str, int]
    world_size: int
    titan: object  # None or (stage, message)
    findings: list[dict] = field(default_factory=list)

    def lint_summary(self) -> str:
        return "; ".join(
            f"{f.get('code')}[{f.get('severity')}] {f.get('message')}" for f in self.findings
        ) or "(no findings)"


def _has(findings: list[dict], pred) -> bool:
    return any(pred(str(f.get("code", ""))) and f.get("severity") == "error" for f in findings)


def _error_codes(findings: list[dict]) -> set[str]:
    return {str(f.get("code")) for f in findings if f.get("severity") == "error"}


def _expected_batch_codes(config: dict[str, int]) -> set[str]:
    """Codes that stand for TorchTitan's batch-check refusal of this config.

    With a positive local batch and a global batch that is positive or negative
    ("local x dp"), the only way to fail train.py:195-215 is the modulo assert: BL103.
    A local batch <= 0 or a global batch of 0 fails `assert global_batch_size > 0`,
    the modulo (ZeroDivisionError, or a negative divisor) or the accumulation assert;
    batchlint reports those values as BL104 (non-positive-batch), BL103 also counts.
    """
    local = config.get("local_batch_size", 8)
    global_ = config.get("global_batch_size", -1)
    return {"BL103"} if local > 0 and global_ != 0 else {"BL103", "BL104"}


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

    root = logging.getLogger()  # torchtitan.tools.logging.logger is the root logger
    level = root.level
    root.setLevel(logging.ERROR)  # "HF assets path ... does not exist!" per parse
    device_type = pdims.device_type
    try:
        judge = TorchTitanJudge(manager, pdims)
        verdicts = {w: judge.run(paths, w) for w in WORLD_SIZES}
    finally:
        root.setLevel(level)
        pdims.device_type = device_type

    cases: list[Case] = []
    for w in WORLD_SIZES:
        for i, p in enumerate(paths):
            cases.append(Case(i, configs[i], w, verdicts[w][p]))

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

    any_bl2 = any(
        str(f.get("code", "")).startswith("BL2") for c in cases for f in c.findings
    )
    layout_cases = [c for c in cases if c.titan and c.titan[0] == "layout"]
    batch_cases = [c for c in cases if not (c.titan and c.titan[0] == "layout")]

    disagreements: list[tuple[str, Case]] = []
    agree = 0
    for c in batch_cases:
        codes = _error_codes(c.findings) & {"BL103", "BL104"}
        if c.titan is not None:  # refused by the batch check
            if codes & _expected_batch_codes(c.config):
                agree += 1
            else:
                disagreements.append(("BL103 missed" if not codes else "BL104 instead of BL103", c))
        elif codes:
            disagreements.append((f"{'/'.join(sorted(codes))} false alarm", c))
        else:
            agree += 1
    layout_agree = 0
    if any_bl2:
        for c in cases:
            refused = bool(c.titan and c.titan[0] == "layout")
            flagged = _has(c.findings, lambda code: code.startswith("BL2"))
            if refused == flagged:
                layout_agree += 1
            else:
                disagreements.append(("BL2xx missed" if refused else "BL2xx false alarm", c))

    summary = (
        f"torchtitan differential: {len(configs)} configs x W in {WORLD_SIZES} = {len(cases)} cases; "
        f"{len(layout_cases)} layout cases (refused by ParallelDims), "
        f"{len(batch_cases)} reach the batch check "
        f"({sum(1 for c in batch_cases if c.titan)} refused there); "
        f"BL103/BL104 agreements {agree}/{len(batch_cases)}; "
        + (
            f"BL2xx agreements {layout_agree}/{len(cases)}"
            if any_bl2
            else "layout cases not compared (batchlint emitted no BL2xx code)"
        )
        + f"; judge code: dims {judge.where['dims']}, degree {judge.where['degree']}, "
        f"batch {judge.where['batch']}"
    )
    print(summary)
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
