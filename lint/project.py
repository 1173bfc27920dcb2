"""The project boundary, and the one way batchlint reads a file.

References between files (a linked DeepSpeed JSON, a config a launch line
names) resolve only inside the project: the git root above each linted path,
else the folder of the project config, else the working folder when it holds
the path (not `/` or the home folder), else the linted paths themselves, plus
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
import time
from collections.abc import Callable, Iterable, Iterator, Mapping

from . import limits, per_run, reads
from .lean_dataclass import lean_dataclass
from .scoped import Scoped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


class NotRegular(OSError):
    """A FIFO, device, socket or directory where a file was expected: skipped with a notice."""


class TooLarge(OSError):
    """A regular file past MAX_FILE_BYTES: one BL003 diagnostic."""


def read_bytes(path: str, limit: Optional[int] = None) -> bytes:
    """`ProjectView.read_bytes` of the view in force (`ProjectView.now`)."""
    return ProjectView.now().read_bytes(path, limit)


def read_on_disk(path: str, limit: Optional[int] = None) -> bytes:
    """What `ProjectView.read_bytes` gives for a path that no overlay or revision holds (its caller knows:
    lint/launching/callers.py looked the overlay up by name): the regular file's bytes, recorded."""
    data = _read_regular(path, limits.MAX_FILE_BYTES if limit is None else limit)
    reads.record(path, data)
    return data


def is_file(path: str) -> bool:
    """`ProjectView.is_file` of the view in force."""
    return ProjectView.now().is_file(path)


def is_dir(path: str) -> bool:
    """`ProjectView.is_dir` of the view in force."""
    return ProjectView.now().is_dir(path)


# A file changed this recently may change again within the file system's clock tick, keeping its size and
# its times: its stamp cannot tell (git's "racily clean" files). Such a file is read, never taken as kept.
RACY_NS = 2_000_000_000

# Files a long-lived process (the editor's server, each keystroke a new run reading the same files) read in
# earlier runs, while `keeping` is in force: absolute path -> (its stamp when read, its bytes), bounded.
_kept: dict = {}
_kept_bytes = 0
_keeping: contextvars.ContextVar[int] = contextvars.ContextVar("keeping", default=0)  # the bound, in bytes


def keeping(most_bytes: int) -> Scoped:
    """Inside the block, a regular file whose stamp (size, inode, times) is as when an earlier read took it
    is not read again: its bytes are those (up to `most_bytes` of files kept)."""
    return Scoped(_keeping, most_bytes)


def stamp_of(info: os.stat_result) -> tuple:
    """(size, inode, modification and change times) of a file: what tells that it changed since."""
    return info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns


def is_racy(info: os.stat_result) -> bool:
    """Whether the file changed within RACY_NS of now, where its stamp cannot tell a change since."""
    return time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) < RACY_NS


def _read_regular(path: str, limit: int) -> bytes:
    global _kept_bytes
    info = os.stat(path)
    _require_regular(info, path)
    most = _keeping.get()
    if not most:
        return _read_open(path, limit)
    where = os.path.abspath(path)
    kept = _kept.get(where)
    if kept is not None and kept[0] == stamp_of(info) and not is_racy(info):
        if info.st_size > limit:
            raise TooLarge(f"{info.st_size:,} bytes, over the {limit:,}-byte bound")
        return kept[1]
    data = _read_open(path, limit)
    if not is_racy(info) and len(data) == info.st_size:  # as the stat before the read found it
        if _kept_bytes + len(data) > most:
            _kept.clear()
            _kept_bytes = 0
        _kept[where] = (stamp_of(info), data)
        _kept_bytes += len(data)
    return data


def _read_open(path: str, limit: int) -> bytes:
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
            asked = min(want, limit + 1 - size)
            chunk = os.read(fd, asked)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < asked:
                break  # a regular file gives less than asked only at its end: no read to learn it
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


@lean_dataclass(frozen=True)
class Project:
    """The folders whose files may be read into the output (real paths)."""

    roots: tuple = ()

    def contains(self, path: str) -> bool:
        if "\x00" in path:
            return False  # no file has such a name (os.path.realpath would raise)
        real = real_path(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)


_real_folders: per_run.Cache = per_run.cache()  # folder -> os.path.realpath of it, for the run


def real_path(path: str) -> str:
    """`os.path.realpath(path)`, its folder's part remembered for the run: a file that is no link is an
    entry of its folder's real path, which costs one lstat, not one for each folder above it (the
    boundary checks every file a lint reads)."""
    if ".." in path:  # `link/..` is the link's target's parent, which abspath would take lexically
        return os.path.realpath(path)
    absolute = os.path.abspath(path)
    folder, name = os.path.split(absolute)
    try:
        if not name or stat.S_ISLNK(os.lstat(absolute).st_mode):
            return os.path.realpath(path)
    except OSError:  # not there (or not to be looked at): os.path.realpath, too, joins its name to its folder's
        pass  # (a lint looks for many files that are not there: requirements, lock files, a config's siblings)
    real_folder = _real_folders.get(folder)
    if real_folder is None:
        real_folder = _real_folder(folder)
    return os.path.join(real_folder, name)


def _real_folder(folder: str) -> str:
    """`os.path.realpath` of an absolute, normal `folder`, from its parent's, remembered: a folder that is no
    link is an entry of its parent's real path, as realpath resolves one part after the other (one lstat
    for each folder not seen yet, not one for each folder above it)."""
    missing = []  # folders below the nearest one remembered, nearest last
    while (found := _real_folders.get(folder)) is None:
        parent, name = os.path.split(folder)
        if not name or parent == folder:
            found = _real_folders[folder] = os.path.realpath(folder)
            break
        missing.append((folder, name))
        folder = parent
    for folder, name in reversed(missing):
        try:
            linked = stat.S_ISLNK(os.lstat(folder).st_mode)
        except OSError:  # not there: realpath, too, joins its name to its parent's
            linked = False
        found = _real_folders[folder] = os.path.realpath(folder) if linked else os.path.join(found, name)
    return found


def upward(folder: str, levels: int) -> Iterator[str]:
    """`folder` and the folders above it, nearest first: at most `levels`, ending at the top."""
    for _ in range(levels):
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


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
            top = settings.root if settings.source else _working_folder_holding(path) or \
                (path if os.path.isdir(path) else os.path.dirname(path) or ".")
        roots.append(top)
    roots.extend(settings.reference_paths)
    return Project(tuple(sorted({os.path.realpath(r) for r in roots})))


def _working_folder_holding(path: str) -> Optional[str]:
    """The working folder, when it holds `path` and is no more than a project's top (not `/` or the home
    folder): outside a repository and without a project config, `batchlint configs/ds.json` run from a
    project's top sees the scripts beside it, as ruff takes the working folder for the project root."""
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        return None
    real = os.path.realpath(path)
    if cwd in (os.path.realpath(os.sep), os.path.realpath(os.path.expanduser("~"))):
        return None
    return cwd if real.startswith(cwd.rstrip(os.sep) + os.sep) else None


_overlay: contextvars.ContextVar = contextvars.ContextVar("batchlint_overlay", default=None)


def overlaid(texts: dict) -> Scoped:
    """Inside the block, `read_bytes` of a path in `texts` (real path -> bytes) gives that content."""
    return Scoped(_overlay, {os.path.realpath(p): data for p, data in texts.items()})


@lean_dataclass(frozen=True)
class View:
    """Files as they stand somewhere other than on disk (a git revision): each of `files`
    (real path -> what `reader` takes, with its size) is read through `reader`, each of `absent`
    does not exist, and every other path is the disk's (an ignored file, a submodule)."""

    files: Mapping[str, tuple]  # real path -> (key for `reader`, size in bytes)
    absent: frozenset
    reader: Callable[[str], bytes]
    folders: frozenset = frozenset()  # folders holding a file of `files`
    absent_folders: frozenset = frozenset()  # folders holding only paths of `absent`

    @classmethod
    def of(cls, files: Mapping[str, tuple], absent: Iterable[str], reader: Callable[[str], bytes],
           folders: Iterable[str] = ()) -> View:
        """`folders`: those that exist in the view besides the ones holding `files`."""
        files = {os.path.realpath(p): entry for p, entry in files.items()}
        absent = frozenset(os.path.realpath(p) for p in absent) - set(files)
        there = frozenset(os.path.realpath(f) for f in folders) | {f for p in files for f in _folders_of(p)}
        return cls(files, absent, reader, there, frozenset(f for p in absent for f in _folders_of(p)) - there)

    def covers(self, real: str) -> bool:
        return real in self.files or real in self.absent

    def read(self, real: str, limit: int) -> bytes:
        if real not in self.files:
            raise FileNotFoundError(2, "No such file or directory", real)
        key, size = self.files[real]
        if size > limit:
            raise TooLarge(f"{size:,} bytes, over the {limit:,}-byte bound")
        return self.reader(key)


def _folders_of(path: str) -> Iterator[str]:
    folder = os.path.dirname(path)
    while folder and folder != os.path.dirname(folder):
        yield folder
        folder = os.path.dirname(folder)


_view: contextvars.ContextVar = contextvars.ContextVar("batchlint_view", default=None)


def viewing(view: View) -> Scoped:
    """Inside the block, files are read, and looked for, through `view`."""
    return Scoped(_view, view)


_current: contextvars.ContextVar = contextvars.ContextVar("batchlint_project", default=None)
_pinned: contextvars.ContextVar = contextvars.ContextVar("batchlint_pinned", default=None)


def pinning(versions: Mapping[str, str], source: str) -> Scoped:
    """Inside the block, the project config's `versions` (canonical name -> release, from `source`) are
    the releases in force: views made there carry them (`ProjectView.pinned`)."""
    return Scoped(_pinned, (versions, source))


def using(project: Project) -> Scoped:
    """Make `project` the boundary for references read inside the block."""
    return Scoped(_current, project)


def current() -> Optional[Project]:
    return _current.get()


def may_read(path: str) -> bool:
    """`ProjectView.may_read` of the view in force."""
    return ProjectView.now().may_read(path)


def top_of(path: str) -> str:
    """`ProjectView.top_of` of the view in force."""
    return ProjectView.now().top_of(path)


@lean_dataclass(frozen=True, eq=False)
class ProjectView:
    """The project as one lint reads it: the boundary references may not leave, the texts `--fix` has
    not written yet (real path -> bytes), and the files of a git revision (`check --since`). The engine
    makes one per lint (`now`) and hands it to the adapters in `Outside.project`: an adapter, and the
    readers it calls, read files through it alone."""

    boundary: Optional[Project] = None  # None: any path (a library caller that chose no boundary)
    overlay: Optional[Mapping[str, bytes]] = None
    revision: Optional[View] = None
    # The project config's `versions` (canonical name -> release) and the file that gives them.
    pinned: Optional[tuple[Mapping[str, str], str]] = None

    @classmethod
    def now(cls) -> ProjectView:
        """The view in force: what the run layer set for this lint (`using`, `overlaid`, `viewing`, `pinning`)."""
        return cls(_current.get(), _overlay.get(), _view.get(), _pinned.get())

    @property
    def substituted(self) -> bool:
        """Whether files are read through other bytes than their own (an editor's or `--fix`'s overlay, a git
        revision): their stamps on disk say nothing of what is read."""
        return bool(self.overlay) or self.revision is not None

    @property
    def key(self) -> tuple:
        """What tells two views apart, for caches of what was read through one: the boundary, the
        revision, the overlaid texts (the pins are not read from files, so no cache holds them)."""
        overlay = tuple(sorted((path, hash(data)) for path, data in self.overlay.items())) if self.overlay else ()
        return self.boundary, id(self.revision) if self.revision is not None else None, overlay

    def read_bytes(self, path: str, limit: Optional[int] = None) -> bytes:
        """The content of the regular file at `path` (or its overlay: `--fix` re-lints
        text it has not written); raises NotRegular, TooLarge or OSError. Every read is
        recorded with its digest, for the cache and for `--fix`'s check that a file
        did not change between linting and writing."""
        overlay, view = self.overlay, self.revision
        real = real_path(path) if overlay or view else ""
        data = overlay.get(real) if overlay else None
        limit = limits.MAX_FILE_BYTES if limit is None else limit
        if data is None and view is not None and view.covers(real):
            data = view.read(real, limit)
        elif data is None:
            data = _read_regular(path, limit)
        reads.record(path, data)
        return data

    def is_file(self, path: str) -> bool:
        """Whether a regular file is at `path`, as `read_bytes` sees files (through a revision)."""
        view = self.revision
        if view is not None:
            real = real_path(path)
            if view.covers(real):
                return real in view.files
        return os.path.isfile(path)

    def is_dir(self, path: str) -> bool:
        """Whether a folder is at `path`, as `read_bytes` sees files (through a revision)."""
        view = self.revision
        if view is not None:
            real = real_path(path)
            if real in view.folders:
                return True
            if real in view.absent_folders:
                return False
        return os.path.isdir(path)

    def may_read(self, path: str) -> bool:
        """Whether a reference to `path` may be followed: inside the boundary."""
        return self.boundary is None or self.boundary.contains(path)

    def top_of(self, path: str) -> str:
        """The top of the project the file at `path` belongs to: the innermost root of the boundary
        holding it, else its git checkout's top, else its own folder."""
        folder = real_path(os.path.dirname(os.path.abspath(path)))
        boundary = self.boundary
        roots = [r for r in (boundary.roots if boundary else ()) if folder == r or folder.startswith(r.rstrip(os.sep) + os.sep)]
        return max(roots, key=len) if roots else (git_root(folder) or folder)

    def contents(self, top: str, wanted: Callable[[str], bool], most_files: int, most_bytes: int,
                 skip: Callable[[str, str], bool] = lambda folder, name: False) -> Iterator[tuple[str, bytes]]:
        """`contents` read through this view."""
        return contents(top, wanted, most_files, most_bytes, skip, self)


_listings: per_run.Cache = per_run.cache()  # folder -> its listing (walk), for the run


def walk(top: str) -> Iterator[tuple[str, list, list]]:
    """`os.walk(top)`: (folder, its subfolders, its files) top-down, a linked folder listed but not
    entered, a folder that cannot be listed left out; the caller may prune or sort the subfolders, which
    are then entered in that order. Each folder is listed once in a run: the searches of a one-file lint
    (install commands, callers) walk the same project, and in a cold page cache a listing costs a read."""
    stack = [top]
    while stack:
        folder = stack.pop()
        listing = _listings.get(folder)
        if listing is None:
            listing = _listings[folder] = _listing(folder)
        if listing is _UNLISTED:
            continue
        subfolders, files, linked = listing
        subfolders = list(subfolders)
        yield folder, subfolders, list(files)
        stack.extend(os.path.join(folder, name) for name in reversed(subfolders) if name not in linked)


_UNLISTED = ()


def _listing(folder: str) -> tuple:
    """(subfolders, files, linked subfolders) of `folder`, as os.walk tells them apart (a link to a
    folder is a subfolder it does not enter), or _UNLISTED."""
    subfolders, files, linked = [], [], set()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if not is_dir:
                    files.append(entry.name)
                    continue
                subfolders.append(entry.name)
                try:
                    if entry.is_symlink():
                        linked.add(entry.name)
                except OSError:  # os.walk asks os.path.islink, which says no when it cannot tell
                    pass
    except OSError:
        return _UNLISTED
    return tuple(subfolders), tuple(files), frozenset(linked)


# Files and folders `contents` looks at, at most: run from a large folder that is no repository (the project
# is then the working folder), a walk of all of it would take longer than any lint.
MAX_WALKED = 100_000


def contents(top: str, wanted: Callable[[str], bool], most_files: int, most_bytes: int,
             skip: Callable[[str, str], bool] = lambda folder, name: False,
             view: Optional[ProjectView] = None) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of the files under `top` whose name `wanted` takes, in a sorted walk that leaves out
    the folders no project keeps its own code in (lint/discover.py SKIPPED_DIRS, hidden ones) and those
    `skip(folder, name)` names; at most `most_files` files, each read to `most_bytes`, and MAX_WALKED files
    and folders looked at. Every read is recorded (read_bytes), so a cached result that weighed them is
    reused only while they are unchanged."""
    from .discover import SKIPPED_DIRS

    view = view if view is not None else ProjectView.now()
    seen = entries = 0
    for folder, subfolders, files in walk(top):
        entries += len(subfolders) + len(files)
        if entries > MAX_WALKED:
            return
        subfolders[:] = sorted(d for d in subfolders
                               if d not in SKIPPED_DIRS and not d.startswith(".") and not skip(folder, d))
        # walk enters no linked folder: a file that is no link is in view exactly when its folder is.
        folder_in_view: Optional[bool] = None
        for name in sorted(files):
            if not wanted(name):
                continue
            if seen >= most_files:
                return  # no file after it is read: the walk need not go on
            seen += 1
            path = os.path.join(folder, name)
            if os.path.islink(path):
                if not view.may_read(path):
                    continue
            else:
                if folder_in_view is None:
                    folder_in_view = view.may_read(folder)
                if not folder_in_view:
                    continue
            try:
                yield path, view.read_bytes(path, most_bytes)
            except OSError:
                continue

