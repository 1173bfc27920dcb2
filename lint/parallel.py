"""Lint many files on every core.

Worth it only for a tree: starting workers costs more than linting a handful
of files, which is what pre-commit hands over, so small runs stay in-process.
Workers are forked, inheriting everything already imported.
"""

from __future__ import annotations

import multiprocessing
import os
from functools import partial

from .engine import lint_file

# Below this many files one process is faster than starting others.
MIN_FILES_PER_WORKER = 48


def worker_count(files: int, jobs: int = 0) -> int:
    """`jobs` workers if given, else one per core while each gets enough files."""
    if jobs > 0:
        return jobs
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, files // MIN_FILES_PER_WORKER))


def lint_files(paths: list, settings, options, rules, jobs: int = 0) -> list:
    """FileResults in the order of `paths`."""
    workers = worker_count(len(paths), jobs)
    lint = partial(lint_file, settings=settings, options=options, rules=rules)
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [lint(path) for path in paths]
    context = multiprocessing.get_context("fork")
    chunk = max(1, len(paths) // (workers * 8))
    with context.Pool(workers) as pool:
        return pool.map(lint, paths, chunksize=chunk)
