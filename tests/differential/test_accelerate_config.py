"""Differential test: accelerate's own start-up validation judges BL122 (an accelerate config
with a deepspeed_config_file and settings accelerate refuses beside it, or a JSON without
zero_optimization).

For every generated accelerate config (which deepspeed_config keys and whether a
mixed_precision are written beside the file; a JSON with or without zero_optimization) two judges:

* accelerate: `accelerate launch --config_file cfg.yaml train.py` as far as the training process's
  DeepSpeedPlugin: commands/launch.py `_validate_launch_command` reads the config, `launch_command`
  passes the config's deepspeed_config keys (and mixed_precision taken from the file) in
  ACCELERATE_CONFIG_DS_FIELDS, and `DeepSpeedPlugin(hf_ds_config=<file>)` raises ValueError or not.
* batchlint: does it report BL122 for the config?

Install: pip install accelerate (no deepspeed needed). Run: pytest -m differential tests/differential/test_accelerate_config.py
"""

from __future__ import annotations

import itertools
import json
import os

import pytest

pytestmark = pytest.mark.differential

pytest.importorskip("accelerate")

from accelerate.commands.launch import _validate_launch_command, launch_command_parser  # noqa: E402
from accelerate.utils import DeepSpeedPlugin  # noqa: E402

from conftest import lint_text, write  # noqa: E402

EXTRA_KEYS = [None, "gradient_accumulation_steps: 4", "zero_stage: 3", "offload_param_device: none",
              "zero3_save_16bit_model: true", "deepspeed_multinode_launcher: standard"]
PRECISIONS = [None, "bf16", "'no'", "null"]
JSONS = [{"zero_optimization": {"stage": 3}}, {"train_micro_batch_size_per_gpu": "auto"}]
CASES = list(itertools.product(EXTRA_KEYS, PRECISIONS, range(len(JSONS))))


def _config(extra, precision) -> str:
    lines = ["compute_environment: LOCAL_MACHINE", "deepspeed_config:", "  deepspeed_config_file: ds.json",
             "  zero3_init_flag: true"]
    lines += [f"  {extra}"] if extra else []
    lines += ["distributed_type: DEEPSPEED", "machine_rank: 0", "num_machines: 1", "num_processes: 8"]
    lines += [f"mixed_precision: {precision}"] if precision else []
    return "\n".join(lines) + "\n"


def _accelerate_refuses(folder) -> bool:
    args = launch_command_parser().parse_args(["--config_file", str(folder / "acc.yaml"), "train.py"])
    args, defaults, from_config = _validate_launch_command(args)
    fields = list(defaults.deepspeed_config.keys()) + (["mixed_precision"] if from_config else [])
    os.environ["ACCELERATE_CONFIG_DS_FIELDS"] = ",".join(fields).lower()  # as utils/launch.py sets it
    try:
        DeepSpeedPlugin(hf_ds_config=str(folder / args.deepspeed_config_file))
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("extra, precision, json_index", CASES)
def test_batchlint_agrees_with_accelerate(tmp_path, monkeypatch, extra, precision, json_index):
    for name in [n for n in os.environ if n.startswith("ACCELERATE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ACCELERATE_CONFIG_DS_FIELDS", "")
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "ds.json", json.dumps(JSONS[json_index]) + "\n")
    text = _config(extra, precision)
    write(tmp_path, "acc.yaml", text)
    refused = _accelerate_refuses(tmp_path)
    found = any(d.code == "BL122" for d in lint_text(tmp_path, "acc.yaml", text).diagnostics)
    assert found == refused, (text, JSONS[json_index])
