"""Hostile and broken input: parse errors become BL001 at their line, nothing
in a config is ever executed or expanded without bound, and nothing ends in
a traceback."""

import json
import os
import time

import pytest

from conftest import (
    DS_MISMATCH,
    XTUNER_SP,
    XTUNER_SP_LINE,
    codes,
    findings,
    run,
    run_module,
    write,
)


def only_finding(result):
    [finding] = findings(result.stdout)
    return finding["code"], int(finding["line"]), finding["severity"], finding["message"]


# --- parse errors: BL001 at the line ----------------------------------------------------


def test_python_syntax_error_at_its_line(workdir):
    text = "batch_size = 1\naccumulative_counts = 16\nsequence_parallel_size = = 4\ntrain_dataloader = dict(batch_size=1)\n"
    write(workdir, "sft.py", text)
    result = run("sft.py")
    assert result.exit_code == 1
    code, line, severity, message = only_finding(result)
    assert (code, line, severity) == ("BL001", 3, "error")
    assert "syntax" in message.lower()


def test_python_unclosed_bracket_points_at_the_bracket(workdir):
    write(workdir, "sft.py", "accumulative_counts = 16\n\ntrain_dataloader = dict(\n    batch_size=1,\n")
    assert only_finding(run("sft.py"))[:2] == ("BL001", 3)


def test_parse_error_does_not_stop_the_other_files(workdir):
    write(workdir, "a_broken.py", "accumulative_counts = (\n")
    write(workdir, "b_sft.py", XTUNER_SP)
    result = run(".")
    assert [(f["path"], f["code"]) for f in findings(result.stdout)] == [("a_broken.py", "BL001"), ("b_sft.py", "BL101")]


def test_invalid_utf8_is_bl001_at_its_line(workdir):
    text = XTUNER_SP.encode().replace(b"batch_size = 1\n", b"batch_size = 1\nname = '\xff\xfe caf\xe9'\n")
    write(workdir, "sft.py", text)
    result = run("sft.py")
    code, line, severity, message = only_finding(result)
    assert (code, line, severity) == ("BL001", XTUNER_SP_LINE, "error")  # the inserted line takes line 6
    assert "UTF-8" in message and "0xff" in message


def test_invalid_utf8_in_yaml_and_json(workdir):
    write(workdir, "a.yaml", b"per_device_train_batch_size: 2\nname: \xc3\x28\n")
    write(workdir, "b.json", b'{"train_batch_size": 8,\n "x": "\x80"}\n')
    result = run(".")
    assert [(f["path"], int(f["line"]), f["code"]) for f in findings(result.stdout)] == [("a.yaml", 2, "BL001"), ("b.json", 2, "BL001")]


def test_utf8_bom_is_fine(workdir):
    write(workdir, "sft.py", b"\xef\xbb\xbf" + XTUNER_SP.encode())
    assert codes(run("sft.py").stdout) == ["BL101"]


@pytest.mark.parametrize(
    "name, text, line",
    [
        ("a.yaml", "per_device_train_batch_size: [2\ngradient_accumulation_steps: 4\n", 2),
        ("b.yaml", "per_device_train_batch_size: 2\n  gradient_accumulation_steps: 4\n", 2),
        ("c.toml", "[training]\nlocal_batch_size = 8\nglobal_batch_size = \n", 3),
        ("d.json", '{\n  "train_batch_size": 8,\n  "gradient_accumulation_steps": ,\n}\n', 3),
    ],
)
def test_yaml_toml_json_syntax_errors(workdir, name, text, line):
    write(workdir, name, text)
    result = run(name)
    assert result.exit_code == 1
    assert only_finding(result)[:3] == ("BL001", line, "error")


def test_parse_error_can_be_ignored(workdir):
    write(workdir, "sft.py", "accumulative_counts = (\n")
    result = run("--ignore", "BL001", "sft.py")
    assert (result.exit_code, findings(result.stdout)) == (0, [])


# --- nothing is executed ---------------------------------------------------------------


def test_python_config_is_never_executed(workdir):
    victim = write(workdir, "victim.txt", "keep me")
    marker = os.path.join(str(workdir), "executed")
    text = (
        "import os, shutil\n"
        f"os.remove({victim!r})\n"
        f"open({marker!r}, 'w').write('ran')\n"
        f"__import__('os').system('touch {marker}')\n"
        "def f():\n"
        f"    os.remove({victim!r})\n"
        "accumulative_counts = f() or 16\n"
        "train_dataloader = dict(batch_size=1)\n"
    )
    write(workdir, "evil.py", text)
    proc = run_module("evil.py", cwd=workdir)
    assert proc.returncode in (0, 1)
    assert open(victim).read() == "keep me"
    assert not os.path.exists(marker)


def test_yaml_python_tags_are_inert(workdir):
    marker = os.path.join(str(workdir), "executed")
    text = (
        "per_device_train_batch_size: 2\n"
        f'gradient_accumulation_steps: !!python/object/apply:os.system ["touch {marker}"]\n'
        f"x: !!python/object/new:os.system [touch {marker}]\n"
        f"y: !!python/name:os.system\n"
    )
    write(workdir, "tag.yaml", text)
    proc = run_module("-w", "8", "--global-batch", "64", "tag.yaml", cwd=workdir)
    assert proc.returncode in (0, 1), proc.stderr
    assert not os.path.exists(marker)
    assert "BL001" not in proc.stdout, "a foreign tag is unknown, not a syntax error"


BOMB = "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(ord('b') + i)}: &{chr(ord('b') + i)} [{', '.join(['*' + chr(ord('a') + i)] * 9)}]\n" for i in range(9)
)


def test_yaml_alias_bomb_is_not_expanded(workdir):
    assert BOMB.count("\n") == 12  # 9 ** 10 strings if expanded
    write(workdir, "bomb.yaml", BOMB)
    start = time.monotonic()
    proc = run_module("--format", "json", "bomb.yaml", cwd=workdir, timeout=30)
    assert time.monotonic() - start < 10
    assert proc.returncode == 1, proc.stderr
    assert [d["code"] for d in json.loads(proc.stdout)] == ["BL003"], "past the node bound: one finding, not a crash"


@pytest.mark.parametrize(
    "name, text",
    [
        ("deep.yaml", "per_device_train_batch_size: 2\nx: " + "[" * 5000 + "]" * 5000 + "\n"),
        ("deep.json", '{"train_batch_size": 8, "x": ' + "[" * 100000 + "]" * 100000 + "}\n"),
        ("deep.toml", "[training]\nx = " + "[" * 5000 + "]" * 5000 + "\n"),
        ("deep.py", "accumulative_counts = 16\nx = " + "-" * 100000 + "1\n"),
    ],
)
def test_deep_nesting_is_bl003_not_a_crash(workdir, name, text):
    write(workdir, name, text)
    result = run(name)
    assert only_finding(result)[0] == "BL003"


# --- nothing to lint ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["empty.py", "empty.yaml", "empty.toml", "empty.json", "blank.yaml"])
def test_empty_file_is_clean(workdir, name):
    write(workdir, name, "\n\n" if name.startswith("blank") else "")
    result = run(name)
    assert result.exit_code == 0
    assert result.stdout == "All checks passed (0 training configs in 1 file).\n"
    assert result.stderr == ""


def test_files_that_are_no_training_config_are_skipped(workdir):
    write(workdir, "setup.py", "from setuptools import setup\nsetup(name='x')\n")
    write(workdir, "data.json", '{"name": "x", "items": [1, 2]}\n')
    write(workdir, "broken.py", "def (\n")  # not a config: not even parsed
    result = run(".")
    assert result.exit_code == 0
    assert result.stdout == "All checks passed (0 training configs in 3 files).\n"


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_folder_without_config_files_warns_and_exits_0(workdir, fmt):
    write(workdir, "docs/README.md", "# hi\n")
    write(workdir, "docs/data.csv", "a,b\n")
    os.makedirs(os.path.join(str(workdir), "empty"))
    for folder in ("docs", "empty"):
        result = run("--format", fmt, folder)
        assert result.exit_code == 0
        assert result.stderr == "batchlint: warning: no Python, YAML, TOML, JSON or shell files found\n"
        if fmt == "text":
            assert result.stdout == "All checks passed (0 training configs in 0 files).\n"
        elif fmt == "json":
            assert json.loads(result.stdout) == []
        else:
            assert result.stdout == ""


def test_folder_without_configs_as_subprocess(tmp_path):
    write(tmp_path, "docs/README.md", "# hi\n")
    proc = run_module("docs", cwd=tmp_path)
    assert proc.returncode == 0
    assert "warning" in proc.stderr


def test_binary_junk_with_config_markers(workdir):
    junk = bytes(range(256)) * 4
    write(workdir, "junk.json", b'{"train_batch_size": ' + junk)
    write(workdir, "junk.py", b"accumulative_counts = \x00\x01" + junk)
    write(workdir, "ds.json", DS_MISMATCH)
    result = run("-w", "8", ".")
    assert [(f["path"], f["code"]) for f in findings(result.stdout)] == [
        ("ds.json", "BL102"), ("junk.json", "BL001"), ("junk.py", "BL001"),
    ]
