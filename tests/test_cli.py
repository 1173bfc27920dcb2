"""The command line: exit codes, options, `rule`, `--version`, and a few runs
as a real subprocess (`python -m batchlint`)."""

import json
import os

import pytest

from batchlint import __version__

from conftest import (
    DS_MISMATCH,
    HF_YAML,
    TITAN_INDIVISIBLE,
    TRL_LINE,
    TRL_PACKED_GROUPED,
    XTUNER_CLEAN,
    XTUNER_SP,
    XTUNER_SP_LINE,
    codes,
    findings,
    run,
    run_module,
    write,
)

# --- exit codes ------------------------------------------------------------------


def test_clean_config_exits_0(workdir):
    write(workdir, "sft.py", XTUNER_CLEAN)
    result = run("sft.py")
    assert result.exit_code == 0, result.output
    assert findings(result.stdout) == []
    assert result.stdout.strip() == "All checks passed (1 training config in 1 file)."


def test_finding_exits_1_and_names_file_line_and_code(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    result = run("sft.py")
    assert result.exit_code == 1
    [finding] = findings(result.stdout)
    assert (finding["path"], int(finding["line"]), finding["code"], finding["severity"]) == (
        "sft.py", XTUNER_SP_LINE, "BL101", "warning",
    )
    assert finding["message"] == "global batch 16 x W/4 at sp = 4, was 64 x W at sp = 1"
    assert result.stderr == ""


def test_exit_zero_turns_findings_into_0_but_still_prints_them(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    result = run("--exit-zero", "sft.py")
    assert result.exit_code == 0
    assert codes(result.stdout) == ["BL101"]


def test_check_subcommand_is_the_default(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    explicit, implicit = run("check", "sft.py"), run("sft.py")
    assert explicit.exit_code == implicit.exit_code == 1
    assert explicit.stdout == implicit.stdout


def test_no_paths_lints_the_working_directory(workdir):
    write(workdir, "configs/sft.py", XTUNER_SP)
    write(workdir, "configs/ok.py", XTUNER_CLEAN)
    result = run()
    assert result.exit_code == 1
    assert [(f["path"], f["code"]) for f in findings(result.stdout)] == [("configs/sft.py", "BL101")]
    assert "in 2 training configs in 2 files" in result.stdout


@pytest.mark.parametrize(
    "args, complaint",
    [
        (["--bogus"], "No such option"),
        (["-w", "0"], "0 is not in the range x>=1"),
        (["--world-size", "-3"], "-3 is not in the range x>=1"),
        (["-w", "eight"], "'eight' is not a valid integer"),
        (["--global-batch", "0"], "0 is not in the range x>=1"),
        (["--format", "xml"], "'xml' is not one of"),
        (["--select", "XX1"], "'XX1' is not a rule code or prefix"),
        (["--select", "BL1,E501"], "'E501' is not a rule code or prefix"),
        (["--ignore", "BL1234"], "'BL1234' is not a rule code or prefix"),
        (["--config", "."], "is a directory"),
        (["--config", "missing.toml"], "config file not found: missing.toml"),
    ],
)
def test_usage_errors_exit_2_without_linting(workdir, args, complaint):
    write(workdir, "sft.py", XTUNER_SP)
    result = run(*args, "sft.py")
    assert result.exit_code == 2
    assert complaint in result.stderr
    assert findings(result.stdout) == [], "nothing is linted after a usage error"


def test_missing_path_exits_2_with_one_line(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    result = run("sft.py", "nope/")
    assert result.exit_code == 2
    assert result.stderr == "batchlint: error: no such file or directory: nope/\n"


def _unreadable_run(workdir):
    write(workdir, "a_ok.py", XTUNER_SP)
    secret = write(workdir, "b_secret.py", XTUNER_SP)
    write(workdir, "c_ok.toml", TITAN_INDIVISIBLE)
    return secret


def _assert_unreadable_reported(result, reason):
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"batchlint: error: cannot read b_secret.py: {reason}"]
    # The others are still linted and reported.
    assert [(f["path"], f["code"]) for f in findings(result.stdout)] == [("a_ok.py", "BL101"), ("c_ok.toml", "BL103")]
    assert "in 3 files" in result.stdout


def test_unreadable_file_exits_2_and_the_rest_is_still_linted(workdir):
    secret = _unreadable_run(workdir)
    os.chmod(secret, 0)
    try:
        if os.access(secret, os.R_OK):
            pytest.skip("running as a user (root) who can read a chmod 000 file")
        result = run(".")
    finally:
        os.chmod(secret, 0o644)
    _assert_unreadable_reported(result, "Permission denied")


def test_unreadable_file_even_as_root(workdir, monkeypatch):
    """The same path, with the permission error simulated so it runs as root too."""
    secret = os.path.abspath(_unreadable_run(workdir))
    real_open = os.open

    def guarded_open(file, *args, **kwargs):
        if isinstance(file, str) and os.path.abspath(file) == secret:
            raise PermissionError(13, "Permission denied", file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)
    result = run(".")
    _assert_unreadable_reported(result, "Permission denied")


def test_unreadable_file_wins_over_exit_zero(workdir):
    """--exit-zero forgives findings, not a file named that could not be checked."""
    write(workdir, "ok.py", XTUNER_SP)
    os.symlink("gone.py", os.path.join(workdir, "dangling.py"))
    result = run("--exit-zero", "ok.py", "dangling.py")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["batchlint: error: cannot read dangling.py: No such file or directory"]
    assert codes(result.stdout) == ["BL101"]


def test_a_dangling_link_met_walking_does_not_fail_the_run(workdir):
    """A link to a folder that is not checked out: a notice, and the findings decide the exit code."""
    write(workdir, "ok.py", XTUNER_SP)
    os.symlink("not-checked-out", os.path.join(workdir, "third_party"))
    result = run(".")
    assert result.exit_code == 1 and codes(result.stdout) == ["BL101"]
    assert "batchlint: notice: skipped third_party: a link to nothing" in result.stderr


# --- selecting rules -------------------------------------------------------------


@pytest.fixture
def mixed(workdir):
    """One finding per config: BL101 (xtuner), BL102 (DeepSpeed, needs W=8), BL103 (titan), BL301 (trl)."""
    write(workdir, "sft.py", XTUNER_SP)
    write(workdir, "ds.json", DS_MISMATCH)
    write(workdir, "titan.toml", TITAN_INDIVISIBLE)
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    return workdir


def test_everything_is_selected_by_default(mixed):
    assert codes(run("-w", "8", ".").stdout) == ["BL101", "BL102", "BL103", "BL301"]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--select", "BL101"], ["BL101"]),
        (["--select", "bl101"], ["BL101"]),
        (["--select", "BL1"], ["BL101", "BL102", "BL103"]),
        (["--select", "BL10"], ["BL101", "BL102", "BL103"]),
        (["--select", "BL3"], ["BL301"]),
        (["--select", "BL101,BL301"], ["BL101", "BL301"]),
        (["--select", "BL101", "--select", "BL103"], ["BL101", "BL103"]),
        (["--select", "ALL"], ["BL101", "BL102", "BL103", "BL301"]),
        (["--ignore", "BL101"], ["BL102", "BL103", "BL301"]),
        (["--ignore", "BL1"], ["BL301"]),
        (["--ignore", "BL102, BL3"], ["BL101", "BL103"]),
        (["--select", "BL1", "--ignore", "BL103"], ["BL101", "BL102"]),
        (["--ignore", "ALL"], []),
    ],
)
def test_select_and_ignore_by_code_and_prefix(mixed, args, expected):
    result = run("-w", "8", *args, ".")
    assert codes(result.stdout) == expected
    assert result.exit_code == (1 if expected else 0)


def test_ignored_findings_are_gone_from_json_too(mixed):
    result = run("-w", "8", "--format", "json", "--ignore", "BL1", ".")
    assert [d["code"] for d in json.loads(result.stdout)] == ["BL301"]


def test_world_size_option_reaches_the_arithmetic(workdir):
    write(workdir, "swift.yaml", HF_YAML)
    # 2 x 8 x W: W=4 gives 64 (met), W=8 gives 128 (not the 64 asked for).
    assert run("-w", "4", "--global-batch", "64", "swift.yaml").exit_code == 0
    result = run("-w", "8", "--global-batch", "64", "swift.yaml")
    assert result.exit_code == 1
    [finding] = findings(result.stdout)
    assert "the global batch is 128" in finding["message"]
    assert "not the 64 stated (from --global-batch)" in finding["message"]


# --- rule, --version, --help ------------------------------------------------------


def test_rule_prints_the_documentation():
    result = run("rule", "BL101")
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("# BL101 sp-unscaled-accumulation\n")
    assert "Severity: warning." in out and "xtuner" in out
    sections = ["## What it does", "## Why is this bad?", "## Example", "## Use instead"]
    positions = [out.index(s) for s in sections]
    assert positions == sorted(positions)
    assert "sequence_parallel_size" in out


def test_rule_accepts_lower_case_and_the_rule_name():
    by_code, by_name = run("rule", "bl101"), run("rule", "sp-unscaled-accumulation")
    assert by_code.exit_code == by_name.exit_code == 0
    assert by_code.stdout == by_name.stdout == run("rule", "BL101").stdout


def test_rule_documents_the_engine_codes():
    result = run("rule", "BL002")
    assert result.exit_code == 0
    assert result.stdout.startswith("# BL002 invalid-directive\n")


def test_unknown_rule_exits_2():
    result = run("rule", "NOPE")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["batchlint: error: unknown rule 'NOPE'; `batchlint rule --all` lists them"]


def test_rule_all_lists_every_code_once():
    from batchlint.rules import all_rules

    result = run("rule", "--all")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines()]
    assert listed == [r.code for r in all_rules()]
    assert "BL001" in listed and "BL101" in listed


def test_version():
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout == f"batchlint {__version__}\n"


def test_help_lists_the_options():
    result = run("check", "--help")
    assert result.exit_code == 0
    for option in ("--world-size", "--global-batch", "--format", "--select", "--ignore", "--config", "--force-exclude", "--exit-zero"):
        assert option in result.stdout


# --- as a subprocess ----------------------------------------------------------------


def test_subprocess_findings_exit_1(tmp_path):
    write(tmp_path, "configs/sft.py", XTUNER_SP)
    write(tmp_path, "configs/trl.yaml", TRL_PACKED_GROUPED)
    proc = run_module("configs", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert [(f["path"], int(f["line"]), f["code"]) for f in findings(proc.stdout)] == [
        ("configs/sft.py", XTUNER_SP_LINE, "BL101"),
        ("configs/trl.yaml", TRL_LINE, "BL301"),
    ]
    assert proc.stdout.splitlines()[-2:] == [
        "Found 2 problems (2 warnings) in 2 training configs in 2 files.",
        "[*] 1 fixable with `--fix`.",  # BL301's; this BL101 (a derivation) offers no edit
    ]
    assert "\033[" not in proc.stdout, "no colour when stdout is a pipe"


def test_subprocess_clean_exit_0(tmp_path):
    write(tmp_path, "sft.py", XTUNER_CLEAN)
    proc = run_module("sft.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All checks passed (1 training config in 1 file).\n", "")


def test_subprocess_usage_error_exit_2(tmp_path):
    write(tmp_path, "sft.py", XTUNER_SP)
    proc = run_module("-w", "0", "sft.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "0 is not in the range x>=1" in proc.stderr


def test_subprocess_version_and_rule(tmp_path):
    version = run_module("--version", cwd=tmp_path)
    assert (version.returncode, version.stdout) == (0, f"batchlint {__version__}\n")
    nope = run_module("rule", "NOPE", cwd=tmp_path)
    assert nope.returncode == 2 and "unknown rule 'NOPE'" in nope.stderr
