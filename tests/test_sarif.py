"""SARIF output: valid against the SARIF 2.1.0 schema, with what GitHub code
scanning needs, and fingerprints that survive edits elsewhere in the file.

The schema comes from the npm registry (it ships in @microsoft/jest-sarif);
the schema test skips when npm or the registry is not there."""

import glob
import json
import os
import shutil
import subprocess
import tarfile

import pytest

from batchlint.cli import main
from batchlint.rules import all_rules

from conftest import CORPUS, cli_runner, write

SCHEMA_PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def schema(request):
    cache = getattr(request.config, "cache", None)
    cache = str(cache.mkdir("sarif-schema")) if cache is not None else None
    folder = cache or str(request.getfixturevalue("tmp_path_factory").mktemp("sarif"))
    found = glob.glob(os.path.join(folder, "**", "sarif-2.1.0*.json"), recursive=True)
    if not found:
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: cannot fetch the SARIF schema")
        packed = subprocess.run(["npm", "pack", "--silent", SCHEMA_PACKAGE], cwd=folder, capture_output=True, text=True, timeout=120)
        tarballs = glob.glob(os.path.join(folder, "*.tgz"))
        if packed.returncode or not tarballs:
            pytest.skip(f"cannot fetch {SCHEMA_PACKAGE}: {packed.stderr.strip()[:200]}")
        with tarfile.open(tarballs[0]) as archive:
            member = next(m for m in archive.getmembers() if m.name.endswith(".json") and "sarif-2.1.0" in m.name)
            archive.extract(member, folder)
        found = glob.glob(os.path.join(folder, "**", "sarif-2.1.0*.json"), recursive=True)
    with open(found[0], encoding="utf-8") as handle:
        return json.load(handle)


def sarif(*args):
    result = cli_runner().invoke(main, ["check", "--format", "sarif", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_corpus_and_examples_validate_against_the_schema(schema, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.chdir(REPO)
    paths = ["examples"] + ([CORPUS] if os.path.isdir(CORPUS) else [])
    log = sarif("-w", "8", *paths)
    jsonschema.validate(log, schema)
    findings = json.loads(cli_runner().invoke(main, ["check", "--format", "json", "-w", "8", *paths]).stdout)
    assert len(log["runs"][0]["results"]) == len(findings) > 0


def test_rules_and_results_carry_what_code_scanning_reads(monkeypatch):
    """The driver describes the rules that have results, in the registry's order, as GitHub's ingestion
    takes them; each result's ruleIndex points at its own rule there."""
    monkeypatch.chdir(REPO)
    run = sarif("examples")["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    found = {r["ruleId"] for r in run["results"]}
    assert [r["id"] for r in rules] == [r.code for r in all_rules() if r.code in found]
    assert {"BL102", "BL103", "BL301"} <= found and len(rules) == len(found) < len(all_rules())
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert not location["artifactLocation"]["uri"].startswith(("/", "./"))
        assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]["primaryLocationLineHash"].endswith(":1")


def test_fingerprint_survives_lines_inserted_above(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "packing: true\nper_device_train_batch_size: 2\ngroup_by_length: true\n"
    write(tmp_path, "sft.yaml", text)
    before = sarif("sft.yaml")["runs"][0]["results"][0]
    write(tmp_path, "sft.yaml", "# a comment\n\n" + text)
    after = sarif("sft.yaml")["runs"][0]["results"][0]
    assert before["locations"][0]["physicalLocation"]["region"]["startLine"] + 2 == \
        after["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert before["partialFingerprints"] == after["partialFingerprints"]


def test_output_file(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    target = tmp_path / "batchlint.sarif"
    result = cli_runner().invoke(main, ["check", "--format", "sarif", "--output", str(target), "examples"])
    assert result.exit_code == 1 and result.stdout == ""
    assert json.loads(target.read_text())["version"] == "2.1.0"


def test_fixes_and_help_uri_validate_and_carry_the_edits(schema, tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    from batchlint import report

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(report, "docs_base", lambda: "https://example.org/batchlint/docs")
    write(tmp_path, "trl.yaml", "packing: true\nper_device_train_batch_size: 2\ngroup_by_length: true  # batchlint: disable=BL501\n")
    write(tmp_path, "sft.py", "from mmengine.dataset import DefaultSampler\n"
          "from xtuner.parallel.sequence import SequenceParallelSampler\n\n"
          "sequence_parallel_size = 4\nbatch_size = 1\naccumulative_counts = 64  # tuned at sp=1\n"
          "sampler = SequenceParallelSampler if sequence_parallel_size > 1 else DefaultSampler\n"
          "train_dataloader = dict(batch_size=batch_size, sampler=dict(type=sampler, shuffle=True))\n"
          "optim_wrapper = dict(accumulative_counts=accumulative_counts)\n")
    log = sarif("--extend-select", "BL005", ".")
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["BL301"]["helpUri"] == "https://example.org/batchlint/docs/rules/BL301.md"
    fixes = {r["ruleId"]: r["fixes"] for r in run["results"] if "fixes" in r}
    assert sorted(fixes) == ["BL005", "BL101", "BL301"]
    [bl301] = fixes["BL301"]
    assert bl301["artifactChanges"] == [{
        "artifactLocation": {"uri": "trl.yaml", "uriBaseId": "%SRCROOT%"},
        "replacements": [{"deletedRegion": {"startLine": 3, "startColumn": 18, "endLine": 3, "endColumn": 22},
                          "insertedContent": {"text": "false"}}],
    }]
    [bl101] = fixes["BL101"]
    assert bl101["properties"] == {"applicability": "unsafe"}
    region = bl101["artifactChanges"][0]["replacements"][0]["deletedRegion"]
    assert (region["startLine"], region["startColumn"]) == (region["endLine"], region["endColumn"]), "an insertion"
    assert fixes["BL005"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"] == {"text": ""}


def test_no_help_uri_when_the_project_declares_no_docs(tmp_path, monkeypatch):
    from batchlint import report

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(report, "docs_base", lambda: None)
    write(tmp_path, "trl.yaml", "packing: true\nper_device_train_batch_size: 2\ngroup_by_length: true\n")
    rules = sarif("trl.yaml")["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["BL301"] and all("helpUri" not in r for r in rules)


def test_information_uri_only_from_the_urls_the_project_declares(tmp_path, monkeypatch):
    """No page is made up: as this repository ships, pyproject declares no [project.urls] and the driver
    has no informationUri; a fork that declares its repository gets that URL."""
    from batchlint import report

    monkeypatch.chdir(tmp_path)
    write(tmp_path, "trl.yaml", "packing: true\nper_device_train_batch_size: 2\ngroup_by_length: true\n")
    with open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8") as handle:
        declared = "[project.urls]" in handle.read()
    driver = sarif("trl.yaml")["runs"][0]["tool"]["driver"]
    assert declared or "informationUri" not in driver
    monkeypatch.setattr(report, "project_urls", lambda: {"repository": "https://example.org/you/batchlint"})
    assert sarif("trl.yaml")["runs"][0]["tool"]["driver"]["informationUri"] == "https://example.org/you/batchlint"


def test_no_results_no_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "trl.yaml", "packing: true\nper_device_train_batch_size: 2\n")
    run = sarif("trl.yaml")["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []


def test_every_result_has_its_own_fingerprint(tmp_path, monkeypatch):
    """Two findings of one rule on lines with the same text (one key set the same way in two places)
    are two results: GitHub tells them apart by the occurrence after the hash."""
    from batchlint.diagnostic import Diagnostic
    from batchlint.document import Span
    from batchlint.report import Summary
    from batchlint.report.sarif import render

    write(tmp_path, "run.sh", "torchrun --nproc_per_node 3 train.py\ntorchrun --nproc_per_node 3 train.py\n")
    monkeypatch.chdir(tmp_path)
    found = [Diagnostic("BL202", "layout-world-mismatch", "error", "W (3) ...", "run.sh", Span.point(line, 27))
             for line in (1, 2)]
    results = json.loads(render(found, Summary(files=1, configs=1)))["runs"][0]["results"]
    prints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results]
    assert len(prints) == 2 and prints[0].split(":")[0] == prints[1].split(":")[0]
    assert [p.split(":")[1] for p in prints] == ["1", "2"]
