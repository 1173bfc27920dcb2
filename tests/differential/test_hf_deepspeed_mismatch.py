"""Differential test: transformers' own comparison of a DeepSpeed config with TrainingArguments
(``HfTrainerDeepSpeedConfig.trainer_config_process`` collects the mismatches, and
``trainer_config_finalize`` raises "Please correct the following DeepSpeed config values that mismatch
TrainingArguments values"), then, where DeepSpeed is installed, DeepSpeed's own batch check on the
config TrainingArguments hands over (accelerate's plugin adds an accumulation of 1 where it writes
none), judges BL120.

For every TrainingArguments (micro batch, accumulation, max_grad_norm) and DeepSpeed JSON (each of
its batch keys and gradient_clipping absent, "auto", equal, different, or the equal number written
as a string) at W = 1 (one CPU process: what TrainingArguments.world_size is here), transformers
must raise exactly when batchlint reports BL120 for the YAML that names the JSON.

Run: pytest -m differential tests/differential/test_hf_deepspeed_mismatch.py
"""

from __future__ import annotations

import itertools
import json

import pytest

pytestmark = pytest.mark.differential

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from transformers import TrainingArguments  # noqa: E402
from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig  # noqa: E402

try:  # DeepSpeed's own batch check, where DeepSpeed is installed
    from deepspeed.runtime.config import DeepSpeedConfig
except Exception:  # noqa: BLE001
    DeepSpeedConfig = None

ABSENT = object()
TRAINER = [(2, 1, 1.0), (4, 8, 0.5)]  # per_device_train_batch_size, gradient_accumulation_steps, max_grad_norm


def _variants(right, wrong):
    return [ABSENT, "auto", right, wrong, str(right)]


def _cases():
    for micro, accumulation, clip in TRAINER:
        for mb, ga, tb, gc in itertools.product(_variants(micro, micro + 1), _variants(accumulation, accumulation * 2),
                                                _variants(micro * accumulation, micro * accumulation + 1),
                                                _variants(clip, clip * 2)):
            ds = {"zero_optimization": {"stage": 2}}
            for key, value in (("train_micro_batch_size_per_gpu", mb), ("gradient_accumulation_steps", ga),
                               ("train_batch_size", tb), ("gradient_clipping", gc)):
                if value is not ABSENT:
                    ds[key] = value
            yield (micro, accumulation, clip), ds


def _transformers_refuses(trainer, ds, tmp_path) -> bool:
    micro, accumulation, clip = trainer
    args = TrainingArguments(output_dir=str(tmp_path / "out"), per_device_train_batch_size=micro,
                             gradient_accumulation_steps=accumulation, max_grad_norm=clip, report_to=[])
    assert args.world_size == 1
    config = HfTrainerDeepSpeedConfig(json.loads(json.dumps(ds)))
    try:
        config.trainer_config_process(args)
    except ValueError as error:  # some releases raise here already
        assert "mismatch TrainingArguments" in str(error)
        return True
    # trainer_config_finalize (run by deepspeed_init, once the model exists) raises on what was collected.
    return bool(config.mismatches) or _deepspeed_refuses(trainer, ds, tmp_path)


def _deepspeed_refuses(trainer, ds, tmp_path) -> bool:
    """DeepSpeed's batch check on the config as TrainingArguments hands it over (`--deepspeed ds.json`):
    filled in, and with the accumulation accelerate's DeepSpeedPlugin adds where it writes none."""
    if DeepSpeedConfig is None:
        return False
    micro, accumulation, clip = trainer
    path = tmp_path / "handed.json"
    path.write_text(json.dumps(ds))
    args = TrainingArguments(output_dir=str(tmp_path / "out"), per_device_train_batch_size=micro,
                             gradient_accumulation_steps=accumulation, max_grad_norm=clip, report_to=[],
                             deepspeed=str(path))
    if args.hf_deepspeed_config.mismatches:
        return True
    try:
        DeepSpeedConfig(dict(args.hf_deepspeed_config.config))
    except AssertionError as error:  # (neither batch size written: accelerate fills them in from the loader)
        return "Check batch related parameters" in str(error)
    except Exception:  # noqa: BLE001  (a value DeepSpeed cannot read at all: a string where a number goes)
        return False
    return False


def test_bl120_agrees_with_transformers(tmp_path):
    from click.testing import CliRunner

    from batchlint.cli import main

    cases = list(_cases())
    paths = []
    for index, (trainer, ds) in enumerate(cases):
        folder = tmp_path / f"c{index}"
        folder.mkdir()
        (folder / "ds.json").write_text(json.dumps(ds))
        micro, accumulation, clip = trainer
        (folder / "sft.yaml").write_text(f"model_name_or_path: m\nper_device_train_batch_size: {micro}\n"
                                         f"gradient_accumulation_steps: {accumulation}\nmax_grad_norm: {clip}\n"
                                         "deepspeed: ds.json\n")
        paths.append(str(folder / "sft.yaml"))
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, ["check", "--format", "json", "--select", "BL120", "-w", "1", *paths],
                           catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    flagged = {f["path"].split("/")[-2] for f in json.loads(result.stdout) if f["code"] == "BL120"}
    disagreements = []
    for index, (trainer, ds) in enumerate(cases):
        refuses = _transformers_refuses(trainer, ds, tmp_path)
        if refuses != (f"c{index}" in flagged):
            disagreements.append((trainer, ds, refuses))
    print(f"BL120 vs transformers {transformers.__version__}: {len(cases) - len(disagreements)} of {len(cases)} agree")
    assert not disagreements, disagreements[:10]
