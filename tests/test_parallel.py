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


def test_a_files_lint_leaves_no_cycle_behind():
    # Reference counting frees each file's documents and plans as its lint ends: nothing of batchlint's
    # is left for the cyclic collector (a checker and its resolver once held each other, and with them
    # the whole file: the collector's rescans were a tenth of a tree's lint).
    import gc

    paths = sorted(glob.glob(os.path.join(REPO, "examples", "**", "*.*"), recursive=True))
    settings = Settings(root=REPO)
    lint_files(paths, settings, Options(world_size=8), RULES, jobs=1)  # imports and the run's caches
    gc.collect()
    gc.disable()
    try:
        results = lint_files(paths, settings, Options(world_size=8), RULES, jobs=1)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        ours = sorted({type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("batchlint")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert any(r.diagnostics for r in results)
    assert ours == []


def test_the_collector_runs_between_files_not_after_each(monkeypatch):
    import gc

    import batchlint.parallel

    seen = []
    monkeypatch.setattr(batchlint.parallel, "lint_file", lambda path, *a, **k: seen.append(gc.isenabled()))
    monkeypatch.setattr(batchlint.parallel, "COLLECT_EVERY", 2)
    collected = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collected.append(generation) or 0)
    lint_files(["a", "b", "c", "d", "e"], Settings(root=REPO), Options(), RULES, jobs=1)
    assert seen == [False] * 5 and collected == [1, 1]
    assert gc.isenabled()
