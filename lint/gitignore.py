"""git's ignore rules, applied while discovery walks a folder.

The rules in force in a folder are those git would apply there: the
repository's `.git/info/exclude`, then the `.gitignore` of every folder from
the repository's root down to that folder, each file's patterns relative to its
own folder; the last pattern that matches decides, a deeper file winning over a
shallower one. A repository nested in the walk (a `.git` inside it) starts over
with its own rules, as git does. The user's global excludes file
(`core.excludesFile`) is not read: the result depends on the repository only,
the same on a laptop and in CI.

Outside a git repository no `.gitignore` is read. This is what ruff does: it
walks with the `ignore` crate's standard filters and keeps that crate's
`require_git` default (ruff turned `require_git(false)` on in #5937 and
reverted it, see astral-sh/ruff#5930 and #6335), so a `.gitignore` with no
`.git` above it is not respected.

An entry is tested against the patterns that match it *itself*; the caller
prunes an ignored folder and never looks inside it, which is how git ends up
ignoring everything under an excluded folder (and why `!dir/file` cannot
re-include a file whose folder is excluded). It also means that a folder named
on the command line is walked even when it is ignored, as ruff and ripgrep do;
the patterns still apply to what is inside it.

`pathspec` compiles the patterns; it is imported only when a `.gitignore` or
an exclude file is actually read, which a run over named files never does.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# A .gitignore larger than this is not a list of patterns anyone wrote.
_MAX_BYTES = 1 << 20


class _Rules:
    """The patterns of one ignore file, and the folder they are relative to."""

    __slots__ = ("base", "patterns", "screen")

    def __init__(self, base: str, patterns: list):
        self.base = base  # relative to the repository's root, "/"-separated; "" for the root
        self.patterns = patterns  # (compiled regex, include) in file order; include True ignores
        self.screen = _screen(patterns)


class Rules:
    """The ignore rules in force in one folder of a repository (immutable; share freely)."""

    __slots__ = ("folder", "levels")

    def __init__(self, folder: str, levels: tuple):
        self.folder = folder  # this folder relative to the repository's root, "/"-separated; "" for the root
        self.levels = levels  # _Rules, lowest precedence first

    def ignored(self, name: str, is_dir: bool) -> bool:
        """Whether the entry `name` of this folder is ignored."""
        rel = f"{self.folder}/{name}" if self.folder else name
        for level in reversed(self.levels):
            path = rel[len(level.base) + 1:] if level.base else rel
            if is_dir:
                path += "/"
            if level.screen is not None and level.screen.match(path) is None:
                continue
            for regex, include in reversed(level.patterns):
                match = regex.match(path)
                if match is not None and _matches_itself(regex, match, path, is_dir):
                    return include
        return False

    def child(self, name: str) -> Rules:
        """The rules of the subfolder `name`, before its own `.gitignore` is read."""
        return Rules(f"{self.folder}/{name}" if self.folder else name, self.levels)

    def with_file(self, path: str, notices: list) -> Rules:
        """These rules and, above them, those of the `.gitignore` at `path` (in this folder)."""
        rules = _load(path, self.folder, notices)
        return self if rules is None else Rules(self.folder, self.levels + (rules,))


def enter(outer: Optional[Rules], folder: str, names, notices: list) -> Optional[Rules]:
    """The rules in force inside `folder`, whose entries are `names`, given `outer`, the
    rules in force where it sits (None: outside any repository)."""
    if ".git" in names:
        rules = _repository(folder, notices)
    elif outer is None:
        return None
    else:
        rules = outer
    if ".gitignore" in names:
        rules = rules.with_file(os.path.join(folder, ".gitignore"), notices)
    return rules


def _repository(root: str, notices: list) -> Rules:
    """The rules at the root of a repository, before its `.gitignore` is read."""
    rules = Rules("", ())
    exclude = _exclude_file(root)
    # Lowest precedence: below every .gitignore.
    return rules if exclude is None else rules.with_file(exclude, notices)


def above(top: str, notices: list) -> Optional[Rules]:
    """The rules in force at the folder `top`, before its own `.gitignore` is read: those of
    the repository it is inside (None when there is none, or when `top` is its root)."""
    from .project import git_root

    top = os.path.abspath(top)
    root = git_root(top)
    if root is None or root == top:
        return None
    rules = _repository(root, notices).with_file(os.path.join(root, ".gitignore"), notices)
    folder = root
    *between, last = os.path.relpath(top, root).split(os.sep)
    for name in between:
        folder = os.path.join(folder, name)
        rules = rules.child(name).with_file(os.path.join(folder, ".gitignore"), notices)
    return rules.child(last)


def _exclude_file(root: str) -> Optional[str]:
    """`info/exclude` of the repository at `root` (its `.git` a folder, or a worktree's or
    submodule's file naming the git folder)."""
    dot_git = os.path.join(root, ".git")
    git_dir = dot_git
    if os.path.isfile(dot_git):
        text = _read(dot_git)
        if text is None or not text.startswith("gitdir:"):
            return None
        git_dir = os.path.join(root, text[len("gitdir:"):].strip())
        common = _read(os.path.join(git_dir, "commondir"))  # a linked worktree shares the main one's info/
        if common is not None and common.strip():
            git_dir = os.path.join(git_dir, common.strip())
    return os.path.join(git_dir, "info", "exclude")


def _load(path: str, base: str, notices: list) -> Optional[_Rules]:
    try:
        text = _read(path, strict=True)
    except OSError as exc:
        from .discover import display_path

        notices.append(f"cannot read {display_path(path)} ({exc.strerror or exc}): its patterns are not applied")
        return None
    if text is None:
        return None
    patterns = _compile(text.splitlines())
    return _Rules(base, patterns) if patterns else None


def _read(path: str, strict: bool = False) -> Optional[str]:
    """The text of the regular file at `path`; None when there is none. Never opens a FIFO
    or a device: a hostile `.gitignore` must not hang the walk. With `strict`, a file
    that is there but cannot be read raises OSError."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        if strict:
            raise
        return None
    if stat.S_ISDIR(info.st_mode):
        return None
    try:
        if not stat.S_ISREG(info.st_mode):
            from .project import kind_of

            raise OSError(f"not a regular file: {kind_of(info.st_mode)}")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError("not a regular file")
            data = handle.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            raise OSError(f"over {_MAX_BYTES:,} bytes")
    except OSError:
        if strict:
            raise
        return None
    if data.startswith(b"\xef\xbb\xbf"):  # git skips a UTF-8 byte order mark
        data = data[3:]
    return data.decode("utf-8", "surrogateescape")  # as os.scandir decodes names


def _compile(lines: list) -> list:
    """(regex, include) of each pattern line; comments, blank and invalid lines (which git
    skips too) dropped."""
    from pathspec import GitIgnoreSpec

    try:
        patterns = list(GitIgnoreSpec.from_lines(lines).patterns)
    except Exception:  # one bad line (a lone "!") fails the lot: compile line by line
        patterns = []
        for line in lines:
            try:
                patterns.extend(GitIgnoreSpec.from_lines([line]).patterns)
            except Exception:
                continue
    return [(p.regex, p.include) for p in patterns if p.include is not None and p.regex is not None]


def _matches_itself(regex, match, path: str, is_dir: bool) -> bool:
    """Whether the pattern matched the entry `path` itself, not one of its folders.

    pathspec's patterns also match everything under a folder they match: the
    named group `ps_d` then marks the slash after that folder. That slash is the
    entry's own only for a folder (whose path ends in "/"). A pattern without
    the group (`dir/**`, `**`) matches what is under a folder: a folder matches
    it itself when its name without the slash does too (`dir/**` matches
    `dir/sub` but not `dir`)."""
    if "ps_d" in regex.groupindex:
        mark = match.start("ps_d")
        if mark != -1:
            return is_dir and mark == len(path) - 1
        return True
    return not is_dir or regex.match(path[:-1]) is not None


def _screen(patterns: list):
    """One regex matching whatever any of `patterns` matches, to pass most entries by in a
    single test; None when it cannot be built."""
    import re

    if len(patterns) < 4:
        return None
    try:
        return re.compile("|".join(f"(?:{regex.pattern.replace('(?P<ps_d>', '(?:')})" for regex, _ in patterns))
    except (re.error, TypeError, AttributeError):
        return None
