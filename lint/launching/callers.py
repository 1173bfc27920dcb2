"""The files in view that name a file: shell and job scripts, job descriptions, make files.

A launch script another file names may be run by it (`srun bash run.sh`: lint/one_process.py); a
config a file names may be launched by it, which the engine then reads that file's launch lines to tell
(lint/engine.py `launches_in_view`: `-w` and the project config's W are for the configs no launch line in
view runs). The files are found by one walk
of the project and read once a run (`forget` starts again), each name then looked for in all of them
at once; past a bound (too many files or bytes) some may be missed, and the answer is "named".
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Iterator, Mapping

from .. import per_run, project, reads
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

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
_SEPARATOR = b"\n\x00\n"  # between two files' bytes: no name runs across it


@lean_dataclass(frozen=True)
class _Files:
    """Every caller file under a folder: their bytes end to end, where each starts, their real paths."""

    data: bytes
    starts: tuple
    paths: tuple
    complete: bool  # False: a bound was passed, a caller may be missing
    # (stamp, the bytes of a racily clean file or None) of each file, taken as it was read (`_stamp`);
    # None when read through an overlay or a revision. Joined and hashed only when a cache asks.
    stamps: Optional[tuple] = None
    marks: tuple = ()  # of each file in `paths`, what tells its bytes from another run's (`_mark`); () for a revision's


_cache: per_run.Cache = per_run.cache()  # (folder, project roots) -> _Files


def named_elsewhere(path: str) -> bool:
    """Whether a file in view other than the one at `path` names it by a path that may be its own
    (`srun bash run.sh`, `sbatch scripts/run.sh`, `--config_file $DIR/sft.yaml`). True as well when
    there are too many files to look through."""
    found = naming(path)
    return found is None or bool(found)


def naming(path: str) -> Optional[tuple]:
    """The real paths of the files in view, other than the one at `path`, that name it by a path that
    may be its own; None when there are too many files to look through."""
    real = project.real_path(path)
    files = _files(_top(real))
    if not files.complete:
        return None
    name = os.fsencode(os.path.basename(real))  # a name that is not UTF-8 keeps its bytes
    folders = real.split(os.sep)[:-1]
    data, starts = files.data, files.starts
    found = []
    for index in _holding(files, name):
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        if files.paths[index] != real and any(_may_be(written, folders)
                                              for written in _written_before(data, starts[index], end, name)):
            found.append(files.paths[index])
    return tuple(found)


def in_view(real: str) -> Optional[tuple]:
    """(the folder in view, the real paths of every file in it that may run the file at the real path
    `real`, whether or not they name it): one pass for a whole project's launch lines; None when there
    are too many to look through."""
    top = _top(real)
    files = _files(top)
    return (top, files.paths) if files.complete else None


def running(path: str) -> Optional[tuple]:
    """The files in view that may run the file at `path`: those naming it (`naming`), then those composing
    its name from a variable (`--deepspeed configs/${STAGE}.json` beside `STAGE=zero2`): the value as a
    word of its own and a variable before the suffix. Whether one does is what its lint says (the
    configs its launch lines run); None when there are too many files to look through."""
    named = naming(path)
    if named is None:
        return None
    real = project.real_path(path)
    stem, dot, suffix = os.fsencode(os.path.basename(real)).rpartition(b".")
    if not (stem and dot and suffix):
        return named
    files = _files(_top(real))
    composed = [files.paths[index] for index, (suffixes, words) in _composers(files)
                if suffix in suffixes and stem in words and files.paths[index] != real]
    return tuple(dict.fromkeys(named + tuple(composed)))


# A variable right before a suffix: `${STAGE}.json`, `$NAME.yaml` (the suffix is the group).
_COMPOSED = LazyPattern(rb"\$\{?\w+\}?\.(\w+)")


def _composers(files: _Files) -> tuple:
    """(index, (the suffixes it composes a name with, its words)) of each file that composes a name from a
    variable, found in one pass over them all; a file whose mark is as the last run found it is not
    looked through again."""
    def find() -> tuple:
        found = []
        data, starts, marks = files.data, files.starts, files.marks
        for number, start in enumerate(starts):
            path = files.paths[number]
            kept = _composed_by_file.get(path) if marks else None
            if kept is not None and kept[0] == marks[number]:
                composes = kept[1]
            else:
                end = starts[number + 1] if number + 1 < len(starts) else len(data)
                suffixes = frozenset(_COMPOSED.findall(data, start, end))
                composes = (suffixes, frozenset(_NAME.findall(data, start, end))) if suffixes else None
                if marks:
                    if len(_composed_by_file) >= 2 * MAX_FILES:
                        _composed_by_file.clear()
                    _composed_by_file[path] = (marks[number], composes)
            if composes is not None:
                found.append((number, composes))
        return (tuple(found),)

    return _derived(_composed, files, find)[1]


_composed_by_file: dict = {}  # path -> (its mark, (suffixes, words) or None), kept beyond the run


_WORD_END = frozenset(b" \t\n\r\x0b\x0c'\"=;|&()<>`,[]{}")  # what ends a shell word: the path before a name starts after it
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
MAX_PATH_BEFORE = 4096  # bytes looked back for the folders written before a name


def _written_before(data: bytes, start: int, end: int, name: bytes):
    """For each time `name` stands whole in data[start:end] (no name character after it), the path
    written before it up to the shell word's start: `configs/` of `configs/sft.yaml`."""
    at = data.find(name, start, end)
    while at != -1:
        after = at + len(name)
        if after >= end or data[after] not in _NAME_BYTES:
            first = at
            floor = max(start, at - MAX_PATH_BEFORE)
            while first > floor and data[first - 1] not in _WORD_END:
                first -= 1
            yield data[first:at]
        at = data.find(name, at + 1, end)


# A name a file names another by is a whole run of these (what `_may_be` accepts is preceded by a
# shell word's end or a `/`, and followed by neither): the index of such runs holds every file that may.
_NAME = LazyPattern(rb"[\w.-]+")
# The bytes with every one that no name holds made a space: the index finds each run that holds a dot (which
# alone it keeps: a name `naming` looks up has one) from that dot, and makes no object of any other word.
_SPACED = bytes(byte if byte in _NAME_BYTES else 0x20 for byte in range(256))
# Names looked for by scanning every file before the runs are indexed: an index costs what ~26 scans do
# (measured on four copies of the corpus, against the mean scan of each config's name: a scan is one
# pass of `bytes.find`, the index one `translate` and a few searches from each dot). Built once so many
# were asked, neither a lint that asks a few times (a launch script's, or each config's under `-w`) nor a
# run asking once per config pays more than twice the cheaper of the two.
SCANS_BEFORE_INDEX = 24
# Of a _Files (whose bytes never change): kept beyond the run, as the next run may read the same _Files
# again (`_last`), each entry holding its _Files so that an id is never taken for another's.
_indexes: dict = {}  # id of the _Files -> [its _Files, names asked so far, {run: file indices}]
_composed: dict = {}  # id of the _Files -> [its _Files, ((index, (suffixes, words)), ...)]
_DERIVED_KEPT = 16


def _derived(table: dict, files: _Files, make) -> list:
    """The entry `table` holds for `files`, made with `make()` when it holds none (a few are kept)."""
    entry = table.get(id(files))
    if entry is None or entry[0] is not files:
        if len(table) >= _DERIVED_KEPT:
            table.clear()
        entry = table[id(files)] = [files, *make()]
    return entry


def _holding(files: _Files, name: bytes):
    """The indices of the files in `files` whose bytes hold `name`, in order (a superset of those that
    name it as a path: the caller checks each)."""
    entry = _derived(_indexes, files, lambda: (0, None))
    entry[1] += 1
    if entry[2] is None and entry[1] > SCANS_BEFORE_INDEX:
        entry[2] = _index(files)
    if entry[2] is not None and _NAME.fullmatch(name) and b"." in name:
        return entry[2].get(name, ())
    return _scan(files, name)


def _scan(files: _Files, name: bytes) -> list:
    data, starts = files.data, files.starts
    found = []
    at = data.find(name)
    while at != -1:
        index = bisect.bisect_right(starts, at) - 1
        found.append(index)
        at = data.find(name, starts[index + 1] if index + 1 < len(starts) else len(data))
    return found


def _index(files: _Files) -> dict:
    """{each whole run of name characters holding a dot: the indices of the files holding it}, one pass:
    each run is found from a dot it holds, its ends the nearest bytes either side that no name holds
    (`bytes.find` over the bytes with those made spaces), never a regex over every byte."""
    index: dict = {}
    spaced = files.data.translate(_SPACED)
    find, rfind = spaced.find, spaced.rfind
    starts, size = files.starts, len(spaced)
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else size
        runs = set()
        dot = find(b".", start, end)
        while dot != -1:
            first = rfind(b" ", start, dot) + 1 or start  # -1 + 1: the file's start (after a separator)
            last = find(b" ", dot, end)
            last = end if last == -1 else last
            runs.add(spaced[first:last])  # name bytes are as written
            dot = find(b".", last, end)
        for run in runs:
            index.setdefault(run, []).append(number)
    return index


def _files(top: str) -> _Files:
    current = project.current()
    key = (top, current.roots if current else None)
    found = _cache.get(key)
    if found is None:
        if len(_cache) >= 64:
            _cache.clear()
        with reads.tracking(digests=False):
            found = _cache[key] = _read(top)
    # One entry for the search, not one per file: a cached lint result depends on all of them.
    reads.search(f"{SEARCH}:{top}", lambda: _digest(found))
    return found


SEARCH = "callers"


def search_digest(top: str) -> str:
    """What a search for callers under `top` would read now, for the cache's check: each file's path,
    size, inode and modification time (`_stamps`), not its bytes. A warm run then stats the files
    instead of reading them all again; a file rewritten since has another time (as ruff's and mypy's
    caches judge files)."""
    return _stamps(top)


def _digest(found: _Files) -> str:
    """The digest of the stamps the search was read under; when it was read through an overlay or a git
    revision (whose bytes are not the files' own), of its bytes, which no later stamp matches: no cached
    result outlives it."""
    if found.stamps is None:
        return reads.digest(b"read through a view: " + found.data)
    return _stamp_digest(found.stamps)


def _stamps(top: str) -> str:
    """The digest `_digest` gives a search under `top` read now, from the files' stamps alone (and the
    bytes of those changed too recently for their times to tell)."""
    if project.ProjectView.now().substituted:
        return ""
    parts = []
    for candidate, info, _ in _walk(top):
        stamp, racy = _stamp(candidate, info)
        parts.append((stamp, _read_or_nothing(candidate) if racy and candidate is not None else None))
    return _stamp_digest(parts)


def _stamp_digest(parts) -> str:
    return reads.digest(b"\n".join(stamp if data is None else b"%s\0%d\0%s" % (stamp, len(data), data)
                                   for stamp, data in parts))


def _stamp(candidate: Optional[str], info) -> tuple[bytes, bool]:
    """(a file's path and stamp, project.stamp_of; whether it changed within project.RACY_NS of now, so
    that its bytes go with them). "partial" for the end of a walk cut short by a bound."""
    if candidate is None:
        return b"partial", False
    stamp = b"%s\0%d\0%d\0%d\0%d" % (os.fsencode(candidate), *project.stamp_of(info))
    return stamp, project.is_racy(info)


def _read_or_nothing(candidate: str) -> bytes:
    try:
        return project.read_bytes(candidate, limit=MAX_FILE_BYTES)
    except OSError:
        return b""


reads.SEARCHES[SEARCH] = search_digest


# The last searches read, kept beyond the run: the next one (an editor's lint after a keystroke) takes a
# search whole when no file's mark differs (`_mark`), and what _composers found in a file while its mark
# is the same; the files' bytes themselves come from project.keeping in the editor's server.
_last: dict = {}  # (folder, project roots, overlaid) -> (the marks of its walk, _Files)
_LAST_KEPT = 4


def _read(top: str) -> _Files:
    view = project.ProjectView.now()
    walked = list(_walk(top))
    if view.revision is not None:  # a git revision's files: their bytes are not the files' own
        return _read_walked(walked, (), None)
    overlay = view.overlay
    # Only a file of an overlaid name (or a link, whose real name may be one) is looked up in the overlay.
    overlaid = frozenset(os.path.basename(path) for path in overlay) if overlay else frozenset()
    marks = tuple(_mark(candidate, info, overlay if linked or os.path.basename(candidate or "") in overlaid else None)
                  for candidate, info, linked in walked)
    current = project.current()
    key = (top, current.roots if current else None, bool(overlay))
    last = _last.get(key)
    if last is not None and last[0] == marks:
        return last[1]
    found = _read_walked(walked, marks, None if overlay else [])
    if len(_last) >= _LAST_KEPT:
        _last.clear()
    _last[key] = (marks, found)
    return found


def _mark(candidate: Optional[str], info, overlay: Optional[Mapping[str, bytes]]) -> tuple:
    """What tells a file's bytes from another run's: (its stamp, None) when its stamp does; (its stamp, its
    bytes, or False when it cannot be read) when it changed within the clock tick or is open in the editor."""
    stamp, racy = _stamp(candidate, info)
    data = overlay.get(project.real_path(candidate)) if overlay and candidate is not None else None
    if data is None and racy and candidate is not None:
        data = _read_or_none(candidate)
        return stamp, False if data is None else data
    return stamp, data


def _read_or_none(candidate: str) -> Optional[bytes]:
    try:
        return project.read_bytes(candidate, limit=MAX_FILE_BYTES)
    except OSError:
        return None  # not a regular file, or past the bound: a data file, not a caller


def _read_marked(candidate: str, mark: tuple) -> Optional[bytes]:
    """The file's bytes: those its mark holds (read already, or the editor's buffer), else the file's on
    disk (no overlay holds it, and a revision's search has no marks)."""
    told = mark[1]
    if told is not None:
        return None if told is False else told
    try:
        return project.read_on_disk(candidate, limit=MAX_FILE_BYTES)
    except OSError:
        return None


def _read_walked(walked: list, marks: tuple, stamped: Optional[list]) -> _Files:
    """The search's files as `walked` found them, each as its mark in `marks` tells (() for a revision's:
    each read); `stamped`: a list to keep their stamps in, or None when they are read through an overlay
    or a revision."""
    chunks: list = []
    starts: list = []
    paths: list = []
    kept_marks: list = []
    size = 0
    for at, (candidate, _, linked) in enumerate(walked):
        if candidate is None:
            return _Files(b"", (), (), False, _kept(stamped, b"partial"))
        if marks:
            stamp, told = mark = marks[at]
            data = _read_marked(candidate, mark)
            if stamped is not None:  # the stat was taken before the read: a file written since has a newer time
                stamped.append((stamp, None if told is None else (data or b"")))
        else:
            data = _read_or_none(candidate)
        if data is None:
            continue
        starts.append(size)
        chunks.append(data + _SEPARATOR)
        # project.walk enters no linked folder, so under a real top only a linked file has another real path.
        paths.append(os.path.realpath(candidate) if linked else candidate)
        if marks:
            kept_marks.append(marks[at])
        size += len(data) + len(_SEPARATOR)
        if size > MAX_BYTES:
            return _Files(b"", (), (), False, _kept(stamped, b"cut"))  # no stamp walk matches
    return _Files(b"".join(chunks), tuple(starts), tuple(paths), True, _kept(stamped), tuple(kept_marks))


def _kept(stamped: Optional[list], last: Optional[bytes] = None) -> Optional[tuple]:
    """The stamps as _Files keeps them, `last` ended with (a bound passed), in the order _stamps walks."""
    if stamped is None:
        return None
    return tuple(stamped) + (((last, None),) if last is not None else ())


def _walk(top: str) -> Iterator[tuple]:
    """(path, its stat, whether it is a link) of each file under `top` a search for callers reads, in
    order; (None, None, False) last when a bound on the files or folders looked at is passed. One walk for
    the search and its stamps."""
    seen = entries = 0
    for folder, dirs, names in project.walk(top):
        entries += len(dirs) + len(names)
        if entries > MAX_ENTRIES:
            yield None, None, False
            return
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS)
        # project.walk enters no linked folder: a file that is no link is in view exactly when its folder is.
        folder_in_view: Optional[bool] = None
        for name in sorted(names):
            if not (name.endswith(SUFFIXES) or name in NAMES):
                continue
            seen += 1
            if seen > MAX_FILES:
                yield None, None, False
                return
            candidate = os.path.join(folder, name)
            try:
                info = os.lstat(candidate)
                linked = stat.S_ISLNK(info.st_mode)
                if linked:
                    if not project.may_read(candidate):
                        continue
                    info = os.stat(candidate)
                else:
                    if folder_in_view is None:
                        folder_in_view = project.may_read(folder)
                    if not folder_in_view:
                        continue
            except OSError:
                continue
            yield candidate, info, linked


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
_REDIRECT = LazyPattern(rb"(?:(?<![<>&0-9])>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?([^\s;&|\"'<>()`]+)")
_ASSIGNED = rb"^[ \t]*(?:export[ \t]+)?%s=[\"']?([^\s;\"'#]+)"


def written_by(path: str) -> Optional[str]:
    """"file:line" of a script in view that writes the file at `path` with a redirection (the target its
    name, or a variable assigned a path ending in it): the file is that script's output, made again
    before the job reads it, and what is committed is not what runs. None when no such script is in view."""
    real = project.real_path(path)
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
