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

from . import per_run, project, reads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

MAX_FILES = 4000
MAX_BYTES = 512 << 10

_found: per_run.Cache = per_run.cache()  # (project top, pattern, package) -> (path or None, the reads it took)


def own_loader(path: str, pattern: bytes, package: str) -> Optional[str]:
    """The project's file (relative to its top) that defines its own loader of the config at `path`,
    or None. Files inside a folder named `package` (a copy of the framework) are the framework's."""
    top = project.top_of(path)
    found = reads.remembered(_found, (top, pattern, package),
                             lambda: _search(top, re.compile(pattern, re.M), package))
    return os.path.relpath(found, top).replace(os.sep, "/") if found else None


def _search(top: str, pattern: re.Pattern, package: str) -> Optional[str]:
    def copy_of_the_framework(folder: str, name: str) -> bool:
        return name == package and os.path.isfile(os.path.join(folder, name, "__init__.py"))

    for path, raw in project.contents(top, lambda name: name.endswith(".py"), MAX_FILES, MAX_BYTES,
                                      skip=copy_of_the_framework):
        if pattern.search(raw):
            return path
    return None
