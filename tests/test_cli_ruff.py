"""ruff's spelling of the command line: the flags a ruff user types, each with its real output.

ruff 0.17's names: --output-format (concise, full, json, json-lines, github, sarif), -o/--output-file,
-e/--exit-zero, --extend-select, --exclude/--extend-exclude, -q, -s, --show-files, --show-settings,
--show-fixes, --color, `-` for standard input, --statistics in every format, --fix on standard input
printing the fixed buffer, --unsafe-fixes, and the nearest project config of each file."""

import json
import os

import pytest

from batchlint.cli import main

from conftest import (
    HF_YAML,
    TRL_LINE,
    TRL_PACKED_GROUPED,
    XTUNER_CLEAN,
    XTUNER_SP,
    XTUNER_SP_LINE,
    cli_runner,
    codes,
    findings,
    run,
    write,
)

ANSI = "\033["
TRL_FIXED = TRL_PACKED_GROUPED.replace("group_by_length: true", "group_by_length: false")
# BL101 with an edit: a literal its comment says is for sp=1 (the fix is unsafe).
XTUNER_LITERAL = XTUNER_SP.replace("accumulative_counts = 64 // sequence_parallel_size",
                                   "accumulative_counts = 64  # tuned at sp=1")


def piped(*args, input):
    result = cli_runner().invoke(main, [str(a) for a in args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture
def two(workdir):
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    write(workdir, "sft.py", XTUNER_SP)
    return workdir


# --- output format and file -----------------------------------------------------------------


def test_output_format_is_format(two):
    for name in ("--output-format", "--format"):
        assert [d["code"] for d in json.loads(run(name, "json", ".").stdout)] == ["BL101", "BL301"]
    # concise is the default's finding lines alone, without their notes and help
    text = [line for line in run(".").stdout.splitlines() if not line.startswith(" ")]
    assert run("--output-format", "concise", ".").stdout.splitlines() == text
    full = run("--output-format", "full", "trl.yaml").stdout.splitlines()
    assert full[1:3] == [f"{TRL_LINE:>5} | group_by_length: true", "      |                  ^^^^"]
    assert run("--output-format", "checkstyle", ".").exit_code == 2, "a format batchlint does not write is a usage error"


def test_output_format_from_the_environment(two):
    result = run(".", env={"BATCHLINT_OUTPUT_FORMAT": "json"})
    assert [d["code"] for d in json.loads(result.stdout)] == ["BL101", "BL301"]


def test_json_lines_one_object_per_line(two):
    lines = run("--output-format", "json-lines", ".").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["BL101", "BL301"]


def test_output_file_short_and_long(two):
    for flag in ("-o", "--output-file", "--output"):
        result = run(flag, "out.json", "--output-format", "json", ".")
        assert result.exit_code == 1 and result.stdout == ""
        assert [d["code"] for d in json.load(open("out.json"))] == ["BL101", "BL301"]
        os.remove("out.json")


def test_exit_zero_short(two):
    result = run("-e", ".")
    assert result.exit_code == 0 and codes(result.stdout) == ["BL101", "BL301"]


# --- selection ----------------------------------------------------------------------------


def test_extend_select_adds_to_the_configs_select(two):
    write(two, "pyproject.toml", '[tool.batchlint]\nselect = ["BL101"]\n')
    assert codes(run(".").stdout) == ["BL101"]
    assert codes(run("--extend-select", "BL301", ".").stdout) == ["BL101", "BL301"]
    assert codes(run("--select", "BL301", ".").stdout) == ["BL301"], "--select still replaces"
    result = run("--extend-select", "BL999", ".")
    assert result.exit_code == 2 and "extend-select: 'BL999' names no rule" in result.stderr


def test_exclude_replaces_and_extend_exclude_adds(two):
    write(two, "legacy/old.yaml", TRL_PACKED_GROUPED)
    write(two, "pyproject.toml", '[tool.batchlint]\nexclude = ["legacy"]\n')
    paths = lambda result: sorted({f["path"] for f in findings(result.stdout)})  # noqa: E731
    assert paths(run(".")) == ["sft.py", "trl.yaml"]
    assert paths(run("--exclude", "*.py", ".")) == ["legacy/old.yaml", "trl.yaml"], "replaces the config's"
    assert paths(run("--extend-exclude", "*.py", ".")) == ["trl.yaml"], "adds to the config's"
    assert paths(run("--extend-exclude", "sft.py,trl.yaml", ".")) == []


def test_exclude_globs_are_relative_to_the_working_directory(two, monkeypatch):
    write(two, "configs/a/x.yaml", TRL_PACKED_GROUPED)
    write(two, "configs/b/x.yaml", TRL_PACKED_GROUPED)
    write(two, "configs/pyproject.toml", "[tool.batchlint]\n")  # the files' root is configs/
    result = run("--exclude", "configs/a/*", "configs")
    assert sorted(f["path"] for f in findings(result.stdout)) == ["configs/b/x.yaml"]
    monkeypatch.chdir(two / "configs")
    result = run("--exclude", "a/*", ".")
    assert sorted(f["path"] for f in findings(result.stdout)) == ["b/x.yaml"]


# --- quiet, silent, colour ----------------------------------------------------------------


def test_quiet_prints_the_findings_only(two):
    write(two, "notes.yaml", "a: {{ b }}\n")
    result = run("-q", ".")
    assert result.exit_code == 1 and codes(result.stdout) == ["BL101", "BL301"]
    assert "Found" not in result.stdout and "fixable" not in result.stdout
    clean = two / "clean"
    write(clean, "sft.py", XTUNER_CLEAN)
    assert run("--quiet", "clean").stdout == ""


def test_silent_prints_nothing(two):
    for flag in ("-s", "--silent"):
        result = run(flag, ".")
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", "")
    assert run("-s", "missing.yaml").exit_code == 2


def test_color_always_never_and_force_color(two):
    assert ANSI in run("--color", "always", "trl.yaml").stdout
    assert ANSI not in run("--color", "never", "trl.yaml", env={"FORCE_COLOR": "1"}).stdout
    assert ANSI in run("trl.yaml", env={"FORCE_COLOR": "1"}).stdout, "auto: FORCE_COLOR forces it"
    assert ANSI not in run("trl.yaml", env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert ANSI not in run("trl.yaml").stdout, "auto: not a terminal"
    assert ANSI not in run("--color", "always", "--output-format", "json", "trl.yaml").stdout


# --- standard input -----------------------------------------------------------------------


def test_dash_reads_standard_input(workdir):
    result = piped("--stdin-filename", "sft.py", "-", input=XTUNER_SP)
    assert result.exit_code == 1 and [(f["path"], int(f["line"])) for f in findings(result.stdout)] == [("sft.py", XTUNER_SP_LINE)]
    result = piped("-", input=XTUNER_SP)  # as ruff's `-`: the content says how to read it
    assert result.exit_code == 1 and [(f["path"], int(f["line"])) for f in findings(result.stdout)] == [("stdin.py", XTUNER_SP_LINE)]
    assert piped("-", "other.py", "--stdin-filename", "a.py", input="").exit_code == 2


def test_fix_on_standard_input_prints_the_fixed_buffer(workdir):
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)  # on disk: never touched
    result = piped("--fix", "--stdin-filename", "trl.yaml", "-", input=TRL_PACKED_GROUPED)
    assert result.exit_code == 0
    assert result.stdout == TRL_FIXED
    assert "1 fixed, 0 remaining" in result.stderr
    assert open("trl.yaml").read() == TRL_PACKED_GROUPED
    # What is left goes to standard error; the buffer still to standard output.
    left = piped("--fix", "--stdin-filename", "sft.py", input=XTUNER_SP)
    assert left.exit_code == 1 and left.stdout == XTUNER_SP and "BL101" in left.stderr
    # The unsafe fix only when asked.
    assert piped("--fix", "--stdin-filename", "sft.py", input=XTUNER_LITERAL).stdout == XTUNER_LITERAL
    fixed = piped("--fix", "--unsafe-fixes", "--stdin-filename", "sft.py", input=XTUNER_LITERAL)
    assert fixed.exit_code == 0 and "accumulative_counts *= sequence_parallel_size\n" in fixed.stdout


def test_diff_on_standard_input(workdir):
    result = piped("--diff", "--stdin-filename", "trl.yaml", input=TRL_PACKED_GROUPED)
    assert result.exit_code == 1
    assert "-group_by_length: true\n+group_by_length: false\n" in result.stdout


# --- show-files, show-settings, show-fixes ---------------------------------------------------


def test_show_files(two):
    write(two, "notes.json", '{"title": "not a config"}\n')
    write(two, "wandb/run-1/files/config.yaml", "a: 1\n")
    os.makedirs("wandb/run-1/files", exist_ok=True)
    result = run("--show-files", ".")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "notes.json: skipped: not a training config",
        "sft.py: xtuner",
        "trl.yaml: trl",
    ]
    rows = json.loads(run("--show-files", "--output-format", "json", ".").stdout)
    assert rows[1] == {"path": "sft.py", "framework": "xtuner", "skipped": None}
    skipped = run("--show-files", "wandb/run-1/files/config.yaml").stdout
    assert skipped == "wandb/run-1/files/config.yaml: skipped: written by a training run, not a config\n"


def test_show_settings_names_the_nearest_config(two):
    write(two, "sub/pyproject.toml", '[tool.batchlint]\nignore = ["BL301"]\nworld-size = 8\n')
    write(two, "sub/trl.yaml", TRL_PACKED_GROUPED)
    text = run("--show-settings", "sub/trl.yaml").stdout.splitlines()
    assert text[0] == "# Settings for sub/trl.yaml (config: sub/pyproject.toml)"
    assert 'ignore = ["BL301"]' in text and "world-size = 8" in text
    data = json.loads(run("--show-settings", "--output-format", "json", "--extend-select", "BL005", "trl.yaml").stdout)
    assert data["config"] is None and data["extend-select"] == ["BL005"]
    assert "BL005" in data["enabled"] and "BL301" in data["enabled"]
    assert run("--show-settings", ".", "sub").exit_code == 2


def test_show_fixes(workdir):
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    shown = run("--show-fixes", "trl.yaml").stdout.splitlines()
    assert shown[1] == '    fix: trl.yaml:4:18: replace up to 4:22 with "false"'
    result = run("--fix", "--show-fixes", "trl.yaml")
    assert result.stdout == ("Fixed 1 problem:\n- trl.yaml:\n    1 \u00d7 BL301 (packing-with-length-grouping)\n\n"
                             "Found 1 problem (1 fixed, 0 remaining) in 1 training config in 1 file.\n")


# --- statistics in every format -------------------------------------------------------------


def test_statistics_in_every_format(two):
    write(two, "b.yaml", TRL_PACKED_GROUPED)
    assert run("--statistics", ".").stdout.splitlines() == [
        "    2  BL301  [*] packing-with-length-grouping",
        "    1  BL101  [ ] sp-unscaled-accumulation",
        "    3  total",
    ]
    rows = json.loads(run("--statistics", "--output-format", "json", ".").stdout)
    assert rows == [
        {"code": "BL301", "name": "packing-with-length-grouping", "count": 2, "fixable": True, "fixable_count": 2},
        {"code": "BL101", "name": "sp-unscaled-accumulation", "count": 1, "fixable": False, "fixable_count": 0},
    ]
    lines = run("--statistics", "--output-format", "json-lines", ".").stdout.splitlines()
    assert [json.loads(line)["count"] for line in lines] == [2, 1]
    github = run("--statistics", "--output-format", "github", ".").stdout.splitlines()
    assert github == ["::notice title=batchlint BL301::2 x BL301 packing-with-length-grouping (fixable)",
                      "::notice title=batchlint BL101::1 x BL101 sp-unscaled-accumulation",
                      "::notice title=batchlint::3 findings in total"]
    sarif = json.loads(run("--statistics", "--output-format", "sarif", ".").stdout)["runs"][0]
    assert sarif["properties"]["statistics"] == rows and len(sarif["results"]) == 3


# --- fix metadata in text ----------------------------------------------------------------------


def test_fixable_findings_are_marked_and_counted(workdir):
    write(workdir, "trl.yaml", TRL_PACKED_GROUPED)
    write(workdir, "sft.py", XTUNER_LITERAL)
    lines = [line for line in run(".").stdout.splitlines() if not line.startswith(" ")]  # findings, not their notes
    assert lines[0].startswith("sft.py:6:23: BL101 [warning]"), "an unsafe fix is not marked without --unsafe-fixes"
    assert lines[1].startswith("trl.yaml:4:18: BL301 [*] [warning]")
    assert lines[-1] == "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`)."
    unsafe = run("--unsafe-fixes", ".").stdout.splitlines()
    assert unsafe[0].startswith("sft.py:6:23: BL101 [*] [warning]") and unsafe[-1] == "[*] 2 fixable with `--fix`."
    assert json.loads(run("--output-format", "json", "sft.py").stdout)[0]["fix"]["applicability"] == "unsafe"


# --- the nearest project config of each file ---------------------------------------------------


def test_each_sub_project_keeps_its_own_config(workdir):
    """A monorepo: the root has no [tool.batchlint]; each sub-project has its own."""
    write(workdir, "pyproject.toml", '[project]\nname = "mono"\n')
    write(workdir, "a/pyproject.toml", '[tool.batchlint]\nignore = ["BL301"]\n')
    write(workdir, "a/trl.yaml", TRL_PACKED_GROUPED)
    write(workdir, "b/batchlint.toml", 'select = ["BL301"]\nexclude = ["skipped"]\n')
    write(workdir, "b/trl.yaml", TRL_PACKED_GROUPED)
    write(workdir, "b/sft.py", XTUNER_SP)
    write(workdir, "b/skipped/trl.yaml", TRL_PACKED_GROUPED)
    write(workdir, "c/trl.yaml", TRL_PACKED_GROUPED)
    found = sorted((f["path"], f["code"]) for f in findings(run(".").stdout))
    assert found == [("b/trl.yaml", "BL301"), ("c/trl.yaml", "BL301")]
    # --config names one config for every file; the command line overrides each config.
    found = sorted((f["path"], f["code"]) for f in findings(run("--config", "a/pyproject.toml", ".").stdout))
    assert found == [("b/sft.py", "BL101")]
    assert codes(run("--extend-select", "BL101", "b").stdout) == ["BL101", "BL301"]


def test_a_broken_sub_project_config_is_exit_2(workdir):
    write(workdir, "a/pyproject.toml", "[tool.batchlint\n")
    write(workdir, "a/trl.yaml", TRL_PACKED_GROUPED)
    result = run(".")
    assert result.exit_code == 2 and "invalid TOML" in result.stderr


def test_hf_config_still_clean(workdir):
    write(workdir, "sft.yaml", HF_YAML)
    assert run("-q", "sft.yaml").stdout == ""


# --- JSON edits are the fix ---------------------------------------------------------------------


def _apply_json_edits(text: str, edits: list) -> str:
    """Apply JSON edits as a consumer would: 1-based line and column (characters), end exclusive."""
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    offset = lambda line, column: starts[line - 1] + column - 1  # noqa: E731
    for edit in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        start, end = offset(edit["line"], edit["column"]), offset(edit["end_line"], edit["end_column"])
        text = text[:start] + edit["content"] + text[end:]
    return text


def test_json_edits_applied_give_what_fix_writes(workdir):
    sources = {
        "trl.yaml": TRL_PACKED_GROUPED.replace("per_device_train_batch_size: 2",
                                               "per_device_train_batch_size: 2  # batchlint: disable=BL104,BL301"),
        "sft.py": XTUNER_LITERAL.replace("sampler=dict(type=sampler", "sampler=dict(type=DefaultSampler"),
        "notes.yaml": "packing: false  # batchlint: disable=BL301\nmodel_name_or_path: x\nper_device_train_batch_size: 2\n",
    }
    for name, text in sources.items():
        write(workdir, name, text)
    args = ("--extend-select", "BL005", "--unsafe-fixes")
    found = json.loads(run(*args, "--output-format", "json", ".").stdout)
    edits: dict = {}
    for finding in found:
        if finding["fix"] and finding["fix"]["applicability"] in ("safe", "unsafe"):
            for edit in finding["fix"]["edits"]:
                edits.setdefault(edit["path"], []).append(edit)
    assert sorted(edits) == ["notes.yaml", "sft.py", "trl.yaml"]
    expected = {name: _apply_json_edits(text, edits.get(name, [])) for name, text in sources.items()}
    result = run(*args, "--fix", ".")
    assert result.exit_code == 0, result.stdout
    assert {name: open(name).read() for name in sources} == expected


# --- rules: pages, JSON, columns -----------------------------------------------------------------

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_rule_prints_its_generated_page():
    from batchlint.rules import all_rules

    for rule in all_rules():
        with open(os.path.join(REPO, "docs", "rules", f"{rule.code}.md"), encoding="utf-8") as handle:
            assert run("rule", rule.code).stdout == handle.read(), rule.code


def test_rule_json_and_all_json():
    one = json.loads(run("rule", "BL301", "--output-format", "json").stdout)
    assert (one["code"], one["name"], one["severity"], one["page"]) == (
        "BL301", "packing-with-length-grouping", "warning", "docs/rules/BL301.md")
    assert one["explanation"].startswith("## What it does")
    every = json.loads(run("rule", "--all", "--output-format", "json").stdout)
    assert [r["code"] for r in every][:5] == ["BL001", "BL002", "BL003", "BL004", "BL005"]
    assert {r["code"] for r in every if r["unsafe_fix"]} == {"BL101"}


def test_rule_all_columns_line_up_whatever_the_name():
    lines = run("rule", "--all").stdout.splitlines()
    longest = max(len(line.split()[1]) for line in lines)
    assert longest > 32, "a name longer than the old fixed column"
    severity_columns = {line.index(line.split()[2], 7 + len(line.split()[1])) for line in lines}
    assert severity_columns == {7 + longest + 2}


def test_explain_reads_the_files_nearest_config(workdir):
    write(workdir, "sub/pyproject.toml", "[tool.batchlint]\nworld-size = 16\n")
    write(workdir, "sub/sft.yaml", HF_YAML)
    write(workdir, "other/sft.yaml", HF_YAML)
    text = run("explain", "--output-format", "json", "sub/sft.yaml").stdout
    assert "world size: from the project config (sub/pyproject.toml)" in text
    assert "from the project config" not in run("explain", "--format", "json", "other/sft.yaml").stdout
