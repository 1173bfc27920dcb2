"""What a ruff user types first works the same here: `# noqa: CODE`, `--config "key = value"`, `-` for
standard input, a failed run that never says it passed, and `explain` on a folder."""

import json

import pytest

from batchlint.sources import stdin_name

from conftest import DS_MISMATCH, TITAN_INDIVISIBLE, TRL_PACKED_GROUPED, XTUNER_SP, XTUNER_SP_LINE, codes, run, write


def _noqa(comment: str) -> str:
    lines = XTUNER_SP.splitlines(keepends=True)
    lines[XTUNER_SP_LINE - 1] = lines[XTUNER_SP_LINE - 1].rstrip("\n") + f"  {comment}\n"
    return "".join(lines)


@pytest.mark.parametrize("comment, left", [
    ("# noqa: BL101", []),  # ruff's form suppresses the code on its line
    ("# noqa: E501, BL101", []),  # beside other tools' codes
    ("# NOQA:BL1", []),  # a prefix, any case, no space
    ("# noqa: E501", ["BL101"]),  # other tools' codes are theirs
    ("# noqa", ["BL101"]),  # a bare noqa is left to the tools that read it
    ("# noqa: BL102", ["BL101"]),  # another code
])
def test_noqa_suppresses_the_batchlint_codes_it_names(workdir, comment, left):
    write(workdir, "sft.py", _noqa(comment))
    assert codes(run("check", "sft.py").stdout) == left


def test_an_unused_noqa_is_reported_and_removed_by_fix(workdir):
    write(workdir, "sft.py", _noqa("# noqa: BL101, BL102"))
    result = run("check", "--extend-select", "BL005", "sft.py")
    assert codes(result.stdout) == ["BL005"] and "`# noqa: BL101,BL102` suppresses nothing: no BL102" in result.stdout
    write(workdir, "other.py", _noqa("# noqa: BL102"))
    assert run("check", "--extend-select", "BL005", "--fix", "other.py").exit_code == 1  # BL101 is left
    assert "noqa" not in (workdir / "other.py").read_text()


def test_a_noqa_naming_no_rule_is_an_invalid_directive(workdir):
    write(workdir, "sft.py", _noqa("# noqa: BL999"))
    assert codes(run("check", "sft.py").stdout) == ["BL002", "BL101"]


def test_config_takes_inline_settings_over_each_files_config(workdir):
    write(workdir, "ds.json", DS_MISMATCH)
    write(workdir, "batchlint.toml", "select = ['BL1']\n")
    assert codes(run("check", "-w", "8", "ds.json").stdout) == ["BL102"]
    assert run("check", "-w", "8", "--config", 'ignore = ["BL102"]', "ds.json").exit_code == 0
    # Repeated, and beside a file: the file is the config, the `key = value`s are set over it.
    write(workdir, "other.toml", "ignore = ['BL102']\n")
    assert run("check", "-w", "8", "--config", "other.toml", "--config", "select = ['BL1']", "ds.json").exit_code == 0
    assert codes(run("check", "--config", "world-size = 8", "ds.json").stdout) == ["BL102"]


@pytest.mark.parametrize("value, said", [
    ("foo = 1", "unknown key 'foo'"),
    ("fail-on = 'never'", "fail-on must be one of"),
    ("select =", "neither a file nor a TOML"),
])
def test_a_bad_inline_config_is_exit_2_with_the_reason(workdir, value, said):
    write(workdir, "ds.json", DS_MISMATCH)
    result = run("check", "--config", value, "ds.json")
    assert result.exit_code == 2 and said in result.stderr


@pytest.mark.parametrize("text, name", [
    (DS_MISMATCH, "stdin.json"),
    (TITAN_INDIVISIBLE, "stdin.toml"),
    (XTUNER_SP, "stdin.py"),
    (TRL_PACKED_GROUPED, "stdin.yaml"),
    ("#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --deepspeed ds.json\n", "stdin.sh"),
    ("deepspeed --num_gpus 8 train.py\n", "stdin.sh"),
    ("model:\n  name: x\n", "stdin.yaml"),
])
def test_standard_input_without_a_name_is_read_by_its_content(text, name):
    assert stdin_name(text.encode()) == name


def test_dash_alone_lints_standard_input(workdir):
    from click.testing import CliRunner

    from batchlint.cli import main

    result = CliRunner().invoke(main, ["check", "-w", "8", "--output-format", "json", "-"], input=DS_MISMATCH)
    assert result.exit_code == 1
    assert [(f["path"], f["code"], f["line"]) for f in json.loads(result.stdout)] == [("stdin.json", "BL102", 2)]


def test_a_run_that_exits_2_never_says_all_checks_passed(workdir):
    result = run("check", "missing/")
    assert result.exit_code == 2 and "All checks passed" not in result.stdout
    assert "could not be read" in result.stdout


def test_explain_takes_a_folder_and_explains_each_config_once(workdir):
    write(workdir, "configs/ds.json", DS_MISMATCH.replace("64", "128"))
    write(workdir, "configs/other.json", DS_MISMATCH)
    write(workdir, "train.sh", "deepspeed --num_gpus 8 train.py --deepspeed configs/ds.json\n")
    result = run("explain", "--output-format", "json", ".")
    assert result.exit_code == 0
    titles = [e["config"] for e in json.loads(result.stdout)]
    # ds.json once, as the launch line runs it (its script adds no second table); other.json on its own.
    assert sorted(titles) == ["configs/ds.json, as launched by deepspeed with W=8 at train.sh:1", "configs/other.json"]
    assert run("explain").exit_code == 0  # no path: the working folder


def test_no_cache_writes_no_cache_whatever_the_environment_says(workdir):
    write(workdir, "ds.json", DS_MISMATCH)
    result = run("check", "-w", "8", "--no-cache", "ds.json", env={"BATCHLINT_CACHE_DIR": str(workdir / "cache")})
    assert codes(result.stdout) == ["BL102"] and not (workdir / "cache").exists()
    run("check", "-w", "8", "ds.json", env={"BATCHLINT_CACHE_DIR": str(workdir / "cache")})
    assert (workdir / "cache").exists()


def test_exit_non_zero_on_fix_fails_a_run_that_fixed_something(workdir):
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)  # BL301, fixed by turning length grouping off
    assert run("check", "--fix", "trl.yaml").exit_code == 0
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    result = run("check", "--fix", "--exit-non-zero-on-fix", "trl.yaml")
    assert result.exit_code == 1 and "group_by_length: false" in (workdir / "trl.yaml").read_text()
    assert run("check", "--fix", "--exit-non-zero-on-fix", "trl.yaml").exit_code == 0  # nothing left to fix


def test_version_is_a_command_too():
    from batchlint import __version__

    assert run("version").stdout == f"batchlint {__version__}\n" == run("--version").stdout
