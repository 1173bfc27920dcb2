"""The real corpus in ../shared/corpus: every file lints without a crash and
every finding is one we have read and defend. The findings expected on each
framework's folder are listed, with the reason each is true, in
tests/corpus_expected/<framework>.txt."""

import os
from collections import Counter

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rules import RULES

from conftest import CORPUS

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORKS = ["axolotl", "deepspeed", "llamafactory", "nemo", "swift", "torchtitan", "torchtune", "verl"]

def expected(framework):
    """From tests/corpus_expected/<framework>.txt: the findings {(path, code)},
    and {adapter: at least how many files it must recognise} from its
    `@recognised NAME COUNT` lines."""
    with open(os.path.join(HERE, "corpus_expected", framework + ".txt"), encoding="utf-8") as handle:
        rows = [line.split() for line in handle if line.strip() and not line.startswith("#")]
    findings = {(row[0], row[1]) for row in rows if row[0] != "@recognised"}
    recognised = {row[1]: int(row[2]) for row in rows if row[0] == "@recognised"}
    return findings, recognised


def _lint_folder(folder):
    settings = Settings(root=CORPUS)
    for top, _, files in os.walk(folder):
        for name in sorted(files):
            path = os.path.join(top, name)
            yield os.path.relpath(path, CORPUS).replace(os.sep, "/"), lint_file(path, settings, Options(), RULES)


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is not present")
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_corpus_folder(framework):
    results = list(_lint_folder(os.path.join(CORPUS, framework)))
    assert results
    assert not [r.error for _, r in results if r.error]
    assert not [d.text for _, r in results for d in r.diagnostics if d.code == "BL001"]
    findings, recognised = expected(framework)
    found = {(path, d.code) for path, r in results for d in r.diagnostics}
    assert found == findings, [d.text for _, r in results for d in r.diagnostics]
    counts = Counter(r.framework for _, r in results if r.framework)
    for name, minimum in recognised.items():
        assert counts[name] >= minimum, counts


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is not present")
def test_a_file_alone_gets_what_the_whole_corpus_run_gives_it(monkeypatch):
    """Issue 24's invariant, on the real repositories of the corpus: each file with a finding in a run
    over the whole corpus, linted alone (as pre-commit and the editor give it), gets the same findings."""
    import json

    from click.testing import CliRunner

    from batchlint.cli import main

    monkeypatch.chdir(CORPUS)
    runner = CliRunner()
    whole = json.loads(runner.invoke(main, ["check", "-e", "-q", "--output-format", "json", "."]).stdout)
    paths = sorted({d["path"] for d in whole})
    assert paths, "the corpus has findings to compare"
    for path in paths:
        alone = json.loads(runner.invoke(main, ["check", "-e", "-q", "--output-format", "json", path]).stdout)
        assert [d for d in alone if d["path"] == path] == [d for d in whole if d["path"] == path], path
