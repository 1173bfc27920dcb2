"""Lint many files: on every core, and through the cache when one is asked for.

Workers are worth it only for a tree: starting them costs more than linting a
handful of files, which is what pre-commit hands over, so small runs stay
in-process. Workers are forked, inheriting everything already imported.

The parent always knows which file each worker holds, so a worker that dies
(a crash in C code, the kernel's OOM killer) or stops answering costs that one
file, reported as an internal error, and the run goes on with a new worker.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from .engine import FILE_SECONDS, FileResult, lint_file
from .lean_dataclass import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, TypeVar

    _T = TypeVar("_T")

# Below this many files one process is faster than starting others.
MIN_FILES_PER_WORKER = 48
# Files handed to a worker at once: few enough that a dead worker costs little
# to redo, enough that the pipe is not the bottleneck.
CHUNK = 8
# A worker silent this long while holding a file is stuck below Python (where
# the engine's own time limit cannot reach): it is killed.
STUCK_SECONDS = FILE_SECONDS * 3


def worker_count(files: int, jobs: int = 0) -> int:
    """`jobs` workers if given, else one per idle core while each gets enough files."""
    if jobs > 0:
        return jobs
    return max(1, min(_idle_cores(), files // MIN_FILES_PER_WORKER))


def _idle_cores() -> int:
    """Cores this process may use that other processes do not keep busy: a second worker on a
    core another job holds only shares it, and the start and the pipes make the run slower than
    one process. The load average of the last minute counts this process (one) as well."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        busy = os.getloadavg()[0] - 1
    except (AttributeError, OSError):  # not on every platform: take the cores as idle
        busy = 0.0
    return max(1, min(cores, int(cores - max(0.0, busy) + 0.5)))


def lint_files(paths: list, settings, options, rules, jobs: int = 0, cache_dir: str = "") -> list:
    """FileResults in the order of `paths`; with `cache_dir`, unchanged files are not linted again."""
    cache = None
    if cache_dir:
        from .cache import Cache

        options = replace(options, digests=True)  # a cached result is checked against them
        cache = Cache(cache_dir, settings, options)
    keys = [cache.key(path) for path in paths] if cache else [None] * len(paths)
    results = [cache.get(key) for key in keys] if cache else [None] * len(paths)
    todo = [i for i, result in enumerate(results) if result is None]

    def lint(path: str) -> FileResult:
        return lint_file(path, settings, options, rules)

    for i, result in zip(todo, _map(lint, [paths[i] for i in todo], jobs)):
        results[i] = result
        if cache:
            cache.put(keys[i], result, {p: d for p, d in result.reads.items() if p != os.path.abspath(paths[i])})
    if cache:
        cache.save()
    return results


def _map(lint: Callable[[str], FileResult], paths: list, jobs: int) -> list:
    workers = worker_count(len(paths), jobs)
    if workers == 1 or len(paths) < 2 or not _can_fork():
        return [lint(path) for path in _collecting_rarely(paths)]
    return _Pool(lint, paths, workers).run()


# Files linted between two passes of the cyclic garbage collector in a run of many.
COLLECT_EVERY = 256


def _collecting_rarely(paths: Iterable[_T]) -> Iterator[_T]:
    """`paths` (or items holding them), with the cyclic collector paused while they are linted and run once every COLLECT_EVERY
    files (and at the end). A file's lint leaves no cycle behind (reference counting frees it), so the
    collector's automatic passes after each file only rescanned what the run keeps (its results, the
    project's caches); a pass now and then still takes whatever cycle a defect may leave."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        for done, path in enumerate(paths, 1):
            yield path
            if collecting and done % COLLECT_EVERY == 0:
                gc.collect(1)
    finally:
        if collecting:
            gc.enable()


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _serve(connection, lint: Callable[[str], FileResult]) -> None:
    """A worker: lint each chunk of (index, path) it is sent, answering file by file."""
    while True:
        try:
            chunk = connection.recv()
        except EOFError:
            return
        if chunk is None:
            return
        for index, path in _collecting_rarely(chunk):
            connection.send((index, lint(path)))


class _Pool:
    def __init__(self, lint: Callable[[str], FileResult], paths: list, workers: int):
        self.lint, self.paths, self.size = lint, paths, workers
        self.queue = deque(range(len(paths)))
        self.results: list = [None] * len(paths)
        self.held: dict = {}  # worker -> deque of indices it holds, in the order it lints them

    def run(self) -> list:
        import multiprocessing
        from multiprocessing.connection import wait

        context = multiprocessing.get_context("fork")
        try:
            while self.queue or any(self.held.values()):
                while len(self.held) < self.size and self.queue:
                    self._start(context)
                ready = wait([w.connection for w in self.held] + [w.process.sentinel for w in self.held],
                             timeout=STUCK_SECONDS)
                if not ready:
                    for worker in [w for w, held in self.held.items() if held]:
                        self._lose(worker, f"no answer within {STUCK_SECONDS} s")
                    continue
                for worker in list(self.held):
                    if worker.connection in ready:
                        self._receive(worker)
                    elif worker.process.sentinel in ready and worker in self.held:
                        self._lose(worker, _how_it_ended(worker.process))
        finally:
            for worker in list(self.held):
                worker.stop()
        return self.results

    def _start(self, context) -> None:
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, self.lint), daemon=True)
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self.held[worker] = deque()
        self._feed(worker)

    def _feed(self, worker: _Worker) -> None:
        chunk = [self.queue.popleft() for _ in range(min(CHUNK, len(self.queue)))]
        if not chunk:
            worker.stop()
            del self.held[worker]
            return
        self.held[worker].extend(chunk)
        try:
            worker.connection.send([(i, self.paths[i]) for i in chunk])
        except OSError:
            self._lose(worker, _how_it_ended(worker.process))

    def _receive(self, worker: _Worker) -> None:
        try:
            while worker.connection.poll():
                index, result = worker.connection.recv()
                self.results[index] = result
                self.held[worker].remove(index)
        except (EOFError, OSError):
            self._lose(worker, _how_it_ended(worker.process))
            return
        if not self.held[worker]:
            self._feed(worker)

    def _lose(self, worker: _Worker, how: str) -> None:
        """The worker is gone: the file it was linting fails, the rest of its chunk is redone."""
        held = self.held.pop(worker)
        worker.stop()
        if held:
            culprit = held.popleft()
            from .discover import display_path

            shown = display_path(self.paths[culprit])
            self.results[culprit] = FileResult(shown, error=f"internal error while linting {shown}: "
                                                            f"the worker process {how}")
            self.queue.extendleft(reversed(held))


class _Worker:
    def __init__(self, process, connection):
        self.process, self.connection = process, connection

    def stop(self) -> None:
        try:
            self.connection.send(None)
        except (OSError, ValueError):
            pass
        self.connection.close()
        self.process.join(timeout=1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def _how_it_ended(process) -> str:
    process.join(timeout=1)
    code: Optional[int] = process.exitcode
    if code is None:
        return "stopped answering"
    if code < 0:
        import signal

        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
