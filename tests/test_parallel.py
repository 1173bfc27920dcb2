"""Linting on several workers gives exactly what one process gives, in order."""

import glob
import os

import pytest

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


@pytest.mark.parametrize("load, expected", [(0.2, 4), (1.0, 4), (1.6, 3), (2.4, 3), (3.2, 2), (3.6, 1), (9.0, 1)])
def test_workers_go_to_idle_cores_only(monkeypatch, load, expected):
    # Four cores; the load average counts this process itself (1.0 = only us).
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert worker_count(1000) == expected
    assert worker_count(1000, jobs=4) == 4  # asked for: as asked
    assert worker_count(MIN_FILES_PER_WORKER * 2) == min(expected, 2)
