"""Linting on several workers gives exactly what one process gives, in order."""

import glob
import os

from batchlint.config import Settings
from batchlint.engine import Options
from batchlint.parallel import MIN_FILES_PER_WORKER, lint_files, worker_count
from batchlint.rules import RULES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_two_workers_match_one_process():
    paths = sorted(glob.glob(os.path.join(REPO, "examples", "**", "*.*"), recursive=True))
    settings = Settings(root=REPO)
    one = lint_files(paths, settings, Options(world_size=8), RULES, jobs=1)
    two = lint_files(paths, settings, Options(world_size=8), RULES, jobs=2)
    assert [(r.path, r.framework, r.diagnostics) for r in one] == [(r.path, r.framework, r.diagnostics) for r in two]
    assert any(r.diagnostics for r in one)


def test_small_runs_stay_in_one_process():
    assert worker_count(MIN_FILES_PER_WORKER - 1) == 1
    assert worker_count(10, jobs=3) == 3
