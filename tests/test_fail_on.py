"""The threshold: info findings are shown but do not fail a run unless asked (`--fail-on`, or `fail-on` in
the project config), as yamllint's strict mode and hadolint's failure threshold behave; pre-commit and the
Action take the exit code, so an unrelated edit beside an info passes."""

import pytest

from conftest import XTUNER_SP, codes, run, write

# sp 4 with a literal accumulation: BL105, an info (the literal may be written for sp 4 already).
XTUNER_INFO = XTUNER_SP.replace("accumulative_counts = 64 // sequence_parallel_size", "accumulative_counts = 16")


def _severities(stdout: str) -> list:
    return sorted({line.split("[", 2)[1].split("]")[0] for line in stdout.splitlines() if ": BL" in line})


@pytest.mark.parametrize("args, text, exit_code", [
    ((), XTUNER_INFO, 0),  # an info alone: shown, and the run passes
    (("--fail-on", "info"), XTUNER_INFO, 1),
    ((), XTUNER_SP, 1),  # BL101, a warning
    (("--fail-on", "error"), XTUNER_SP, 0),
    (("--fail-on", "warning"), XTUNER_SP, 1),
])
def test_the_threshold_decides_the_exit_code_not_what_is_shown(workdir, args, text, exit_code):
    write(workdir, "sft.py", text)
    result = run(*args, "sft.py")
    assert result.exit_code == exit_code
    assert codes(result.stdout), "every finding is shown, whatever the threshold"


def test_the_project_config_sets_it_and_the_command_line_wins(workdir):
    write(workdir, "sft.py", XTUNER_INFO)
    write(workdir, "batchlint.toml", 'fail-on = "info"\n')
    assert run("sft.py").exit_code == 1
    assert run("--fail-on", "warning", "sft.py").exit_code == 0


def test_a_bad_threshold_in_the_project_config_is_refused(workdir):
    write(workdir, "sft.py", XTUNER_INFO)
    write(workdir, "batchlint.toml", 'fail-on = "notice"\n')
    result = run("sft.py")
    assert result.exit_code == 2 and "fail-on must be one of error, warning, info" in result.stderr


def test_exit_zero_still_forgives_everything(workdir):
    write(workdir, "sft.py", XTUNER_SP)
    assert run("--exit-zero", "--fail-on", "info", "sft.py").exit_code == 0
