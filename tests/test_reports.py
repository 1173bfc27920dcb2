"""The public regression set: real user reports, reconstructed (tests/reports/README.md).

Each report folder holds `report.yaml` (the issue's URL, what the reporter saw, the finding expected:
code, file and line), `bad/` (the files in the shapes the reporter used) and `clean/` (the same files
with the fix). The report is caught when a finding with the code is at that line, or names it in a
note; the clean twin must get no error and no warning. A miss not yet mended says why (`missed:`),
and is expected to fail until it is caught. A report out of scope says why: it is listed,
not judged.
"""

import json
import os
import shutil

import pytest
import yaml

from batchlint.cli import main

from conftest import cli_runner

REPORTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reports")


def _reports() -> list:
    found = []
    for folder, _dirs, names in os.walk(REPORTS):
        if "report.yaml" in names:
            found.append(os.path.relpath(folder, REPORTS))
    return sorted(found)


def _meta(name: str) -> dict:
    with open(os.path.join(REPORTS, name, "report.yaml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _lint(tmp_path, monkeypatch, name: str, side: str, meta: dict) -> list:
    """The findings of `batchlint check` run in a copy of the report's `side` folder, as the reporter's
    checkout: nothing of this repository is in view."""
    where = tmp_path / side
    shutil.copytree(os.path.join(REPORTS, name, side), where)
    monkeypatch.chdir(where)
    args = ["check", "--output-format", "json", "--exit-zero"]
    result = cli_runner().invoke(main, args + [str(a) for a in meta.get("args", [])] + meta.get("paths", ["."]))
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return json.loads(result.stdout or "[]")


def _at(finding: dict, path: str, line: int) -> bool:
    if finding["path"] == path and finding["line"] == line:
        return True
    return any(note["path"] == path and note["line"] == line for note in finding.get("related", ()))


ALL = _reports()


def test_the_set_holds_at_least_sixty_real_reports():
    assert len(ALL) >= 60, len(ALL)
    urls = [_meta(name)["url"] for name in ALL]
    assert all(url.startswith("https://github.com/") for url in urls)


@pytest.mark.parametrize("name", ALL)
def test_a_report_is_well_formed(name):
    meta = _meta(name)
    assert meta["url"] and meta["framework"] and meta["kind"] and meta["says"]
    assert bool(meta.get("expect")) != bool(meta.get("out_of_scope")), "either expected findings or a reason"
    assert os.path.isdir(os.path.join(REPORTS, name, "bad"))
    if meta.get("expect"):
        assert os.path.isdir(os.path.join(REPORTS, name, "clean"))


@pytest.mark.parametrize("name", [n for n in ALL if _meta(n).get("expect")])
def test_the_mistake_is_caught_on_its_line(name, tmp_path, monkeypatch):
    meta = _meta(name)
    findings = _lint(tmp_path, monkeypatch, name, "bad", meta)
    shown = [f"{f['path']}:{f['line']}: {f['code']} {f['message']}" for f in findings]
    missing = [want for want in meta["expect"]
               if not any(f["code"] == want["code"] and _at(f, want["path"], want["line"]) for f in findings)]
    if meta.get("missed"):  # a known miss: once it is caught, `missed` must go
        assert missing, "caught now: remove `missed` from report.yaml"
        pytest.xfail(meta["missed"])
    assert not missing, f"{missing} not among {shown}"


@pytest.mark.parametrize("name", [n for n in ALL if _meta(n).get("expect")])
def test_the_clean_twin_passes(name, tmp_path, monkeypatch):
    meta = _meta(name)
    findings = _lint(tmp_path, monkeypatch, name, "clean", meta)
    assert [f"{f['path']}:{f['line']}: {f['code']} {f['message']}" for f in findings
            if f["severity"] in ("error", "warning")] == []
