"""Differential test: accelerate and transformers judge BL120 for one `accelerate launch --config_file
acc.yaml train.py --flags` run (the DeepSpeed config accelerate's plugin builds from the accelerate config,
checked by the Trainer against the TrainingArguments flags).

For every accelerate config (its deepspeed_config writing gradient_accumulation_steps and
gradient_clipping absent, "auto", equal or not to the flags, or naming a JSON that writes the
accumulation or not) and flags (--gradient_accumulation_steps, --max_grad_norm), two judges:

* accelerate + transformers: commands/launch.py `_validate_launch_command` reads the config,
  utils/launch.py `prepare_deepspeed_cmd_env` gives the training process its environment,
  TrainingArguments (parsed from the flags) builds the DeepSpeedPlugin from it, and the Trainer's
  `propagate_args_to_deepspeed` (HfTrainerDeepSpeedConfig(...).trainer_config_process) collects the
  mismatches that `trainer_config_finalize` raises on.
* batchlint: does it report BL120 for the launch script and the accelerate config?

Run: pytest -m differential tests/differential/test_accelerate_launch.py
"""

from __future__ import annotations

import itertools
import json
import os

import pytest

pytestmark = pytest.mark.differential

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from accelerate.commands.launch import _validate_launch_command, launch_command_parser  # noqa: E402
from accelerate.utils.launch import prepare_deepspeed_cmd_env  # noqa: E402
from transformers import HfArgumentParser, TrainingArguments  # noqa: E402
from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig  # noqa: E402

ABSENT = object()
FLAGS = [(4, ABSENT), (1, 0.5)]  # --gradient_accumulation_steps, --max_grad_norm
BLOCK_GA = [ABSENT, "auto", 1, 4, "'4'"]
BLOCK_CLIP = [ABSENT, "auto", 1.0, 0.5, 0]
JSON_GA = [ABSENT, "auto", 1, 4]


def _cases():
    for flags in FLAGS:
        for ga, clip in itertools.product(BLOCK_GA, BLOCK_CLIP):
            block = "".join(f"  {key}: {value}\n" for key, value in (("gradient_accumulation_steps", ga),
                                                                     ("gradient_clipping", clip))
                            if value is not ABSENT)
            yield flags, block + "  zero_stage: 2\n", None
        for ga in JSON_GA:
            ds = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
            if ga is not ABSENT:
                ds["gradient_accumulation_steps"] = ga
            yield flags, "  deepspeed_config_file: ds.json\n  zero3_init_flag: false\n", ds


def _config(block):
    return (f"compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n{block}distributed_type: DEEPSPEED\n"
            "machine_rank: 0\nnum_machines: 1\nnum_processes: 1\n")


def _flags(flags):
    ga, clip = flags
    return ["--per_device_train_batch_size", "2", "--gradient_accumulation_steps", str(ga)] + (
        [] if clip is ABSENT else ["--max_grad_norm", str(clip)])


def _trainer_refuses(folder, flags, monkeypatch) -> bool:
    with monkeypatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("ACCELERATE_")]:
            patch.delenv(name)
        patch.chdir(folder)
        args = launch_command_parser().parse_args(["--config_file", str(folder / "accelerate_config.yaml"), "train.py"])
        args, defaults, from_config = _validate_launch_command(args)
        args.deepspeed_fields_from_accelerate_config = ",".join(
            list(defaults.deepspeed_config.keys()) + (["mixed_precision"] if from_config else []))
        _, env = prepare_deepspeed_cmd_env(args)
        for name, value in env.items():
            if name.startswith("ACCELERATE_"):
                patch.setenv(name, value)
        (training,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
            ["--output_dir", str(folder / "out"), "--report_to", "none", *_flags(flags)])
        config = HfTrainerDeepSpeedConfig(training.deepspeed_plugin.hf_ds_config.config)  # trainer.py
        config.trainer_config_process(training)  # propagate_args_to_deepspeed
        return bool(config.mismatches)


def test_bl120_agrees_with_accelerate_and_transformers(tmp_path, monkeypatch):
    from conftest import run

    cases = list(_cases())
    for index, (flags, block, ds) in enumerate(cases):
        folder = tmp_path / f"c{index}"
        folder.mkdir()
        (folder / "accelerate_config.yaml").write_text(_config(block))
        if ds is not None:
            (folder / "ds.json").write_text(json.dumps(ds))
        (folder / "run.sh").write_text("accelerate launch --config_file accelerate_config.yaml train.py "
                                       + " ".join(_flags(flags)) + "\n")
    found = json.loads(run("check", "--format", "json", "--select", "BL120", tmp_path).stdout)
    flagged = {f["path"].replace("\\", "/").split("/")[-2] for f in found}
    disagreements = []
    for index, (flags, block, ds) in enumerate(cases):
        refuses = _trainer_refuses(tmp_path / f"c{index}", flags, monkeypatch)
        if refuses != (f"c{index}" in flagged):
            disagreements.append((flags, block, ds, refuses))
    assert not disagreements, disagreements[:10]
    assert flagged, "no case is refused: the test judges nothing"


REFUSED_BLOCKS = ["  zero3_init_flag: false\n", "  gradient_accumulation_steps: 4\n", "  zero_stage: 2\n",
                  "  deepspeed_multinode_launcher: standard\n", "  offload_param_device: none\n"]
PRECISIONS = ["", "mixed_precision: 'no'\n", "mixed_precision: fp16\n", "mixed_precision: null\n"]


def _refused_at_start(folder, monkeypatch) -> bool:
    """TrainingArguments with `--deepspeed ds.json` builds the plugin from it; accelerate raises or not."""
    with monkeypatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("ACCELERATE_")]:
            patch.delenv(name)
        patch.chdir(folder)
        args = launch_command_parser().parse_args(["--config_file", str(folder / "accelerate_config.yaml"), "train.py"])
        args, defaults, from_config = _validate_launch_command(args)
        args.deepspeed_fields_from_accelerate_config = ",".join(
            list(defaults.deepspeed_config.keys()) + (["mixed_precision"] if from_config else []))
        _, env = prepare_deepspeed_cmd_env(args)
        for name, value in env.items():
            if name.startswith("ACCELERATE_"):
                patch.setenv(name, value)
        try:
            HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
                ["--output_dir", str(folder / "out"), "--report_to", "none", "--deepspeed", "ds.json",
                 *_flags((4, ABSENT))])
        except ValueError as error:
            assert "accelerate config variables will be ignored" in str(error)
            return True
        return False


def test_bl123_agrees_with_accelerate_and_transformers(tmp_path, monkeypatch):
    from conftest import run

    cases = list(itertools.product(REFUSED_BLOCKS, PRECISIONS))
    for index, (block, precision) in enumerate(cases):
        folder = tmp_path / f"c{index}"
        folder.mkdir()
        (folder / "accelerate_config.yaml").write_text(_config(block) + precision)
        (folder / "ds.json").write_text(json.dumps({"gradient_accumulation_steps": "auto",
                                                    "zero_optimization": {"stage": 2}}))
        (folder / "run.sh").write_text("accelerate launch --config_file accelerate_config.yaml train.py --deepspeed "
                                       "ds.json " + " ".join(_flags((4, ABSENT))) + "\n")
    found = json.loads(run("check", "--format", "json", "--select", "BL123", tmp_path).stdout)
    flagged = {f["path"].replace("\\", "/").split("/")[-2] for f in found}
    disagreements = [(block, precision, refused) for index, (block, precision) in enumerate(cases)
                     if (refused := _refused_at_start(tmp_path / f"c{index}", monkeypatch)) != (f"c{index}" in flagged)]
    assert not disagreements, disagreements[:10]
    assert flagged and len(flagged) < len(cases), "the cases judge both sides"
