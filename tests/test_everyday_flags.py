"""--statistics, --show-source, --stdin-filename, --baseline / --write-baseline."""

import json

from batchlint.cli import main

from conftest import TRL_LINE, TRL_PACKED_GROUPED, XTUNER_CLEAN, XTUNER_SP, XTUNER_SP_LINE, cli_runner, write


def run(*args, input=None):
    return cli_runner().invoke(main, [str(a) for a in args], input=input)


def test_statistics_counts_each_rule(workdir):
    write(workdir, "a.yaml", TRL_PACKED_GROUPED)
    write(workdir, "b.yaml", TRL_PACKED_GROUPED)
    write(workdir, "sft.py", XTUNER_SP)
    result = run("--statistics", ".")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "    2  BL301  [*] packing-with-length-grouping",
        "    1  BL101  [ ] sp-unscaled-accumulation",
        "    3  total",
    ]


def test_show_source_underlines_the_value(workdir):
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    lines = run("--show-source", "trl.yaml").stdout.splitlines()
    assert lines[1] == f"{TRL_LINE:>5} | group_by_length: true"
    assert lines[2] == "      |                  ^^^^"


def test_stdin_filename_lints_the_buffer_not_the_file(workdir):
    write(workdir, "sft.py", XTUNER_CLEAN)
    result = run("--stdin-filename", "sft.py", input=XTUNER_SP)  # the unsaved buffer has the slip
    assert result.exit_code == 1
    assert result.stdout.startswith(f"sft.py:{XTUNER_SP_LINE}:23: BL101 [warning]")
    clean = run("--stdin-filename", "sft.py", "--show-source", input=open("sft.py").read())
    assert clean.exit_code == 0


def test_baseline_reports_only_new_findings(workdir):
    write(workdir, "old.yaml", TRL_PACKED_GROUPED)
    recorded = run("--write-baseline", "baseline.json", ".")
    assert recorded.exit_code == 0
    assert len(json.load(open("baseline.json"))["findings"]) == 1
    assert run("--baseline", "baseline.json", ".").exit_code == 0
    # Lines above the old finding move it: still known.
    write(workdir, "old.yaml", "# moved down\n\n" + TRL_PACKED_GROUPED)
    assert run("--baseline", "baseline.json", ".").exit_code == 0
    # A new file with the same mistake is new.
    write(workdir, "new.yaml", TRL_PACKED_GROUPED)
    result = run("--baseline", "baseline.json", ".")
    assert result.exit_code == 1
    assert [line.split(":")[0] for line in result.stdout.splitlines() if not line.startswith(" ")][:-2] == ["new.yaml"]


def test_a_broken_baseline_is_a_usage_error(workdir):
    write(workdir, "baseline.json", "not json")
    result = run("--baseline", "baseline.json", ".")
    assert result.exit_code == 2
    assert "is not a batchlint baseline" in result.stderr
