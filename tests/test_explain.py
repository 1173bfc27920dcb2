"""`batchlint explain` on the examples' launch scripts: the numbers match the
formulas of shared/DOMAIN.md, and each names where it came from."""

import json
import os

import pytest

from batchlint.cli import main

from conftest import cli_runner, run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)


def explain(*args):
    result = cli_runner().invoke(main, ["explain", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows(explanation, column=0):
    return {row["name"]: row["values"][column] for row in explanation["rows"]}


def sources(explanation):
    return {row["name"]: row["source"] for row in explanation["rows"]}


def test_xtuner_global_batch_is_micro_x_ga_x_w_over_sp():
    [e] = explain("examples/xtuner/train.sh")
    r = rows(e)
    # 1 x (16 x sp 4) x (W 32 / sp 4)
    assert (r["micro batch (per GPU)"], r["gradient accumulation"], r["world size W"]) == (1, 64, 32)
    assert (r["data parallel dp"], r["global batch (sequences/step)"]) == (8, 512)
    assert r["tokens per optimizer step"] == 512 * 32768
    assert sources(e)["micro batch (per GPU)"] == "batch_size, line 17"


def test_torchtitan_accumulation_is_derived_from_the_declared_global_batch():
    [e] = explain("examples/torchtitan/train.sh")
    r = rows(e)
    # dp = 8 // tp 2 = 4; GA = 128 // (2 x 4) = 16
    assert (r["data parallel dp"], r["global batch (sequences/step)"], r["gradient accumulation"]) == (4, 128, 16)
    assert r["micro-steps per optimizer step"] == 16
    assert r["tokens per optimizer step"] == 128 * 8192


def test_swift_and_deepspeed_global_batches():
    [swift] = explain("examples/swift/train.sh")
    assert rows(swift)["global batch (sequences/step)"] == 1 * 16 * 8
    [ds] = explain("examples/deepspeed/train.sh")
    assert rows(ds)["global batch (sequences/step)"] == 4 * 4 * 8
    assert "--num_gpus 8" in sources(ds)["world size W"]


def test_several_world_sizes_give_one_column_each():
    [e] = explain("examples/torchtitan/llama3_8b_fixed.toml", "-w", "8", "-w", "16", "-w", "32")
    dp = next(row for row in e["rows"] if row["name"] == "data parallel dp")
    ga = next(row for row in e["rows"] if row["name"] == "gradient accumulation")
    assert dp["values"] == [4, 8, 16]
    assert ga["values"] == [16, 8, 4]


def test_unknown_world_size_says_how_to_know_it():
    [e] = explain("examples/deepspeed/ds_zero2_fixed.json")
    assert rows(e)["world size W"] == "?"
    assert sources(e)["world size W"] == "unknown: pass --world-size"


def test_text_output_is_a_table():
    result = cli_runner().invoke(main, ["explain", "examples/swift/train.sh"])
    assert result.exit_code == 0
    assert "global batch (sequences/step)" in result.stdout and "128" in result.stdout


def test_values_of_any_type_are_shown_and_serialised(tmp_path, monkeypatch):
    """A degree written as a TOML date (or any value that is no number) used to make the
    JSON output fail (`date is not JSON serializable`); it is shown as text."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.toml").write_text("[training]\nlocal_batch_size = 1979-05-27\n[parallelism]\n"
                                     "pipeline_parallel_degree = 1979-05-27T07:32:00\ntensor_parallel_degree = [2]\n")
    [explanation] = explain("t.toml", "-w", "8")
    values = rows(explanation)
    assert values["micro batch (per GPU)"] == "1979-05-27" and values["pipeline parallel degree"] == "1979-05-27 07:32:00"
    assert values["tensor parallel degree"] == "?"  # a list is no value batchlint reads


@pytest.mark.parametrize("name, text, length, source", [
    ("lf.yaml", "stage: sft\nmodel_name_or_path: m\nper_device_train_batch_size: 2\n", 2048, "cutoff_len: framework default"),
    ("lf2.yaml", "stage: sft\nmodel_name_or_path: m\nper_device_train_batch_size: 2\ncutoff_len: 4096\n", 4096,
     "cutoff_len, line 4"),
    ("swift.yaml", "model: Qwen/Qwen2.5-7B\ntuner_type: lora\nmax_length: 8192\nper_device_train_batch_size: 1\n", 8192,
     "max_length, line 3"),
    ("swift2.yaml", "model: Qwen/Qwen2.5-7B\ntuner_type: lora\nper_device_train_batch_size: 1\n", "?", "not set"),
    ("sft.yaml", "model_name_or_path: m\nper_device_train_batch_size: 2\ndataset_text_field: text\n", 1024,
     "max_length: framework default"),
    ("sft2.yaml", "model_name_or_path: m\nper_device_train_batch_size: 2\npacking: true\nmax_length: null\n", "?",
     "not set"),
])
def test_every_framework_s_sequence_length_key(tmp_path, name, text, length, source):
    """ms-swift max_length (unset: the model's own), LLaMA-Factory cutoff_len (default 2048), TRL SFT max_length
    (default 1024; null: no limit)."""
    import json

    path = tmp_path / name
    path.write_text(text)
    [explained] = json.loads(run("explain", "--format", "json", str(path)).stdout)
    row = next(r for r in explained["rows"] if r["name"] == "sequence length")
    assert (row["values"][0], row["source"]) == (length, source)
