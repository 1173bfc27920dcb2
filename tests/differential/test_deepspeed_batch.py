"""Differential test: DeepSpeed's own config validation judges batchlint's BL1xx verdicts,
and (at the end of this file) BL501 (fp16 with bf16) and BL520 (duplicate keys).

For every generated DeepSpeed JSON config and data-parallel world size W we ask two judges:

* DeepSpeed: does ``deepspeed.runtime.config.DeepSpeedConfig(config, mpu=...)`` raise?
  Its constructor runs ``_set_batch_related_parameters`` (omission rules with floor
  divisions) and ``_batch_assertion`` (each value > 0, tb == mb * ga * W).
* batchlint: does ``batchlint --format json --world-size W --select BL1`` report at least
  one finding of severity "error" with a BL1xx code for the file?

The two verdicts must agree on every case.

How DeepSpeed is given W without torch.distributed: ``DeepSpeedConfig.__init__`` first calls
``deepspeed.comm.get_rank()``; when no process group exists that raises, the constructor
catches it and silently falls back to world_size = 1 *ignoring the mpu*. So we patch
``deepspeed.comm.get_rank`` to return 0 for the duration of the call and pass an ``mpu``
whose ``get_data_parallel_world_size()`` returns W; the constructor then takes W from the
mpu (``self.world_size = mpu.get_data_parallel_world_size()``). Every accepted case is
checked to have ``world_size == W`` so a silent fallback to 1 cannot go unnoticed.

Install (CPU only; torch first so deepspeed does not pull a CUDA build):
    pip install torch==2.13.0
    DS_BUILD_OPS=0 pip install deepspeed

Run: pytest -m differential -s tests/differential/test_deepspeed_batch.py
"""

from __future__ import annotations

import itertools
import json
import logging
from pathlib import Path
from unittest import mock

import pytest

pytestmark = pytest.mark.differential

pytest.importorskip("torch")
pytest.importorskip("deepspeed")

import deepspeed.comm as ds_comm  # noqa: E402
from deepspeed.runtime.config import DeepSpeedConfig  # noqa: E402

TB = "train_batch_size"
MB = "train_micro_batch_size_per_gpu"
GA = "gradient_accumulation_steps"

ABSENT = object()

# Value sets: small positive numbers with many divisibility relations, plus 0 and a negative.
# (10 * 7 * 6 = 420 configs) x 5 world sizes = 2100 cases.
TB_VALUES = [ABSENT, -8, 0, 1, 3, 6, 8, 12, 16, 48]
MB_VALUES = [ABSENT, -2, 0, 1, 2, 3, 4]
GA_VALUES = [ABSENT, -1, 0, 1, 2, 4]
WORLD_SIZES = [1, 2, 3, 4, 8]

# Every config also carries a batch-neutral DeepSpeed key. batchlint recognises a DeepSpeed
# JSON by its keys: a file holding only gradient_accumulation_steps (or nothing) is not taken
# for a DeepSpeed config, so without the marker the "neither tb nor mb" cases would test
# detection rather than the batch rules. DeepSpeed ignores the key for the batch arithmetic.
MARKER = {"steps_per_print": 10}

# Cases excluded from the comparison because batchlint cannot judge them statically by
# design: a JSON with neither train_batch_size nor train_micro_batch_size_per_gpu. Raw
# DeepSpeed refuses it, but such a file is usually a fragment that another layer completes
# before DeepSpeed sees it (DeepSpeed's own autotuning templates, PyTorch Lightning, which
# forbids gradient_accumulation_steps in it and fills the micro batch, and other wrappers
# that set a missing micro batch), so a finding there would be false more often than not.
# Non-integer values ("auto", floats, booleans) are not generated: "auto" is filled by the
# Hugging Face integration, not by raw DeepSpeed.
def excluded(cfg: dict) -> bool:
    return TB not in cfg and MB not in cfg


def generate_configs():
    """All combinations of the value sets, in a fixed order."""
    configs = []
    for tb, mb, ga in itertools.product(TB_VALUES, MB_VALUES, GA_VALUES):
        cfg = dict(MARKER)
        for key, value in ((TB, tb), (MB, mb), (GA, ga)):
            if value is not ABSENT:
                cfg[key] = value
        configs.append(cfg)
    return configs


def generate_cases(world_sizes=WORLD_SIZES):
    """(case_id, config dict, W) for every config and W; W None means "not given"."""
    cases = []
    for w in world_sizes:
        for cfg in generate_configs():
            cases.append((f"w{w}_{len(cases):05d}", cfg, w))
    return cases


class _DataParallelMPU:
    """Minimal model-parallel-unit: only the data-parallel world size matters here."""

    def __init__(self, world_size: int):
        self._w = world_size

    def get_data_parallel_world_size(self):
        return self._w

    def get_data_parallel_rank(self):
        return 0

    def get_model_parallel_world_size(self):
        return 1

    def get_model_parallel_rank(self):
        return 0


def deepspeed_verdict(cfg: dict, world_size: int):
    """Return (rejects: bool, detail: str) as judged by DeepSpeedConfig itself."""
    with mock.patch.object(ds_comm, "get_rank", lambda *a, **k: 0):
        try:
            ds = DeepSpeedConfig(dict(cfg), mpu=_DataParallelMPU(world_size))
        except Exception as exc:  # AssertionError, ZeroDivisionError, ... all mean "rejected"
            return True, f"{type(exc).__name__}: {exc}"
    assert ds.world_size == world_size, (
        f"DeepSpeedConfig used world_size={ds.world_size}, expected {world_size}: "
        "the mpu was ignored (get_rank patch ineffective?)"
    )
    return False, (
        f"accepted: tb={ds.train_batch_size} mb={ds.train_micro_batch_size_per_gpu} "
        f"ga={ds.gradient_accumulation_steps}"
    )


# --------------------------------------------------------------------------- batchlint side


def _run_batchlint(paths, world_size):
    """Run batchlint once over many files, in-process through its click CLI (same options and
    JSON contract as `python -m batchlint`); return the parsed JSON findings list."""
    from click.testing import CliRunner

    from batchlint.cli import main

    args = ["check", "--format", "json", "--select", "BL1"]
    if world_size is not None:
        args += ["--world-size", str(world_size)]
    args += [str(p) for p in paths]
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stdout and stderr apart
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code in (0, 1), (
        f"batchlint exited {result.exit_code}\nstdout: {result.stdout[:2000]}\nstderr: {result.stderr[:2000]}"
    )
    try:
        findings = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"batchlint did not print JSON.\nstdout: {result.stdout[:2000]}\nstderr: {result.stderr[:2000]}")
    assert isinstance(findings, list), f"batchlint JSON is not a list: {type(findings)}"
    return findings


def batchlint_verdicts(tmp_path: Path, cases):
    """Map case_id -> list of BL1xx findings (all severities) for that case's file."""
    by_w: dict[int, list] = {}
    path_to_case: dict[Path, str] = {}
    for case_id, cfg, w in cases:
        d = tmp_path / case_id
        d.mkdir()
        p = d / "ds_config.json"
        p.write_text(json.dumps(cfg, indent=2) + "\n")
        by_w.setdefault(w, []).append(p)
        path_to_case[p.resolve()] = case_id

    result: dict[str, list] = {case_id: [] for case_id, _, _ in cases}
    for w, paths in by_w.items():
        for f in _run_batchlint(paths, w):
            fp = Path(f["path"])
            if not fp.is_absolute():
                fp = Path.cwd() / fp
            case_id = path_to_case.get(fp.resolve())
            assert case_id is not None, f"finding for an unknown path: {f}"
            if str(f.get("code", "")).startswith("BL1"):
                result[case_id].append(f)
    return result


# --------------------------------------------------------------------------- the test


def _compare(cases, ds, bl, title):
    disagreements = []
    for case_id, cfg, w in cases:
        ds_rejects, ds_detail = ds[case_id]
        errors = [f for f in bl[case_id] if f.get("severity") == "error"]
        if ds_rejects != bool(errors):
            disagreements.append((case_id, cfg, w, ds_rejects, ds_detail, bl[case_id]))

    n = len(cases)
    n_reject = sum(1 for r, _ in ds.values() if r)
    summary = (
        f"{title}: {n} cases ({n_reject} rejected / {n - n_reject} accepted by DeepSpeed), "
        f"{n - len(disagreements)} agree, {len(disagreements)} disagree"
    )
    print("\n" + summary)
    lines = [summary]
    for case_id, cfg, w, ds_rejects, ds_detail, findings in disagreements[:20]:
        msgs = "; ".join(f"{f.get('code')}[{f.get('severity')}] {f.get('message')}" for f in findings) or "(none)"
        lines.append(
            f"- {case_id} W={w} config={json.dumps(cfg)}\n"
            f"    DeepSpeed {'REJECTS' if ds_rejects else 'ACCEPTS'}: {ds_detail}\n"
            f"    batchlint: {msgs}"
        )
    if disagreements:
        print("\n".join(lines[1:]))
    assert not disagreements, "\n".join(lines)


def test_deepspeed_batch_arithmetic_agrees(tmp_path):
    """W given: batchlint reports a BL1xx error <=> DeepSpeed raises at that W."""
    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    cases = [c for c in generate_cases() if not excluded(c[1])]
    ds = {case_id: deepspeed_verdict(cfg, w) for case_id, cfg, w in cases}
    bl = batchlint_verdicts(tmp_path, cases)
    _compare(cases, ds, bl, "deepspeed-differential (W given)")


# With W unknown batchlint may report an error only when the config fails for every W, and
# should report one when it does. For the value sets above every W > max(TB_VALUES) behaves
# like one that is too large (any config with train_batch_size needs W <= train_batch_size to
# pass; without it W = 1 passes), so W in 1..max(TB_VALUES) decides "fails for every W" exactly.
ALL_WORLD_SIZES = range(1, max(v for v in TB_VALUES if v is not ABSENT) + 1)


def test_deepspeed_batch_arithmetic_agrees_without_world_size(tmp_path):
    """W not given: batchlint reports a BL1xx error <=> DeepSpeed raises for every W."""
    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    cases = [c for c in generate_cases([None]) if not excluded(c[1])]
    ds = {}
    for case_id, cfg, _ in cases:
        accepted_at = None
        for w in ALL_WORLD_SIZES:
            rejects, detail = deepspeed_verdict(cfg, w)
            if not rejects:
                accepted_at = (w, detail)
                break
        if accepted_at is None:
            ds[case_id] = (True, f"rejected for every W in 1..{ALL_WORLD_SIZES[-1]}, e.g. W=1: {deepspeed_verdict(cfg, 1)[1]}")
        else:
            ds[case_id] = (False, f"W={accepted_at[0]} {accepted_at[1]}")
    bl = batchlint_verdicts(tmp_path, cases)
    _compare(cases, ds, bl, "deepspeed-differential (W unknown)")


# --------------------------------------------------------------------------- beyond the batch keys
#
# Two more start-up refusals DeepSpeedConfig can judge on its own:
#
# * fp16 and bf16 both enabled: `assert not (float16 enabled and bfloat16 enabled)`
#   (runtime/config.py `_initialize_params`). DeepSpeed reads `bf16`, or `bfloat16` when `bf16` is
#   absent or null, and validates `enabled` as a pydantic bool after dropping "auto". batchlint's
#   BL501 must fire exactly when that assertion does.
# * duplicate keys: reading a config *file*, DeepSpeed raises "Duplicate keys in DeepSpeed config"
#   for a key given twice in any object. batchlint's BL520 must fire exactly then.
#
# ZeRO offload settings the stage ignores (BL521) cannot be judged here: DeepSpeedConfig accepts
# them; the engine ignores them later.

ENABLED_VALUES = [ABSENT, True, False, "auto", "true", "off", 1, 0, None]
BF16_SPELLINGS = ["bf16", "bfloat16", "both"]


def precision_configs():
    """(case_id, config) for every fp16.enabled x bf16.enabled value and bf16 spelling."""
    cases = []
    for fp16, bf16, spelling in itertools.product(ENABLED_VALUES, ENABLED_VALUES, BF16_SPELLINGS):
        cfg = {MB: 1}
        if fp16 is not ABSENT:
            cfg["fp16"] = {"enabled": fp16}
        if bf16 is not ABSENT:
            if spelling == "both":  # `bf16` shadows `bfloat16`: the latter is read only when the former is absent
                cfg["bf16"] = {}
                cfg["bfloat16"] = {"enabled": bf16}
            else:
                cfg[spelling] = {"enabled": bf16}
        cases.append((f"precision_{len(cases):04d}", cfg))
    return cases


def _precision_refused(cfg):
    rejects, detail = deepspeed_verdict(cfg, 1)
    return rejects and "cannot be simultaneously enabled" in detail, detail


def _findings_by_file(tmp_path, texts, select):
    """Lint each text as its own ds_config.json; map case_id -> findings with a code in `select`."""
    paths = {}
    for case_id, text in texts:
        folder = tmp_path / case_id
        folder.mkdir()
        path = folder / "ds_config.json"
        path.write_text(text)
        paths[path.resolve()] = case_id
    from click.testing import CliRunner

    from batchlint.cli import main

    result = CliRunner().invoke(main, ["check", "--format", "json", "--select", select, *map(str, paths)],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    found = {case_id: [] for case_id in paths.values()}
    for f in json.loads(result.stdout):
        found[paths[(Path.cwd() / f["path"]).resolve()]].append(f)
    return found


def test_fp16_with_bf16_agrees(tmp_path):
    """BL501 on a DeepSpeed config <=> DeepSpeed asserts fp16 and bf16 cannot both be enabled."""
    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    cases = precision_configs()
    found = _findings_by_file(tmp_path, [(c, json.dumps(cfg)) for c, cfg in cases], "BL501")
    disagreements = []
    for case_id, cfg in cases:
        refused, detail = _precision_refused(cfg)
        if refused != bool(found[case_id]):
            disagreements.append(f"{json.dumps(cfg)}: DeepSpeed {detail!r}, batchlint {found[case_id]}")
    print(f"\nfp16/bf16: {len(cases)} cases, {sum(_precision_refused(c)[0] for _, c in cases)} refused, "
          f"{len(disagreements)} disagree")
    assert not disagreements, "\n".join(disagreements[:20])


DUPLICATE_TEXTS = [
    ("top_level", '{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 2, "gradient_accumulation_steps": 2}', True),
    ("nested", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "stage": 3}}', True),
    ("deep", '{"train_micro_batch_size_per_gpu": 1, '
             '"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "device": "none"}}}', True),
    ("in_array", '{"train_micro_batch_size_per_gpu": 1, "tensorboard": {"enabled": false}, "x": [{"a": 1, "a": 2}]}', True),
    ("thrice", '{"train_micro_batch_size_per_gpu": 1, "steps_per_print": 1, "steps_per_print": 2, "steps_per_print": 3}', True),
    ("siblings", '{"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": false}, "bf16": {"enabled": false}}', False),
    ("same_key_nested_and_top", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 1}, "stage": 1}', False),
    ("none", '{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 2}', False),
]


def _file_refused(path):
    """Does DeepSpeedConfig, reading the file itself, refuse it for duplicate keys?"""
    with mock.patch.object(ds_comm, "get_rank", lambda *a, **k: 0):
        try:
            DeepSpeedConfig(str(path), mpu=_DataParallelMPU(1))
        except Exception as exc:
            return "Duplicate keys" in str(exc), f"{type(exc).__name__}: {exc}"
    return False, "accepted"


def test_duplicate_keys_agree(tmp_path):
    """BL520 on a DeepSpeed config file <=> DeepSpeed refuses to read the file for duplicate keys."""
    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    found = _findings_by_file(tmp_path, [(name, text) for name, text, _ in DUPLICATE_TEXTS], "BL520")
    for name, _, duplicated in DUPLICATE_TEXTS:
        refused, detail = _file_refused(tmp_path / name / "ds_config.json")
        assert refused == duplicated, (name, detail)
        assert bool(found[name]) == refused, (name, detail, found[name])
