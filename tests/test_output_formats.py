"""The output formats CI tools read, each checked against its consumer's documented shape, with the
findings of the example configs (examples/) through the CLI:

- gitlab: GitLab Code Quality ("Code Quality report format" in GitLab's CI testing docs), validated
  against a JSON Schema written here from that page;
- rdjson: reviewdog's Diagnostic Format (its DiagnosticResult message, proto/rdf in reviewdog),
  validated against a JSON Schema written here from that definition;
- junit: parsed with xml.etree, checked for what CI test reports read;
- pylint, azure, grouped: exact lines.

The JSON output of the same run is the reference for paths, places, codes and messages.
"""

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from batchlint.report import FORMATS

from conftest import TRL_LINE, TRL_PACKED_GROUPED, run, write

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# GitLab's Code Quality report: a list of issues with `description`, `check_name`, `fingerprint`,
# `severity` (one of info, minor, major, critical, blocker) and `location`: `path` (relative) and
# the line, as `lines.begin` or `positions.begin.line` (an integer: GitLab ignores a report whose
# line is not one).
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "pattern": "^[^/]"},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1},
                                       "end": {"type": "integer", "minimum": 1}},
                    },
                    "positions": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "object", "required": ["line"]}},
                    },
                },
                "oneOf": [{"required": ["lines"]}, {"required": ["positions"]}],
            },
        },
    },
}

_POSITION = {
    "type": "object",
    "properties": {"line": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}
_RANGE = {"type": "object", "required": ["start"], "properties": {"start": _POSITION, "end": _POSITION},
          "additionalProperties": False}
# reviewdog's DiagnosticResult: `diagnostics`, and optional `source` (name, url) and `severity`; a
# Diagnostic has `message`, `location` (`path`, optional `range` of 1-based `start`/`end` positions,
# the end exclusive, columns in UTF-8 bytes), optional `severity`, `source`, `code` (`value`, `url`),
# `suggestions` (`range`, `text`) and `original_output`.
_SEVERITY = {"enum": ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"]}
_SOURCE = {"type": "object", "required": ["name"], "additionalProperties": False,
           "properties": {"name": {"type": "string"}, "url": {"type": "string"}}}
RDJSON_SCHEMA = {
    "type": "object",
    "required": ["diagnostics"],
    "additionalProperties": False,
    "properties": {
        "source": _SOURCE,
        "severity": _SEVERITY,
        "diagnostics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["message", "location"],
                "additionalProperties": False,
                "properties": {
                    "message": {"type": "string"},
                    "location": {"type": "object", "required": ["path"], "additionalProperties": False,
                                 "properties": {"path": {"type": "string"}, "range": _RANGE}},
                    "severity": _SEVERITY,
                    "source": _SOURCE,
                    "code": {"type": "object", "required": ["value"], "additionalProperties": False,
                             "properties": {"value": {"type": "string"}, "url": {"type": "string"}}},
                    "suggestions": {"type": "array", "items": {
                        "type": "object", "required": ["range", "text"], "additionalProperties": False,
                        "properties": {"range": _RANGE, "text": {"type": "string"}}}},
                    "original_output": {"type": "string"},
                },
            },
        },
    },
}


@pytest.fixture
def examples(monkeypatch):
    """The repository as the working directory, free of CI variables that change paths."""
    for name in ("CI_PROJECT_DIR", "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(REPO)


def lint(fmt, *args, env=None):
    result = run("check", "--output-format", fmt, *args, env=env)
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def reference(*args):
    """The JSON findings of the same run."""
    return json.loads(lint("json", *args))


def text_of(finding):
    return f"{finding['message']}; fix: {finding['fix']['message']}" if finding["fix"] else finding["message"]


def test_every_format_is_accepted_from_the_environment(examples):
    for fmt in ("gitlab", "junit", "pylint", "rdjson", "azure", "grouped"):
        assert fmt in FORMATS
        assert run("check", "examples/deepspeed", env={"BATCHLINT_OUTPUT_FORMAT": fmt}).stdout == \
            lint(fmt, "examples/deepspeed"), fmt
    assert run("check", "--output-format", "checkstyle", "examples/deepspeed").exit_code == 2


# --- gitlab ---------------------------------------------------------------------------------


def test_gitlab_validates_and_matches_the_findings(examples):
    jsonschema = pytest.importorskip("jsonschema")
    issues = json.loads(lint("gitlab", "examples"))
    jsonschema.validate(issues, GITLAB_SCHEMA)
    found = reference("examples")
    assert len(issues) == len(found) > 10
    severity = {"error": "major", "warning": "minor", "info": "info"}
    for issue, finding in zip(issues, found):
        assert issue["check_name"] == finding["code"]
        assert issue["description"] == f"{finding['code']}: {text_of(finding)}"
        assert issue["severity"] == severity[finding["severity"]]
        assert issue["location"]["path"] == finding["path"]
        assert issue["location"]["lines"] == {"begin": finding["line"], "end": finding["end_line"]}
    assert {i["severity"] for i in issues} == {"major", "minor", "info"}
    prints = [i["fingerprint"] for i in issues]
    assert len(set(prints)) == len(prints) and all(re.fullmatch("[0-9a-f]{32}", p) for p in prints)


def test_gitlab_fingerprints_are_stable_and_unique(workdir):
    """Lines inserted above keep a finding's fingerprint; two findings on lines of the same text
    (one rule, one launch line written twice) get two."""
    write(workdir, "sft.yaml", TRL_PACKED_GROUPED)
    before = json.loads(lint("gitlab", "sft.yaml"))
    write(workdir, "sft.yaml", "# moved down\n\n" + TRL_PACKED_GROUPED)
    after = json.loads(lint("gitlab", "sft.yaml"))
    assert after[0]["location"]["lines"]["begin"] == before[0]["location"]["lines"]["begin"] + 2
    assert after[0]["fingerprint"] == before[0]["fingerprint"]

    from batchlint.diagnostic import Diagnostic
    from batchlint.document import Span
    from batchlint.report import Summary, render

    write(workdir, "run.sh", "torchrun --nproc_per_node 3 train.py\ntorchrun --nproc_per_node 3 train.py\n")
    twice = [Diagnostic("BL202", "layout-world-mismatch", "error", "W (3) ...", "run.sh", Span.point(line, 27))
             for line in (1, 2)]
    prints = [i["fingerprint"] for i in json.loads(render("gitlab", twice, Summary(files=1, configs=1)))]
    assert len(set(prints)) == 2
    assert prints == [i["fingerprint"] for i in json.loads(render("gitlab", twice, Summary(files=1, configs=1)))]


def test_gitlab_paths_are_relative_to_the_project_dir(workdir, monkeypatch):
    write(workdir, "configs/sft.yaml", TRL_PACKED_GROUPED)
    monkeypatch.chdir(workdir / "configs")
    monkeypatch.setenv("CI_PROJECT_DIR", str(workdir))
    [issue] = json.loads(lint("gitlab", "sft.yaml"))
    assert issue["location"]["path"] == "configs/sft.yaml"


def test_gitlab_clean_is_an_empty_list(examples):
    assert json.loads(lint("gitlab", "examples/deepspeed/ds_zero2_fixed.json")) == []


# --- rdjson ---------------------------------------------------------------------------------


def test_rdjson_validates_and_matches_the_findings(examples):
    jsonschema = pytest.importorskip("jsonschema")
    result = json.loads(lint("rdjson", "examples"))
    jsonschema.validate(result, RDJSON_SCHEMA)
    assert result["source"]["name"] == "batchlint"
    found = reference("examples")
    assert len(result["diagnostics"]) == len(found) > 10
    severity = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}
    for diagnostic, finding in zip(result["diagnostics"], found):
        assert diagnostic["message"] == text_of(finding)
        assert diagnostic["severity"] == severity[finding["severity"]]
        assert diagnostic["code"]["value"] == finding["code"]
        assert diagnostic["location"] == {"path": finding["path"], "range": {
            "start": {"line": finding["line"], "column": finding["column"]},  # the examples are ASCII
            "end": {"line": finding["end_line"], "column": finding["end_column"]}}}


def test_rdjson_suggestions_are_the_fixes_fix_applies(examples):
    """BL301's safe fix in the axolotl example is a suggestion; BL101's unsafe one in the XTuner
    example only with --unsafe-fixes."""
    paths = ["examples/axolotl/llama3_qlora.yaml", "examples/xtuner/internlm2_7b_sp4_sft.py"]
    found = {f["code"]: f for f in reference(*paths)}
    safe = {d["code"]["value"]: d for d in json.loads(lint("rdjson", *paths))["diagnostics"]}
    [edit] = found["BL301"]["fix"]["edits"]
    assert safe["BL301"]["suggestions"] == [{
        "range": {"start": {"line": 7, "column": 18}, "end": {"line": 7, "column": 22}}, "text": "false"}]
    assert (edit["line"], edit["column"], edit["end_column"], edit["content"]) == (7, 18, 22, "false")
    assert "suggestions" not in safe["BL101"]
    unsafe = {d["code"]["value"]: d for d in json.loads(lint("rdjson", "--unsafe-fixes", *paths))["diagnostics"]}
    [insert] = unsafe["BL101"]["suggestions"]
    assert insert["range"]["start"] == insert["range"]["end"] == {"line": 20, "column": 42}
    assert insert["text"] == "\naccumulative_counts *= sequence_parallel_size"


def test_rdjson_columns_are_utf8_bytes(workdir):
    """reviewdog counts columns in UTF-8 bytes: `é` before the value moves it one byte more than
    one character."""
    line = '{"_comment": "réglé à 8 GPU", "train_batch_size": 100, "train_micro_batch_size_per_gpu": 4, ' \
           '"gradient_accumulation_steps": 4}\n'
    write(workdir, "ds.json", line)
    [finding] = reference("ds.json")
    [diagnostic] = json.loads(lint("rdjson", "ds.json"))["diagnostics"]
    column = line.index("100") + 1
    assert (finding["code"], finding["column"]) == ("BL102", column)
    assert diagnostic["location"]["range"] == {"start": {"line": 1, "column": column + 3},
                                               "end": {"line": 1, "column": column + 6}}


# --- junit ----------------------------------------------------------------------------------


def test_junit_is_what_ci_test_reports_read(examples):
    root = ET.fromstring(lint("junit", "examples").encode("utf-8"))
    found = reference("examples")
    assert root.tag == "testsuites" and root.get("name") == "batchlint"
    assert int(root.get("tests")) == int(root.get("failures")) == len(found) and root.get("errors") == "0"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == list(dict.fromkeys(f["path"] for f in found))
    cases = []
    for suite in suites:
        mine = suite.findall("testcase")
        assert int(suite.get("tests")) == int(suite.get("failures")) == len(mine) > 0
        cases.extend((suite.get("name"), case) for case in mine)
    assert len(cases) == len(found)
    names = set()
    for (path, case), finding in zip(cases, found):
        assert path == finding["path"] == case.get("file")
        assert case.get("classname") == finding["path"].rsplit(".", 1)[0]
        assert (int(case.get("line")), int(case.get("column"))) == (finding["line"], finding["column"])
        assert case.get("name") == f"{finding['code']} {finding['name']} at {finding['line']}:{finding['column']}"
        names.add((case.get("classname"), case.get("name")))
        [failure] = case.findall("failure")
        assert failure.get("message") == finding["message"] and failure.get("type") == finding["severity"]
        first, *notes = failure.text.split("\n")
        assert first == f"line {finding['line']}, col {finding['column']}, {finding['message']}"
        assert notes == [f"{r['path']}:{r['line']}:{r['column']}: note: {r['message']}" for r in finding["related"]] \
            + [f"note: {note}" for note in finding["notes"]] + [f"help: {finding['fix']['message']}"]
    assert len(names) == len(cases), "each test case is its own"


def test_junit_clean_run_is_one_passing_case(examples):
    root = ET.fromstring(lint("junit", "examples/deepspeed/ds_zero2_fixed.json").encode("utf-8"))
    [suite] = root.findall("testsuite")
    [case] = suite.findall("testcase")
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    assert case.findall("failure") == [] and case.findall("error") == []


def test_junit_escapes_what_xml_reserves(workdir):
    write(workdir, "a&b<c>.yaml", TRL_PACKED_GROUPED)
    root = ET.fromstring(lint("junit", ".").encode("utf-8"))
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "a&b<c>.yaml" and suite.find("testcase").get("file") == "a&b<c>.yaml"


# --- pylint, azure, grouped: exact lines ------------------------------------------------------


def test_pylint_lines(examples):
    paths = ["examples/deepspeed", "examples/axolotl"]
    lines = lint("pylint", *paths).splitlines()
    assert lines == [f"{f['path']}:{f['line']}: [{f['code']}] {text_of(f)}" for f in reference(*paths)]
    assert lines[1].startswith("examples/deepspeed/ds_zero2.json:2: [BL102] train_batch_size 100 is not a "
                               "multiple of 16 (micro 4 x accumulation 4)")
    assert lines[0].startswith("examples/axolotl/llama3_qlora.yaml:7: [BL301] group_by_length has nothing to group")
    assert lint("pylint", "examples/deepspeed/ds_zero2_fixed.json") == ""


def test_azure_lines(examples):
    paths = ["examples/deepspeed", "examples/axolotl", "examples/verl/grpo_batches.yaml"]
    lines = lint("azure", *paths).splitlines()
    kind = {"error": "error", "warning": "warning", "info": "warning"}  # Azure has no third type
    assert lines == [f"##vso[task.logissue type={kind[f['severity']]};sourcepath={f['path']};linenumber={f['line']};"
                     f"columnnumber={f['column']};code={f['code']};]{text_of(f)}" for f in reference(*paths)]
    assert lines[1].startswith("##vso[task.logissue type=error;sourcepath=examples/deepspeed/ds_zero2.json;"
                               "linenumber=2;columnnumber=23;code=BL102;]train_batch_size 100 is not a multiple")
    assert lines[2].startswith("##vso[task.logissue type=warning;sourcepath=examples/verl/grpo_batches.yaml;"
                               "linenumber=6;columnnumber=9;code=BL141;]")  # an info


def test_azure_escapes_properties(workdir):
    write(workdir, "a;b].yaml", TRL_PACKED_GROUPED)
    [line] = lint("azure", ".").splitlines()
    assert line.startswith(f"##vso[task.logissue type=warning;sourcepath=a%3Bb%5D.yaml;linenumber={TRL_LINE};")


def test_grouped_lines(examples):
    out = lint("grouped", "examples/nanotron/config_llama_pp.yaml", "examples/deepspeed/ds_zero2.json")
    found = reference("examples/nanotron/config_llama_pp.yaml", "examples/deepspeed/ds_zero2.json")
    notes = [[f"      {r['path']}:{r['line']}:{r['column']}: note: {r['message']}" for r in f["related"]]
             + [f"      note: {note}" for note in f["notes"]] + [f"      help: {f['fix']['message']}"] for f in found]
    ds, bl202, bl113 = found
    assert out.splitlines() == [
        "examples/deepspeed/ds_zero2.json:",
        f"  2:23 BL102 [error] {ds['message']}",
        *notes[0],
        "",
        "examples/nanotron/config_llama_pp.yaml:",
        f"  26:7  BL202 [error] {bl202['message']}",  # columns padded to line up in the file
        *notes[1],
        f"  32:35 BL113 [error] {bl113['message']}",
        *notes[2],
        "",
        "Found 3 problems (3 errors) in 2 training configs in 2 files.",
    ]
    assert notes[0][:2] == ["      examples/deepspeed/ds_zero2.json:3:37: note: train_micro_batch_size_per_gpu = 4",
                            "      examples/deepspeed/ds_zero2.json:4:34: note: gradient_accumulation_steps = 4"]


def test_grouped_marks_fixes_and_quiet_drops_the_summary(examples):
    out = lint("grouped", "examples/axolotl").splitlines()
    assert out[:2] == ["examples/axolotl/llama3_qlora.yaml:",
                       "  7:18 BL301 [*] [warning] group_by_length has nothing to group: sample_packing (line 6) "
                       "packs sequences to full length"]
    assert out[-1] == "[*] 1 fixable with `--fix`."
    assert lint("grouped", "-q", "examples/axolotl").splitlines()[-1] == ""
    assert lint("grouped", "examples/deepspeed/ds_zero2_fixed.json") == "All checks passed (1 training config in 1 file).\n"


def test_line_formats_keep_control_characters_out():
    """A config's text in a message never brings a terminal escape or a line break into a line
    format, nor a character XML cannot hold into JUnit."""
    from batchlint.diagnostic import Diagnostic
    from batchlint.document import Span
    from batchlint.report import Summary, render

    found = [Diagnostic("BL102", "global-batch-mismatch", "error", "key `a\x1b[31mb\nc\ufffe` (3)", "x.yaml",
                        Span(2, 5, 2, 6), "deepspeed", "set it to 4")]
    summary = Summary(files=1, configs=1)
    assert render("pylint", found, summary) == "x.yaml:2: [BL102] key `a[31mb c\ufffe` (3); fix: set it to 4\n"
    assert render("azure", found, summary) == ("##vso[task.logissue type=error;sourcepath=x.yaml;linenumber=2;"
                                               "columnnumber=5;code=BL102;]key `a[31mb c\ufffe` (3); fix: set it to 4\n")
    assert render("grouped", found, summary).splitlines()[1:3] == ["  2:5 BL102 [error] key `a[31mb c\ufffe` (3)",
                                                                   "      help: set it to 4"]
    failure = ET.fromstring(render("junit", found, summary).encode("utf-8")).find("testsuite/testcase/failure")
    assert failure.get("message") == "key `a[31mb c\ufffd` (3)"


# -- a finding's detail: one short message, its notes and its help below it ------------------------

NANOTRON_1F1B = """\
general:
  project: pipeline
parallelism:
  dp: 2
  pp: 4
  tp: 1
  pp_engine: 1f1b
tokens:
  sequence_length: 2048
  micro_batch_size: 4
  batch_accumulation_per_replica: 1
  train_steps: 100
"""


@pytest.fixture
def detailed(workdir):
    write(workdir, "nanotron.yaml", NANOTRON_1F1B)
    [finding] = json.loads(run("--output-format", "json", "--select", "BL113", "nanotron.yaml").stdout)
    assert finding["notes"] and finding["fix"]["message"]
    return finding


def test_text_prints_the_message_then_the_places_the_notes_and_the_help(detailed):
    lines = run("--select", "BL113", "nanotron.yaml").stdout.splitlines()
    assert lines[0] == f"nanotron.yaml:11:35: BL113 [error] {detailed['message']}"
    located = [f"    nanotron.yaml:{r['line']}:{r['column']}: note: {r['message']}" for r in detailed["related"]]
    notes = [f"    note: {note}" for note in detailed["notes"]]
    assert lines[1:-1] == located + notes + [f"    help: {detailed['fix']['message']}"]
    assert lines[-1].startswith("Found 1 problem")


def test_concise_is_one_line_a_finding(detailed):
    lines = run("--output-format", "concise", "--select", "BL113", "nanotron.yaml").stdout.splitlines()
    assert lines == [f"nanotron.yaml:11:35: BL113 [error] {detailed['message']}", lines[-1]]


def test_sarif_carries_the_notes_and_the_help_as_fields(detailed):
    [result] = json.loads(run("--output-format", "sarif", "--select", "BL113", "nanotron.yaml").stdout)["runs"][0][
        "results"]
    assert result["message"]["text"] == detailed["message"]
    assert result["properties"] == {"notes": detailed["notes"], "help": detailed["fix"]["message"]}


def test_github_annotations_carry_the_notes_and_the_help(detailed):
    [line] = [line for line in run("--output-format", "github", "--select", "BL113", "nanotron.yaml").stdout.splitlines()
              if line.startswith("::error")]
    message = line.split("::", 2)[2]
    assert message.split("%0A") == [f"nanotron.yaml:11:35 BL113 {detailed['message']}"] + \
        [f"note: {note}" for note in detailed["notes"]] + [f"help: {detailed['fix']['message']}"]
