"""Reporters (stable contracts other tools parse): text, json, github, and the
$GITHUB_STEP_SUMMARY table."""

import json
import os
import pty
import re
import subprocess
import sys

import pytest

from batchlint.diagnostic import Diagnostic
from batchlint.document import Span
from batchlint.report import Summary, render
from batchlint.report.github import annotation, escape_data, escape_property, markdown_table

from conftest import (
    DS_LINE,
    DS_MISMATCH,
    FINDING,
    TITAN_INDIVISIBLE,
    TITAN_LINE,
    TRL_LINE,
    TRL_PACKED_GROUPED,
    XTUNER_CLEAN,
    XTUNER_SP,
    XTUNER_SP_LINE,
    findings,
    run,
    run_module,
    write,
)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ANNOTATION = re.compile(r"^::(?P<level>error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)$")


SPAN = Span(2, 3, 2, 9)


def diag(code="BL102", severity="warning", message="m", path="a.yaml", span=SPAN, fix=None, name="global-batch-mismatch"):
    return Diagnostic(code, name, severity, message, path, span, "transformers", fix)


def props(line):
    match = ANNOTATION.match(line)
    assert match, line
    return match.group("level"), dict(p.split("=", 1) for p in match.group("props").split(",")), match.group("data")


@pytest.fixture
def project(workdir):
    """One finding of each severity, in files whose names sort warnings first."""
    write(workdir, "configs/a_trl.yaml", TRL_PACKED_GROUPED)  # BL301 warning
    write(workdir, "configs/b_sft.py", XTUNER_SP)  # BL101 warning
    write(workdir, "configs/c_ds.json", DS_MISMATCH)  # BL102 error with W = 8
    write(workdir, "configs/d_titan.toml", TITAN_INDIVISIBLE)  # BL103 error
    write(workdir, "configs/e_ok.py", XTUNER_CLEAN)
    return workdir


# --- text ---------------------------------------------------------------------------------


def test_text_lines_and_summary(project):
    result = run("-w", "8", "configs")
    lines = result.stdout.splitlines()
    parsed = findings(result.stdout)
    assert [(f["path"], int(f["line"]), f["code"], f["severity"]) for f in parsed] == [
        ("configs/a_trl.yaml", TRL_LINE, "BL301", "warning"),
        ("configs/b_sft.py", XTUNER_SP_LINE, "BL101", "warning"),
        ("configs/c_ds.json", DS_LINE, "BL102", "error"),
        ("configs/d_titan.toml", TITAN_LINE, "BL103", "error"),
    ]
    assert all(int(f["column"]) >= 1 for f in parsed)
    # Every other line is below a finding: a note at a place, a note, its help; then the summary and
    # what --fix would fix. Each finding ends with its help.
    for line in lines[:-2]:
        assert FINDING.match(line) or re.match(r"^    (configs/\S+:\d+:\d+: )?note: |^    help: ", line), line
    starts = [i for i, line in enumerate(lines) if FINDING.match(line)]
    assert all(lines[end - 1].startswith("    help: ") for end in starts[1:] + [len(lines) - 2])
    assert lines[-2:] == ["Found 4 problems (2 errors, 2 warnings) in 5 training configs in 5 files.",
                          "[*] 1 fixable with `--fix`."]
    assert "fix: " not in parsed[0]["message"], "the message alone on the finding's line"


def test_text_summary_singular_and_clean(workdir):
    write(workdir, "one.yaml", TRL_PACKED_GROUPED)
    assert run("one.yaml").stdout.splitlines()[-2:] == ["Found 1 problem (1 warning) in 1 training config in 1 file.",
                                                         "[*] 1 fixable with `--fix`."]
    write(workdir, "ok.py", XTUNER_CLEAN)
    assert run("ok.py").stdout == "All checks passed (1 training config in 1 file).\n"


def test_text_has_no_colour_when_not_a_terminal(project):
    result = run("-w", "8", "configs")
    assert findings(result.stdout)
    assert not ANSI.search(result.stdout)


def test_text_renderer_colours_only_when_asked():
    d = [diag(severity="error")]
    coloured = render("text", d, Summary(1, 1), color=True)
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured) == render("text", d, Summary(1, 1), color=False)


def _on_terminal(args, cwd, env):
    """Run `python -m batchlint ARGS` with stdout on a pseudo-terminal; returns its output."""
    master, slave = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    full_env.update(env)
    proc = subprocess.Popen([sys.executable, "-m", "batchlint", *args], cwd=cwd, env=full_env, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode()


def test_text_colour_on_a_terminal_unless_no_color(tmp_path):
    write(tmp_path, "sft.py", XTUNER_SP)
    code, out = _on_terminal(["sft.py"], tmp_path, {})
    assert code == 1
    assert ANSI.search(out), "a terminal gets colour"
    code, plain = _on_terminal(["sft.py"], tmp_path, {"NO_COLOR": "1"})
    assert code == 1 and "BL101 [warning]" in plain
    assert not ANSI.search(plain)


# --- json ---------------------------------------------------------------------------------

KEYS = {"code", "name", "severity", "message", "path", "line", "column", "end_line", "end_column", "framework"}


def test_json_objects(project):
    result = run("-w", "8", "--format", "json", "configs")
    assert result.exit_code == 1
    data = json.loads(result.stdout)  # the whole stdout is one JSON document: no summary line
    assert isinstance(data, list) and len(data) == 4
    for item in data:
        assert KEYS <= set(item), KEYS - set(item)
        assert isinstance(item["line"], int) and isinstance(item["column"], int)
        assert item["end_line"] >= item["line"]
        assert item["severity"] in ("error", "warning", "info")
    by_code = {item["code"]: item for item in data}
    assert set(by_code) == {"BL101", "BL102", "BL103", "BL301"}
    ds = by_code["BL102"]
    assert (ds["path"], ds["line"], ds["severity"], ds["name"], ds["framework"]) == (
        "configs/c_ds.json", DS_LINE, "error", "global-batch-mismatch", "deepspeed",
    )
    assert "128" in ds["message"] and "64" in ds["message"]
    assert by_code["BL101"]["framework"] == "xtuner"
    assert by_code["BL101"]["name"] == "sp-unscaled-accumulation"


def test_json_matches_text(project):
    text = findings(run("-w", "8", "configs").stdout)
    data = json.loads(run("-w", "8", "--format", "json", "configs").stdout)
    assert [(f["path"], int(f["line"]), int(f["column"]), f["code"]) for f in text] == [
        (d["path"], d["line"], d["column"], d["code"]) for d in data
    ]


def test_json_clean_is_an_empty_list(workdir):
    write(workdir, "ok.py", XTUNER_CLEAN)
    result = run("--format", "json", "ok.py")
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


def test_json_keeps_non_ascii(workdir):
    d = diag(message="größe", path="ü.yaml")
    out = render("json", [d], Summary(1, 1))
    assert json.loads(out)[0]["message"] == "größe" and "größe" in out


# --- github -------------------------------------------------------------------------------


def test_github_annotations(project):
    result = run("-w", "8", "--format", "github", "configs")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    parsed = [props(line) for line in lines]
    # Errors first, then warnings; by path within each.
    assert [(level, p["file"], p["title"]) for level, p, _ in parsed] == [
        ("error", "configs/c_ds.json", "BL102 global-batch-mismatch"),
        ("error", "configs/d_titan.toml", "BL103 global-batch-indivisible"),
        ("warning", "configs/a_trl.yaml", "BL301 packing-with-length-grouping"),
        ("warning", "configs/b_sft.py", "BL101 sp-unscaled-accumulation"),
    ]
    level, p, data = parsed[0]
    assert list(p) == ["file", "line", "col", "endLine", "endColumn", "title"]
    assert p["line"] == str(DS_LINE) and p["endLine"] == str(DS_LINE)
    assert int(p["endColumn"]) > int(p["col"])
    assert data.startswith(f"configs/c_ds.json:{DS_LINE}:{p['col']} BL102 ")


def test_github_matches_json_positions(project):
    data = json.loads(run("-w", "8", "--format", "json", "configs").stdout)
    github = run("-w", "8", "--format", "github", "configs").stdout
    annotations = {props(line)[1]["title"].split()[0]: props(line)[1] for line in github.splitlines()}
    for item in data:
        p = annotations[item["code"]]
        assert (p["line"], p["col"], p["endLine"], p["endColumn"]) == tuple(
            str(item[k]) for k in ("line", "column", "end_line", "end_column")
        )


def test_github_paths_are_relative_without_dot_slash(project):
    for arg in ("./configs", "configs/", os.path.join(str(project), "configs")):
        out = run("-w", "8", "--format", "github", arg).stdout
        files = {props(line)[1]["file"] for line in out.splitlines()}
        assert files == {"configs/a_trl.yaml", "configs/b_sft.py", "configs/c_ds.json", "configs/d_titan.toml"}, arg
        assert "./" not in out


def test_github_paths_are_relative_to_the_workspace(project, monkeypatch):
    """Run from a subfolder of the checkout: annotations still name repo paths."""
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project))
    monkeypatch.chdir(project / "configs")
    out = run("--format", "github", "a_trl.yaml").stdout
    level, p, data = props(out.splitlines()[0])
    assert p["file"] == "configs/a_trl.yaml"
    assert data.startswith(f"configs/a_trl.yaml:{TRL_LINE}:")


def test_github_escapes_data_and_properties(workdir):
    write(workdir, "odd,name:100%.yaml", TRL_PACKED_GROUPED)
    out = run("--format", "github", "odd,name:100%.yaml").stdout
    level, p, data = props(out.splitlines()[0])
    assert p["file"] == "odd%2Cname%3A100%25.yaml"
    assert data.startswith(f"odd,name:100%25.yaml:{TRL_LINE}:")


def test_escape_functions():
    assert escape_data("50% a\r\nb:c,d") == "50%25 a%0D%0Ab:c,d"
    assert escape_property("50% a\r\nb:c,d") == "50%25 a%0D%0Ab%3Ac%2Cd"
    # % first, so an escape is never escaped twice.
    assert escape_data("%0A") == "%250A"


def test_annotation_escapes_the_message_and_fix():
    line = annotation(diag(message="100% of it\nsecond line", fix="set x: 1, y: 2\r"))
    assert "\n" not in line and "\r" not in line
    level, p, data = props(line)
    assert data == "a.yaml:2:3 BL102 100%25 of it%0Asecond line%0Ahelp: set x: 1, y: 2%0D"


def test_annotation_of_a_multi_line_span_has_no_columns():
    level, p, data = props(annotation(diag(span=Span(3, 5, 7, 2))))
    assert p == {"file": "a.yaml", "line": "3", "endLine": "7", "title": "BL102 global-batch-mismatch"}
    level, p, data = props(annotation(diag(span=Span(3, 5, 3, 12))))
    assert (p["col"], p["endColumn"]) == ("5", "12")


def test_annotation_levels():
    assert annotation(diag(severity="error")).startswith("::error ")
    assert annotation(diag(severity="warning")).startswith("::warning ")
    assert annotation(diag(severity="info")).startswith("::notice ")


def test_github_clean_prints_nothing(workdir):
    write(workdir, "ok.py", XTUNER_CLEAN)
    result = run("--format", "github", "ok.py")
    assert (result.exit_code, result.stdout) == (0, "")


def test_step_summary_gets_the_full_table(workdir, monkeypatch):
    # 12 errors and 12 warnings: more than GitHub shows as annotations.
    for i in range(12):
        write(workdir, f"ds{i:02}.json", DS_MISMATCH)
        write(workdir, f"trl{i:02}.yaml", TRL_PACKED_GROUPED)
    summary = workdir / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run("-w", "8", "--format", "github", ".")
    assert len(result.stdout.splitlines()) == 24
    table = summary.read_text()
    assert table.startswith("earlier step\n"), "appended, not overwritten"
    assert "| Severity | Code | Location | Message |" in table
    rows = [line for line in table.splitlines() if line.startswith("| error") or line.startswith("| warning")]
    assert len(rows) == 24
    assert rows[0].startswith(f"| error | BL102 global-batch-mismatch | <code>ds00.json:{DS_LINE}:")
    assert rows[-1].startswith(f"| warning | BL301 packing-with-length-grouping | <code>trl11.yaml:{TRL_LINE}:")
    assert "24 findings" in table


def test_step_summary_untouched_without_the_variable(workdir):
    write(workdir, "ds.json", DS_MISMATCH)
    run("-w", "8", "--format", "github", "ds.json")
    assert sorted(os.listdir(workdir)) == ["ds.json"]


def test_step_summary_only_for_github_format(workdir, monkeypatch):
    write(workdir, "ds.json", DS_MISMATCH)
    summary = workdir / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run("-w", "8", "ds.json")
    run("-w", "8", "--format", "json", "ds.json")
    assert not summary.exists()


def test_markdown_table_escapes_pipes_and_counts():
    table = markdown_table([diag(message="a | b\nc")], Summary(3, 1))
    assert "a \\| b c" in table
    assert "1 finding in 1 training config\n" in table
    assert markdown_table([], Summary(2, 2)).startswith("### batchlint: 0 findings in 2 training configs")


def test_github_as_subprocess_with_step_summary(tmp_path):
    write(tmp_path, "configs/ds.json", DS_MISMATCH)
    write(tmp_path, "configs/trl.yaml", TRL_PACKED_GROUPED)
    summary = tmp_path / "summary.md"
    proc = run_module("--format", "github", "-w", "8", "./configs", cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1
    assert [line.split(" ", 1)[0] for line in proc.stdout.splitlines()] == ["::error", "::warning"]
    assert "file=configs/ds.json," in proc.stdout
    assert "<code>configs/trl.yaml:" in summary.read_text()
