"""The real corpus in ../shared/corpus: every file lints without a crash and
every finding is one we have read and defend (listed in EXPECTED)."""

import os
from collections import Counter

import pytest

from batchlint.config import Settings
from batchlint.engine import Options, lint_file
from batchlint.rules import RULES

from conftest import CORPUS

FRAMEWORKS = ["axolotl", "deepspeed", "llamafactory", "nemo", "swift", "torchtitan", "torchtune", "verl"]

# Findings on the unmodified corpus, as (path below the corpus, code). Each one
# has been read against its file; the issue notes say why it is true.
EXPECTED = set()

# What each folder's files are recognised as, at least.
RECOGNISED = {
    "torchtitan": {"torchtitan": 23},
    "deepspeed": {"deepspeed": 27},
    "axolotl": {"axolotl": 250, "deepspeed": 8},
    "llamafactory": {"llamafactory": 54, "deepspeed": 7},
    "swift": {"swift": 3},
}


def _lint_folder(folder):
    settings = Settings(root=CORPUS)
    for top, _, files in os.walk(folder):
        for name in sorted(files):
            path = os.path.join(top, name)
            yield os.path.relpath(path, CORPUS), lint_file(path, settings, Options(), RULES)


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is not present")
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_corpus_folder(framework):
    results = list(_lint_folder(os.path.join(CORPUS, framework)))
    assert results
    assert not [r.error for _, r in results if r.error]
    assert not [d.text for _, r in results for d in r.diagnostics if d.code == "BL001"]
    found = {(path, d.code) for path, r in results for d in r.diagnostics}
    expected = {e for e in EXPECTED if e[0].startswith(framework + "/")}
    assert found == expected, [d.text for _, r in results for d in r.diagnostics]
    counts = Counter(r.framework for _, r in results if r.framework)
    for name, minimum in RECOGNISED.get(framework, {}).items():
        assert counts[name] >= minimum, counts
