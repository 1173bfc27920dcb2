"""`batchlint explain` on the examples' launch scripts: the numbers match the
formulas of shared/DOMAIN.md, and each names where it came from."""

import json
import os

import pytest

from batchlint.cli import main

from conftest import cli_runner, run, write

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


def test_unknown_world_size_says_how_to_know_it(tmp_path, monkeypatch):
    """A config no launch line in view runs; one that a script runs takes that script's W."""
    write(tmp_path, "ds.json", '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}\n')
    monkeypatch.chdir(tmp_path)
    [e] = explain("ds.json")
    assert rows(e)["world size W"] == "?"
    assert sources(e)["world size W"] == "unknown: pass --world-size"
    monkeypatch.chdir(REPO)
    [launched] = explain("examples/deepspeed/ds_zero2_fixed.json")
    assert launched["config"].endswith("as launched by deepspeed with W=8 at examples/deepspeed/train.sh:3")
    assert rows(launched)["world size W"] == 8


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


# -- which division fails, the stated target, each column's own source ---------------------------

TITAN = "[training]\nlocal_batch_size = 2\nglobal_batch_size = {batch}\nseq_len = 4096\n[parallelism]\ntensor_parallel_degree = 2\n"


def _by_name(explanation):
    return {row["name"]: row for row in explanation["rows"]}


def test_an_indivisible_global_batch_says_which_division_fails(tmp_path):
    """100 over micro 2 x dp 4: TorchTitan refuses to start, so neither accumulation nor a global batch exists."""
    (tmp_path / "t.toml").write_text(TITAN.format(batch=100))
    [e] = explain(str(tmp_path / "t.toml"), "-w", "8")
    rows = _by_name(e)
    for name in ("gradient accumulation", "global batch (sequences/step)"):
        assert rows[name]["values"] == ["?"]
        assert rows[name]["source"].startswith("fails: [training] global_batch_size 100 is not a multiple of 8 (micro 2 x dp 4)")
    assert rows["tokens per optimizer step"]["values"] == ["?"]
    # The near-identical 96 divides: 96 // (2 x 4) = 12, and no row speaks of a failure.
    (tmp_path / "t.toml").write_text(TITAN.format(batch=96))
    [e] = explain(str(tmp_path / "t.toml"), "-w", "8")
    rows = _by_name(e)
    assert rows["gradient accumulation"]["values"] == [12] and rows["global batch (sequences/step)"]["values"] == [96]
    assert not any("fails" in row["source"] for row in e["rows"])


def test_a_layout_that_does_not_fit_w_says_so_in_its_column_only(tmp_path):
    (tmp_path / "t.toml").write_text(TITAN.format(batch=96))
    [e] = explain(str(tmp_path / "t.toml"), "-w", "8", "-w", "7")
    dp = _by_name(e)["data parallel dp"]
    assert dp["values"] == [4, "?"]
    assert dp["sources"][0] == "dp: derived: dp_shard -1 resolved to W (8) // 2 = 4"
    assert dp["sources"][1].startswith("fails: [parallelism] data_parallel_shard_degree = -1 takes the ranks left over, "
                                       "but W (7) is not a multiple of 2")
    assert dp["source"] == f"W=8: {dp['sources'][0]}; W=7: {dp['sources'][1]}"
    text = run("explain", str(tmp_path / "t.toml"), "-w", "8", "-w", "7").stdout
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("data parallel dp"))
    assert lines[at].endswith("W=8: dp: derived: dp_shard -1 resolved to W (8) // 2 = 4")
    assert lines[at + 1].strip().startswith("W=7: fails: ") and not lines[at + 1].lstrip().startswith("data")


def test_the_stated_target_is_shown_beside_the_global_batch(tmp_path):
    (tmp_path / "t.toml").write_text(TITAN.format(batch=96))
    [e] = explain(str(tmp_path / "t.toml"), "-w", "8", "--global-batch", "128")
    names = [row["name"] for row in e["rows"]]
    assert names[names.index("global batch (sequences/step)") + 1] == "stated target global batch"
    target = _by_name(e)["stated target global batch"]
    assert target["values"] == [128] and target["source"] == "global batch: from --global-batch; the global batch is 96, not this"
    [e] = explain(str(tmp_path / "t.toml"), "-w", "8", "--global-batch", "96")
    assert _by_name(e)["stated target global batch"]["source"].endswith("the global batch matches it")
    [e] = explain(str(tmp_path / "t.toml"), "-w", "8")
    assert "stated target global batch" not in _by_name(e)


def test_the_world_size_names_its_own_source(tmp_path, monkeypatch):
    """A directive names its line; the project config its file; -w itself."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.toml").write_text("# batchlint: world-size=8\n" + TITAN.format(batch=96))
    [e] = explain("t.toml")
    assert _by_name(e)["world size W"]["source"] == "world size: from the batchlint directive (line 1)"
    (tmp_path / "t.toml").write_text(TITAN.format(batch=96))
    (tmp_path / "batchlint.toml").write_text("world-size = 16\n")
    [e] = explain("t.toml")
    assert _by_name(e)["world size W"]["source"] == "world size: from the project config (batchlint.toml)"
    [e] = explain("t.toml", "-w", "8")
    assert _by_name(e)["world size W"]["source"] == "world size: from --world-size"


def test_deepspeed_train_batch_size_that_is_not_the_product(tmp_path):
    """DeepSpeed asserts train_batch_size == micro x GA x W: at W 16 it is not, the row says so and no global batch runs."""
    [e] = explain("examples/deepspeed/train.sh", "-w", "8", "-w", "16")
    rows = _by_name(e)
    assert rows["global batch (sequences/step)"]["values"] == [128, "?"]
    assert rows["declared global batch"]["sources"][0] == "train_batch_size, line 2"
    assert rows["declared global batch"]["sources"][1].startswith(
        "train_batch_size, line 2; but: train_batch_size 128 is not 256 (micro 4 x accumulation 4 x world size 16)")


def test_explain_says_what_check_says_of_a_config_that_is_not_there(tmp_path, monkeypatch):
    # `check` passes such a script with a notice; `explain` must not leave the user guessing why
    # it shows nothing of the config: the same notice, on stderr.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main config=examples/config.yaml trainer.n_gpus_per_node=6\n")
    notice = ("batchlint: notice: run.sh:1: `examples/config.yaml`, the config the launch line names, "
              "is not found in the project; its settings are not checked")
    checked, explained = run("check", "run.sh"), run("explain", "run.sh")
    assert checked.exit_code == 0 and notice in checked.stderr.splitlines()
    assert explained.exit_code == 1 and notice in explained.stderr.splitlines()


def test_deepspeed_derives_the_micro_batch_from_train_batch_size(tmp_path, monkeypatch):
    """train_batch_size and the accumulation without train_micro_batch_size_per_gpu: DeepSpeed takes the micro
    batch as train_batch_size // (accumulation x W) (runtime/config.py _set_batch_related_parameters), and
    refuses a W that does not divide it; with W unknown the row says what it waits for."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text('{\n  "train_batch_size": 32,\n  "gradient_accumulation_steps": 2,\n'
                                      '  "zero_optimization": {"stage": 1}\n}\n')
    [e] = explain("ds.json", "-w", "4", "-w", "3")
    micro = _by_name(e)["micro batch (per GPU)"]
    assert micro["values"] == [4, "?"]
    assert micro["sources"][0] == ("micro batch: derived: train_batch_size 32 // "
                                   "(gradient_accumulation_steps 2 x dp 4)")
    assert micro["sources"][1].startswith("fails: train_batch_size 32 is not a multiple of 6")
    [e] = explain("ds.json")
    assert _by_name(e)["micro batch (per GPU)"]["sources"] == ["derived from the declared global batch: needs W"]
    (tmp_path / "ds.json").write_text('{\n  "train_batch_size": 32,\n  "train_micro_batch_size_per_gpu": 2\n}\n')
    [e] = explain("ds.json", "-w", "4")  # written: as written, and the accumulation derived instead
    assert _by_name(e)["micro batch (per GPU)"]["values"] == [2]
    assert _by_name(e)["gradient accumulation"]["values"] == [4]
