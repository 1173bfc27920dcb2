"""Which files to lint: the paths given, directories walked, excludes applied."""

from __future__ import annotations

import os
from typing import Iterator

from .config import Settings
from .sources import format_of
from .sources.shell import is_shell_script

# Folders no one wants linted; pruned before descending.
SKIPPED_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", "build", "dist",
}


def display_path(path: str, root: str = "") -> str:
    """`path` relative to `root` (default: the working directory) when inside
    it, else as given; forward slashes, no leading `./`."""
    absolute = os.path.abspath(path)
    root = os.path.abspath(root or os.getcwd())
    if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
        path = os.path.relpath(absolute, root)
    return os.path.normpath(path).replace(os.sep, "/")


class MissingPath(Exception):
    pass


def discover(paths: list, settings: Settings, force_exclude: bool = False) -> Iterator[str]:
    """Yield config-format files under `paths`, sorted within each directory.
    Files named explicitly are yielded even when excluded, unless force_exclude
    (pre-commit passes every file explicitly)."""
    seen = set()
    for path in paths:
        if not os.path.exists(path):
            raise MissingPath(path)
        if os.path.isdir(path):
            candidates = _walk(path, settings)
        else:
            candidates = [path] if format_of(path) or _shebang_script(path, os.path.basename(path)) else []
            if force_exclude:
                candidates = [p for p in candidates if not settings.excluded(settings.relative(p))]
        for candidate in candidates:
            key = os.path.abspath(candidate)  # os.walk follows no directory links, so this is unique enough
            if key not in seen:
                seen.add(key)
                yield candidate


def _walk(top: str, settings: Settings) -> Iterator[str]:
    def excluded(path: str) -> bool:
        return bool(settings.exclude) and settings.excluded(settings.relative(path))

    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not excluded(os.path.join(folder, d)))
        for name in sorted(files):
            full = os.path.join(folder, name)
            if (format_of(name) or _shebang_script(full, name)) and not excluded(full):
                yield full


def _shebang_script(path: str, name: str) -> bool:
    """A launch script without a suffix (`train`, `run`) that starts with a shell shebang."""
    if "." in name:
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(128)
    except OSError:
        return False
    return is_shell_script(path, head)
