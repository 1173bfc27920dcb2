"""Whether a project reads a framework's config files with a loader of its own.

A pretraining project built on TorchTitan may keep its own `config_manager.py` with its own
`JobConfig`: its `train.py` reads the TOML through that, and TorchTitan's key sets say nothing
of what the file may hold. A framework declares what such a loader looks like
(`Framework.own_loader`: a pattern of the code that defines one); a project holding that code
outside a copy of the framework's own package has its own reader, and the rules that judge a
config's key set (`Rule.judges_keys`) are silent on its configs.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from . import per_run, project, reads

MAX_FILES = 4000
MAX_BYTES = 512 << 10

_found: dict = per_run.cache()  # (project top, pattern, package) -> (path or None, the reads it took)


def own_loader(path: str, pattern: bytes, package: str) -> Optional[str]:
    """The project's file (relative to its top) that defines its own loader of the config at `path`,
    or None. Files inside a folder named `package` (a copy of the framework) are the framework's."""
    current = project.current()
    top = _top(path, current.roots if current else ())
    key = (top, pattern, package)
    if key not in _found:
        with reads.tracking() as touched:
            found = _search(top, re.compile(pattern, re.M), package)
        _found[key] = (found, dict(touched.paths))
    found, touched = _found[key]
    for read, digest in touched.items():  # a cached lint result depends on the files searched
        reads.replay(read, digest)
    return os.path.relpath(found, top).replace(os.sep, "/") if found else None


def _top(path: str, roots: tuple) -> str:
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    inside = [r for r in roots if folder == r or folder.startswith(r.rstrip(os.sep) + os.sep)]
    return max(inside, key=len) if inside else (project.git_root(folder) or folder)


def _search(top: str, pattern: re.Pattern, package: str) -> Optional[str]:
    from .discover import SKIPPED_DIRS

    seen = 0
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_DIRS and not d.startswith(".")
                               and not (d == package and os.path.isfile(os.path.join(folder, d, "__init__.py"))))
        for name in sorted(files):
            if not name.endswith(".py") or seen >= MAX_FILES:
                continue
            seen += 1
            candidate = os.path.join(folder, name)
            if not project.may_read(candidate):
                continue
            try:
                raw = project.read_bytes(candidate, MAX_BYTES)
            except OSError:
                continue
            if pattern.search(raw):
                return candidate
    return None
