"""The files in view that name a file: shell and job scripts, job descriptions, make files.

A launch script another file names may be run by it (`srun bash run.sh`: lint/one_process.py); a
config a file names may be launched by it, which the engine then reads that file's launch lines to tell
(lint/engine.py `launched_in_view`: `-w` and the project config's W are for the configs no launch line in
view runs). The files are found by one walk
of the project and read once a run (`forget` starts again), each name then looked for in all of them
at once; past a bound (too many files or bytes) some may be missed, and the answer is "named".
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import re
from typing import Optional

from . import per_run, project, reads
from .lean_dataclass import lean_dataclass

# Files that may run a script or launch a config: shell and job scripts, job descriptions (YAML), make
# and just files.
SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".pbs", ".qsub", ".lsf", ".job", ".yaml", ".yml")
NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "justfile", "Justfile"})
_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages", "venv"})
# Past this many such files read, files and folders looked at, or bytes kept, a caller may be missed.
MAX_FILES = 5_000
MAX_ENTRIES = 100_000
MAX_FILE_BYTES = 1 << 20
MAX_BYTES = 64 << 20
# The path a file names another by: the characters before its name up to a shell word's end.
_PATH_BEFORE = rb"([^\s'\"=;|&()<>`,\[\]{}]*)"
_SEPARATOR = b"\n\x00\n"  # between two files' bytes: no name runs across it


@lean_dataclass(frozen=True)
class _Files:
    """Every caller file under a folder: their bytes end to end, where each starts, their real paths."""

    data: bytes
    starts: tuple
    paths: tuple
    complete: bool  # False: a bound was passed, a caller may be missing
    read: tuple = ()  # (absolute path, digest) of each file read: every lint that asks depends on them


_cache: dict = per_run.cache()  # (folder, project roots) -> _Files


def named_elsewhere(path: str) -> bool:
    """Whether a file in view other than the one at `path` names it by a path that may be its own
    (`srun bash run.sh`, `sbatch scripts/run.sh`, `--config_file $DIR/sft.yaml`). True as well when
    there are too many files to look through."""
    found = naming(path)
    return found is None or bool(found)


def naming(path: str) -> Optional[tuple]:
    """The real paths of the files in view, other than the one at `path`, that name it by a path that
    may be its own; None when there are too many files to look through."""
    real = os.path.realpath(path)
    files = _files(_top(real))
    if not files.complete:
        return None
    name = os.fsencode(os.path.basename(real))  # a name that is not UTF-8 keeps its bytes
    folders = real.split(os.sep)[:-1]
    pattern: Optional[re.Pattern] = None
    data, starts = files.data, files.starts
    found = []
    at = data.find(name)
    while at != -1:
        index = bisect.bisect_right(starts, at) - 1
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        if files.paths[index] != real:
            pattern = pattern or re.compile(_PATH_BEFORE + re.escape(name) + rb"(?![\w.-])")
            if any(_may_be(match.group(1), folders) for match in pattern.finditer(data, starts[index], end)):
                found.append(files.paths[index])
        at = data.find(name, end)
    return tuple(found)


def _files(top: str) -> _Files:
    current = project.current()
    key = (top, current.roots if current else None)
    found = _cache.get(key)
    if found is None:
        if len(_cache) >= 64:
            _cache.clear()
        with reads.tracking(digests=None) as touched:
            found = _read(top)
        found = _cache[key] = dataclasses.replace(found, read=tuple(touched.paths.items()))
    with reads.searching():  # replayed: a cached lint result depends on these files too
        for path, digest in found.read:
            reads.replay(path, digest)
    return found


def _read(top: str) -> _Files:
    chunks: list = []
    starts: list = []
    paths: list = []
    size = seen = entries = 0
    for folder, dirs, names in os.walk(top):
        entries += len(dirs) + len(names)
        if entries > MAX_ENTRIES:
            return _Files(b"", (), (), False)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS)
        for name in sorted(names):
            if not (name.endswith(SUFFIXES) or name in NAMES):
                continue
            seen += 1
            if seen > MAX_FILES:
                return _Files(b"", (), (), False)
            candidate = os.path.join(folder, name)
            if not project.may_read(candidate):
                continue
            try:
                data = project.read_bytes(candidate, limit=MAX_FILE_BYTES)
            except OSError:
                continue  # not a regular file, or past the bound: a data file, not a caller
            starts.append(size)
            chunks.append(data + _SEPARATOR)
            paths.append(os.path.realpath(candidate))
            size += len(data) + len(_SEPARATOR)
            if size > MAX_BYTES:
                return _Files(b"", (), (), False)
    return _Files(b"".join(chunks), tuple(starts), tuple(paths), True)


def _may_be(written: bytes, folders: list) -> bool:
    """Whether `written/NAME` may be the file in `folders`: the folders written after the last one
    not known (`$DIR`, `~`, `*`) end its own; `..` or a name that goes on before (`train_run.sh`) decide
    nothing, and count as it (or not) as the safe side says."""
    if written and not written.endswith(b"/"):
        return False  # part of another name: `train_run.sh` is not `run.sh`
    parts = written.decode("utf-8", "replace").split("/")[:-1]
    literal: list = []
    for part in parts:
        if any(mark in part for mark in "$~*?{"):
            literal = []  # a variable's folder: any
        elif part not in ("", "."):
            literal.append(part)
    if ".." in literal:
        return True
    return not literal or folders[-len(literal):] == literal


def _top(real: str) -> str:
    """The deepest project folder that holds the file (what is in view), else its own folder."""
    current = project.current()
    roots = [root for root in (current.roots if current else ()) if real.startswith(root.rstrip(os.sep) + os.sep)]
    return max(roots, key=len) if roots else os.path.dirname(real)


# A shell redirection into a file (`> f`, `>> f`, `| tee f`, `cat <<EOT > $CONFIG_JSON`): its target word.
_REDIRECT = re.compile(rb"(?:(?<![<>&0-9])>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?([^\s;&|\"'<>()`]+)")
_ASSIGNED = rb"^[ \t]*(?:export[ \t]+)?%s=[\"']?([^\s;\"'#]+)"


def written_by(path: str) -> Optional[str]:
    """"file:line" of a script in view that writes the file at `path` with a redirection (the target its
    name, or a variable assigned a path ending in it): the file is that script's output, made again
    before the job reads it, and what is committed is not what runs. None when no such script is in view."""
    real = os.path.realpath(path)
    name = os.fsencode(os.path.basename(real))
    folder = os.path.dirname(real)
    # The nearest first: a script beside the file (or above it) is the likeliest to mean this one.
    nearest = sorted(naming(path) or (), key=lambda c: (-len(os.path.commonpath([folder, os.path.dirname(c)])), c))
    for caller in nearest:
        try:
            with reads.searching():
                data = project.read_bytes(caller, limit=MAX_FILE_BYTES)
        except OSError:
            continue
        for match in _REDIRECT.finditer(data):
            target = match.group(1)
            variable = re.fullmatch(rb"\$\{?(\w+)\}?", target)
            if variable is not None:
                assigned = re.search(_ASSIGNED % re.escape(variable.group(1)), data, re.M)
                target = assigned.group(1) if assigned else b""
            if target.rsplit(b"/", 1)[-1] == name:
                shown = os.path.relpath(caller, project.top_of(path)).replace(os.sep, "/")
                line = data.count(b"\n", 0, match.start()) + 1
                return f"{shown}:{line}"
    return None
