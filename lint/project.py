"""The project boundary, and the one way batchlint reads a file.

References between files (a linked DeepSpeed JSON, a config a launch line
names) resolve only inside the project: the git root above each linted path,
else the folder of the project config, else the linted paths themselves, plus
the folders the project config adds with `reference-paths`. The check is on
real paths, so a symlink that leaves the project is outside too. Nothing of a
file outside reaches the output: CI annotations and job summaries are public.

Only regular files are read (a FIFO would block, `/dev/zero` never ends), and
no more than `limits.MAX_FILE_BYTES` of them.
"""

from __future__ import annotations

import contextvars
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

from . import limits, reads


class NotRegular(OSError):
    """A FIFO, device, socket or directory where a file was expected: skipped with a notice."""


class TooLarge(OSError):
    """A regular file past MAX_FILE_BYTES: one BL003 diagnostic."""


def read_bytes(path: str, limit: Optional[int] = None) -> bytes:
    """The content of the regular file at `path` (or its overlay: `--fix` re-lints
    text it has not written); raises NotRegular, TooLarge or OSError. Every read is
    recorded with its digest, for the cache and for `--fix`'s check that a file
    did not change between linting and writing."""
    overlay = _overlay.get()
    data = overlay.get(os.path.realpath(path)) if overlay else None
    if data is None:
        data = _read_regular(path, limits.MAX_FILE_BYTES if limit is None else limit)
    reads.record(path, data)
    return data


def _read_regular(path: str, limit: int) -> bytes:
    _require_regular(os.stat(path), path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        _require_regular(info, path)  # it may have been swapped since the stat
        if info.st_size > limit:
            raise TooLarge(f"{info.st_size:,} bytes, over the {limit:,}-byte bound")
        # Ask for the size stat gave (a 4 MiB buffer per small file is what one read of the bound
        # would cost), and go on to the bound only if the file grew since: the bound holds either way.
        chunks, size, want = [], 0, info.st_size + 1
        while size <= limit:
            chunk = os.read(fd, min(want, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            want = limit + 1 - size
    finally:
        os.close(fd)
    if size > limit:
        raise TooLarge(f"over the {limit:,}-byte bound")
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _require_regular(info: os.stat_result, path: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise NotRegular(f"not a regular file ({kind_of(info.st_mode)})")


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


@dataclass(frozen=True)
class Project:
    """The folders whose files may be read into the output (real paths)."""

    roots: tuple = ()

    def contains(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)


def git_root(start: str) -> Optional[str]:
    """The nearest folder from `start` upward that holds `.git` (a folder, or a worktree's file)."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def find_project(paths: Iterable[str], settings) -> Project:
    """The project of a run over `paths` with `settings` (see the module's docstring)."""
    roots = []
    for path in paths:
        top = git_root(path)
        if top is None:
            top = settings.root if settings.source else (path if os.path.isdir(path) else os.path.dirname(path) or ".")
        roots.append(top)
    roots.extend(settings.reference_paths)
    return Project(tuple(sorted({os.path.realpath(r) for r in roots})))


_overlay: contextvars.ContextVar = contextvars.ContextVar("batchlint_overlay", default=None)


@contextmanager
def overlaid(texts: dict) -> Iterator[None]:
    """Inside the block, `read_bytes` of a path in `texts` (real path -> bytes) gives that content."""
    token = _overlay.set({os.path.realpath(p): data for p, data in texts.items()})
    try:
        yield
    finally:
        _overlay.reset(token)


_current: contextvars.ContextVar = contextvars.ContextVar("batchlint_project", default=None)


@contextmanager
def using(project: Project) -> Iterator[Project]:
    """Make `project` the boundary for references read inside the block."""
    token = _current.set(project)
    try:
        yield project
    finally:
        _current.reset(token)


def current() -> Optional[Project]:
    return _current.get()


def may_read(path: str) -> bool:
    """Whether a reference to `path` may be followed: inside the current project (any path
    when no project is set: a library caller that chose no boundary)."""
    project = current()
    return project is None or project.contains(path)
