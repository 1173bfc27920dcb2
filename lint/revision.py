"""The project as it was at a git revision: what changed since, and a `project.View` that reads
each changed file as it was then. `explain --compare` and `check --since` both stand on it.

Git is asked through argument lists with a timeout, never a shell; nothing is checked out and
nothing is written. An unchanged file, an ignored one or a submodule is the disk's on both sides.
"""

from __future__ import annotations

import os
import subprocess

from . import per_run, project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

GIT_TIMEOUT = 60  # seconds per git command: a hung git (a lock, a prompt) must not hang CI


class CompareError(Exception):
    """A revision or repository that cannot be compared with: exit 2."""


class Revision:
    """The project at one commit: the files that differ from the work tree (real path -> git's
    status letter: A, D, M, T; untracked files as added), read as they were through `view`."""

    def __init__(self, commit: str, top: str, changed: dict):
        self.commit, self.top, self.changed = commit, top, changed
        self._view: Optional[project.View] = None
        # The per-run caches of this side (the scripts naming a file, the releases pinned): what the
        # work tree's lint found is not what the files said then.
        self.caches = per_run.Side()

    @property
    def view(self) -> project.View:
        if self._view is None:
            self._view = _view_at(self.commit, self.top, self.changed)
        return self._view

    def touches(self, paths) -> bool:
        """Whether any of `paths` (absolute) changed since the commit."""
        changed = self.changed
        return any(os.path.realpath(p) in changed for p in paths) if changed else False

    def reading(self) -> _Reading:
        """`with revision.reading():` files are read as they were at the commit."""
        return _Reading(self)


class _Reading:
    __slots__ = ("revision", "viewing")

    def __init__(self, revision: Revision):
        self.revision = revision

    def __enter__(self) -> None:
        self.viewing = project.viewing(self.revision.view)
        self.viewing.__enter__()
        self.revision.caches.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.revision.caches.__exit__(*exc)
        self.viewing.__exit__(*exc)


def at(rev: str, folder: str, empty_head: bool = False) -> Optional[Revision]:
    """The project holding `folder` at `rev`. Raises CompareError for what is not a revision or
    not a repository. With `empty_head`, a repository without a commit yet gives None (a first
    commit changes nothing that was there)."""
    if not rev or rev.startswith("-") or "\0" in rev:
        raise CompareError(f"not a revision: {rev!r}")
    folder = os.path.abspath(folder)
    while not os.path.isdir(folder) and folder != os.path.dirname(folder):
        folder = os.path.dirname(folder)  # a path deleted since REV: its repository is above it
    top = os.path.realpath(git(["rev-parse", "--show-toplevel"], folder, "not a git repository").decode().strip())
    try:
        commit = git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], top,
                     f"unknown revision {rev!r} (in a shallow clone, fetch it: fetch-depth: 0)").decode().strip()
    except CompareError:
        if empty_head and rev == "HEAD" and not _has_commits(top):
            return None
        raise
    return Revision(commit, top, _changed(commit, top))


def _has_commits(top: str) -> bool:
    try:
        git(["rev-parse", "--verify", "--quiet", "HEAD"], top, "")
    except CompareError:
        return False
    return True


def git(args: list, cwd: str, failure: str) -> bytes:
    """Git's output; CompareError with `failure` when git fails, is missing or takes too long."""
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise CompareError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise CompareError(f"git {args[0]} took more than {GIT_TIMEOUT} s") from None
    except OSError as exc:
        raise CompareError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise CompareError(failure)
    return done.stdout


def _changed(commit: str, top: str) -> dict:
    """real path -> status (A, D, M, T) of each file that differs between `commit` and the work tree,
    untracked files (not ignored) as added."""
    out = git(["diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-relative",
               commit, "--"], top, "git diff failed").split(b"\0")
    changed = {}
    for status, name in zip(out[0::2], out[1::2]):
        if name:
            changed[os.path.join(top, os.fsdecode(name))] = status.decode()[:1]
    for name in git(["ls-files", "-z", "--others", "--exclude-standard"], top, "git ls-files failed").split(b"\0"):
        if name:
            changed[os.path.join(top, os.fsdecode(name))] = "A"
    return changed


def _view_at(commit: str, top: str, changed: dict) -> project.View:
    """The project at `commit`: each changed file that was there with its content then, each
    added one absent; the folders that held a file then exist."""
    files, folders, links = {}, set(), set()
    for entry in git(["ls-tree", "-r", "-z", "--long", "--full-tree", commit], top, "git ls-tree failed").split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) != 4 or parts[1] != b"blob":
            continue  # a submodule: read from disk on both sides
        path = os.path.join(top, os.fsdecode(name))
        folders.add(os.path.dirname(path))
        if parts[0] == b"120000":
            links.add(path)  # a symlink's blob is its target, not a file's text: the disk's on both sides
        elif path in changed:
            files[path] = (parts[2].decode(), int(parts[3]) if parts[3].isdigit() else 0)
    absent = [p for p in changed if p not in files and p not in links]
    every = {f for folder in folders for f in _with_parents(folder, top)}

    def read(sha: str) -> bytes:
        try:
            return git(["cat-file", "blob", sha], top, f"git cannot read the blob {sha}")
        except CompareError as exc:  # read as any unreadable file is: that file is left out, the run goes on
            raise OSError(str(exc)) from None

    return project.View.of(files, absent, read, folders=every)


def _with_parents(folder: str, top: str):
    while folder.startswith(top):
        yield folder
        if folder == top:
            return
        folder = os.path.dirname(folder)
