"""Accelerate config files linted on their own: the world size they give (num_processes, the
total over machines), the DeepSpeed accumulation they set, the DeepSpeed JSON they name
(checked under that W by the DeepSpeed adapter's reading, reported in the JSON), and BL122."""

import json

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, check_file
from batchlint.frameworks import accelerate

from conftest import run, write


def codes(result):
    return sorted((d.code, d.path.rsplit("/", 1)[-1], d.span.line) for d in result.diagnostics)


# In the shape of trl examples/accelerate_configs/deepspeed_zero3.yaml.
ZERO3 = """\
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  deepspeed_multinode_launcher: standard
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: true
  zero3_save_16bit_model: true
  zero_stage: 3
distributed_type: DEEPSPEED
downcast_bf16: 'no'
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: {machines}
num_processes: {processes}
rdzv_backend: static
same_network: true
use_cpu: false
"""

# With a DeepSpeed JSON next to it (the keys accelerate would ignore left out).
WITH_FILE = """\
compute_environment: LOCAL_MACHINE
deepspeed_config:
  deepspeed_config_file: ds.json
  zero3_init_flag: true
distributed_type: DEEPSPEED
machine_rank: 0
num_machines: 1
num_processes: 8
"""


def test_an_accelerate_config_is_recognised_and_gives_w(lint):
    result = lint("zero3.yaml", ZERO3.format(machines=1, processes=8))
    assert result.framework == "accelerate-config" and result.diagnostics == []


@pytest.mark.parametrize("machines, processes, world", [
    (1, 8, 8), (2, 16, 16),  # num_processes is the total over machines
    (2, 15, 14),  # 15 // 2 = 7 per machine: accelerate floors, 14 processes run
    (1, -1, "?"),  # -1: pass --num_processes on the launch line
])
def test_world_size_is_num_processes_over_machines(tmp_path, machines, processes, world):
    path = write(tmp_path, "zero3.yaml", ZERO3.format(machines=machines, processes=processes))
    [explained] = json.loads(run("explain", "--format", "json", path).stdout)
    rows = {row["name"]: row for row in explained["rows"]}
    assert explained["framework"] == "accelerate-config" and rows["world size W"]["values"] == [world]
    if world == 14:
        assert "num_processes (15) // num_machines (2) = 7 per machine x 2 machines" in rows["world size W"]["source"]


def test_deepspeed_accumulation_written_in_the_accelerate_config(tmp_path):
    text = ZERO3.format(machines=1, processes=8).replace("  zero_stage: 3\n", "  zero_stage: 3\n  gradient_accumulation_steps: 16\n")
    [explained] = json.loads(run("explain", "--format", "json", write(tmp_path, "z.yaml", text)).stdout)
    rows = {row["name"]: row for row in explained["rows"]}
    assert rows["gradient accumulation"]["values"] == [16]
    assert rows["gradient accumulation"]["source"] == "deepspeed_config.gradient_accumulation_steps, line 10"


def test_other_yaml_with_distributed_type_is_not_taken(lint):
    """A key named distributed_type alone (or an unknown kind) does not make an accelerate config."""
    assert lint("a.yaml", "distributed_type: DEEPSPEED\nfoo: 1\n").framework != "accelerate-config"
    assert lint("b.yaml", "distributed_type: ring\nnum_processes: 8\n").framework != "accelerate-config"


def test_the_linked_json_is_checked_with_w_from_num_processes(tmp_path, lint):
    """train_batch_size 100 is not 4 x 4 x 8: DeepSpeed refuses; reported in the JSON, at its line."""
    ds = {"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4,
          "zero_optimization": {"stage": 3}}
    write(tmp_path, "ds.json", json.dumps(ds, indent=2) + "\n")
    assert codes(lint("acc.yaml", WITH_FILE)) == [("BL102", "ds.json", 2)]
    write(tmp_path, "ds.json", json.dumps({**ds, "train_batch_size": 128}, indent=2) + "\n")
    assert codes(lint("acc.yaml", WITH_FILE)) == []
    # The HF integration fills "auto": nothing to check.
    write(tmp_path, "ds.json", json.dumps({**ds, "train_batch_size": "auto"}, indent=2) + "\n")
    assert codes(lint("acc.yaml", WITH_FILE)) == []


def test_a_linked_json_without_zero_optimization_is_refused(tmp_path, lint):
    write(tmp_path, "ds.json", json.dumps({"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": True}}) + "\n")
    [finding] = lint("acc.yaml", WITH_FILE).diagnostics
    assert (finding.code, finding.span.line) == ("BL122", 3) and "has no zero_optimization section" in finding.message
    write(tmp_path, "ds.json", json.dumps({"zero_optimization": {"stage": 2}}) + "\n")
    assert lint("acc.yaml", WITH_FILE).diagnostics == []


def test_a_missing_linked_json_is_no_finding(lint):
    result = lint("acc.yaml", WITH_FILE)
    assert result.framework == "accelerate-config" and result.diagnostics == []


@pytest.mark.parametrize("extra, flagged", [
    ("  gradient_accumulation_steps: 4\n", ["deepspeed_config.gradient_accumulation_steps"]),
    ("  offload_param_device: none\n", ["deepspeed_config.offload_param_device"]),  # any value: the key is refused
    ("  deepspeed_multinode_launcher: standard\n", []),
    ("mixed_precision: 'no'\n", ["mixed_precision"]),
    ("mixed_precision: null\n", []),
])
def test_keys_accelerate_refuses_beside_a_deepspeed_file(tmp_path, lint, extra, flagged):
    write(tmp_path, "ds.json", json.dumps({"zero_optimization": {"stage": 3}}) + "\n")
    text = WITH_FILE.replace("  zero3_init_flag: true\n", "  zero3_init_flag: true\n" + extra) if extra.startswith("  ") \
        else WITH_FILE + extra
    result = lint("acc.yaml", text)
    [(_, plan)] = check_file(str(tmp_path / "acc.yaml"), Settings(root=str(tmp_path)), Options(), rules=()).plans
    assert [f.key for f in accelerate.settings(plan).deepspeed_file.ignored] == flagged
    assert [d.code for d in result.diagnostics] == (["BL122"] if flagged else [])


def test_the_examples():
    result = run("check", "--format", "json", "examples/accelerate")
    found = [(d["code"], d["path"], d["line"]) for d in json.loads(result.stdout)]
    assert found == [("BL122", "examples/accelerate/zero3.yaml", 9)]
