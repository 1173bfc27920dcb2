"""Lint many files: on every core, and through the cache when one is asked for.

Workers are worth it only for a tree: starting them costs more than linting a
handful of files, which is what pre-commit hands over, so small runs stay
in-process. Workers are forked, inheriting everything already imported.
"""

from __future__ import annotations

import multiprocessing
import os
from functools import partial

from . import reads
from .engine import lint_file

# Below this many files one process is faster than starting others.
MIN_FILES_PER_WORKER = 48


def worker_count(files: int, jobs: int = 0) -> int:
    """`jobs` workers if given, else one per core while each gets enough files."""
    if jobs > 0:
        return jobs
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, files // MIN_FILES_PER_WORKER))


def lint_files(paths: list, settings, options, rules, jobs: int = 0, cache_dir: str = "") -> list:
    """FileResults in the order of `paths`; with `cache_dir`, unchanged files are not linted again."""
    cache = None
    if cache_dir:
        from .cache import Cache

        cache = Cache(cache_dir, settings, options)
    keys = [cache.key(path) for path in paths] if cache else [None] * len(paths)
    results = [cache.get(key) for key in keys] if cache else [None] * len(paths)
    todo = [i for i, result in enumerate(results) if result is None]
    lint = partial(_lint_tracked, settings=settings, options=options, rules=rules)
    for i, (result, others) in zip(todo, _map(lint, [paths[i] for i in todo], jobs)):
        results[i] = result
        if cache:
            cache.put(keys[i], result, others - {os.path.abspath(paths[i])})
    if cache:
        cache.save()
    return results


def _map(function, items: list, jobs: int) -> list:
    workers = worker_count(len(items), jobs)
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(item) for item in items]
    chunk = max(1, len(items) // (workers * 8))
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(function, items, chunksize=chunk)


def _lint_tracked(path: str, settings, options, rules) -> tuple:
    """The result, and the other files linting it read."""
    with reads.tracking() as others:
        result = lint_file(path, settings, options, rules)
    return result, set(others)
