"""The plain lint's command line is parsed without click (lint/entry.py): it must give `checking.check`
exactly what the click command gives it, and leave every other line to click."""

import os
import subprocess
import sys

import click
import pytest

from batchlint import checking, cli, entry


def _click_options(args: list) -> dict:
    """What the click command hands `checking.check` for `args` (as `batchlint check ARGS`)."""
    seen = {}
    context = cli.check.make_context("check", list(args))
    seen.update(context.params)
    return seen


def test_the_defaults_are_the_click_commands():
    assert _click_options([]) == {**checking.DEFAULTS, "fmt": "text"}
    assert set(checking.DEFAULTS) | {"fmt"} == {p.name for p in cli.check.params}


def test_the_commands_left_to_click_are_the_groups():
    assert entry._COMMANDS == set(cli.main.commands) - {"check"}


@pytest.mark.parametrize("args", [
    ["configs/"],
    ["check", "a.yaml", "b.json"],
    ["check", "--force-exclude", "--since", "HEAD", "a.yaml"],  # the pre-commit hook's line
    ["-w", "8", "--global-batch=512", "--output-format", "github", "-e", "-q", "x"],
    ["--world-size=16", "--format=json", "--no-cache", "-s", "-v", "--show-source", "--statistics", "a"],
    ["--", "-odd-name.yaml"],
    ["-"],
    ["--exit-zero", "--jobs", "1", "corpus", "configs"],  # the benchmark's and a CI's line
    ["-j", "4", "--cache-dir", ".batchlint_cache", "x"], ["--jobs=2", "--cache-dir=new/folder", "x"],
])
def test_a_plain_lint_gets_what_click_would_give(args, monkeypatch):
    monkeypatch.delenv("BATCHLINT_OUTPUT_FORMAT", raising=False)
    monkeypatch.delenv("BATCHLINT_CACHE_DIR", raising=False)
    fast = entry.plain_lint(args)
    assert fast is not None
    assert fast == _click_options(args[1:] if args[0] == "check" else args)
    assert type(fast["fmt"]) is checking.Printed and fast["fmt"].also == ()


@pytest.mark.parametrize("args", [
    ["explain", "x.yaml"], ["rule", "BL101"], ["--help"], ["--version"], ["-h"],
    ["-w", "0", "x"],  # click refuses it, with its message
    ["-w", "eight", "x"], ["--output-format", "github,sarif:out.sarif", "x"], ["--format", "nope"],
    ["--fix", "x"], ["--select", "BL1", "x"], ["-w8", "x"], ["--since"], ["--exit-zero=1"],
    ["-j", "0", "x"], ["--jobs", "many", "x"], ["--cache-dir", "pyproject.toml", "x"],  # click refuses them
])
def test_anything_else_is_left_to_click(args, monkeypatch):
    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # where pyproject.toml is a file
    assert entry.plain_lint(args) is None


def test_an_option_click_reads_from_the_environment_leaves_the_line_to_click(monkeypatch):
    monkeypatch.setenv("BATCHLINT_OUTPUT_FORMAT", "json")
    assert entry.plain_lint(["x.yaml"]) is None


def test_the_entry_point_lints_as_the_click_command_does(tmp_path, capfd, monkeypatch):
    (tmp_path / "ds.json").write_text('{"train_batch_size": 6, "train_micro_batch_size_per_gpu": 4}\n')
    monkeypatch.chdir(tmp_path)
    outputs = []
    for run in (entry.main, lambda: cli.main.main(standalone_mode=False)):
        monkeypatch.setattr("sys.argv", ["batchlint", "ds.json", "-w", "1"])
        with pytest.raises(SystemExit) as done:
            run()
        outputs.append((done.value.code, capfd.readouterr()))
    assert outputs[0] == outputs[1] and outputs[0][0] == 1 and "BL" in outputs[0][1].out


def test_the_console_script_is_the_entry_point():
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml")) as handle:
        assert 'batchlint = "batchlint.entry:run"' in handle.read()
    assert isinstance(cli.main, click.Group)


def test_the_console_script_ends_the_process_at_once_with_every_line_written(tmp_path, capfd, monkeypatch):
    # More findings than one pipe buffer holds, so what is written must be flushed before the process ends.
    for index in range(200):
        (tmp_path / f"ds{index:03}.json").write_text('{"train_batch_size": 6, "train_micro_batch_size_per_gpu": 4}\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["batchlint", ".", "-w", "1"])
    with pytest.raises(SystemExit) as done:
        entry.main()
    in_process = capfd.readouterr()
    # An exit hook of the caller's would run at the interpreter's teardown: `run` ends the process before it.
    code = ("import atexit, sys\natexit.register(lambda: print('torn down'))\n"
            "sys.argv = ['batchlint', '.', '-w', '1']\nfrom batchlint.entry import run\nrun()\n")
    console = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert (console.returncode, console.stdout, console.stderr) == (done.value.code, in_process.out, in_process.err)
    assert done.value.code == 1 and len(in_process.out) > 65536 and "torn down" not in console.stdout


def test_python_dash_m_is_the_console_script(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4}\n')
    clean = subprocess.run([sys.executable, "-m", "batchlint", "ds.json", "-w", "2"], cwd=tmp_path,
                           capture_output=True, text=True)
    wrong = subprocess.run([sys.executable, "-m", "batchlint", "ds.json", "-w", "3"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert clean.returncode == 0 and "All checks passed" in clean.stdout
    assert wrong.returncode == 1 and "BL" in wrong.stdout
