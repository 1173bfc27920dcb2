"""Experiments that bring their own trainer.

A launch line runs `python -m pkg.trainer.main`; when the project holds its
own `pkg/trainer/main.py` (a fork that vendors the framework it trains with,
as several RL research repositories do), Python runs that copy - the working
directory comes first on sys.path - and Hydra reads the copy's own `config/`
next to it. Rules that judge a line against the core trainer's schema ask here
for the keys the project's own trainer defines, so a key its copy added is not
called a typo.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from . import project, reads
from .document import Mapping, ParseError

_LEVELS = 12  # folders searched upward from the launch script: a project is not deeper
_MAX_KEYS = 20_000
_HYDRA_MAIN = re.compile(r"""@hydra\.main\(([^)]{0,400})\)""")
_ARGUMENT = r"""\b{}\s*=\s*["']([\w./-]{{1,200}})["']"""


def own_copy(script: str, entry: Optional[str]) -> Optional[str]:
    """The project's own file of the module a line runs (`a.b.c` -> a/b/c.py), found
    in the launch script's folder or one above it inside the project; None when the
    line runs a script or the installed framework."""
    if not entry or "/" in entry or entry.endswith(".py") or not all(p.isidentifier() for p in entry.split(".")):
        return None
    relative = os.path.join(*entry.split(".")) + ".py"
    return _upward_from(script, relative)


def own_script(script: str, entry: Optional[str]) -> Optional[str]:
    """The project's own file of the script a line runs (`open_instruct/dpo.py`), found from the
    launch script's folder or one above it inside the project (where the job's working folder
    usually is); None for a module, or a script the project does not hold."""
    if not entry or not entry.endswith(".py") or os.path.isabs(entry):
        return None
    return _upward_from(script, entry)


def _upward_from(script: str, relative: str) -> Optional[str]:
    """`relative` from the launch script's folder or one above it, inside the project."""
    for folder in project.upward(os.path.dirname(os.path.abspath(script)), _LEVELS):
        candidate = os.path.normpath(os.path.join(folder, relative))
        if not project.may_read(candidate):
            return None
        if os.path.isfile(candidate):
            return candidate
        reads.record(candidate)  # missing: creating it changes the result
    return None


_MAX_PROGRAM_FILES = 2_000
_MAX_PROGRAM_BYTES = 1 << 20  # per file


def program_imports(script: str, entry: Optional[str], package: str | tuple) -> Optional[bool]:
    """Whether the project's own program a line runs imports `package` (`trl`; a tuple: any of them)
    anywhere in the code it may run: its file, with the whole package it belongs to, else the modules
    beside it. None when the program is not the project's (an installed one may) or is too large to read."""
    path = own_script(script, entry)
    if path is None:
        return None
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(folder, "__init__.py")) and \
            os.path.isfile(os.path.join(os.path.dirname(folder), "__init__.py")):
        folder = os.path.dirname(folder)  # up to the top of the package
    if os.path.isfile(os.path.join(folder, "__init__.py")):
        files: list[str] = []
        for top, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            files.extend(os.path.join(top, n) for n in sorted(names) if n.endswith(".py"))
            if len(files) > _MAX_PROGRAM_FILES:
                return None
        files = [path] + [f for f in files if f != path]  # the program itself may sit outside the package
    else:
        files = [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".py")]
    # `import x`, `from x import y`, and a list: `import argparse, deepspeed`, `import os as o, trl`.
    packages = (package,) if isinstance(package, str) else package
    pattern = re.compile(rb"^[ \t]*(?:from[ \t]+|import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*)"
                         + b"(?:" + b"|".join(re.escape(p.encode()) for p in packages) + rb")\b", re.M)
    for file in files[:_MAX_PROGRAM_FILES]:
        try:
            if pattern.search(project.read_bytes(file, limit=_MAX_PROGRAM_BYTES)):
                return True
        except OSError:
            return None  # unreadable or too large: it may
    return False


def config_keys(path: str) -> frozenset:
    """Every dotted key of the YAML config at `path` (empty when it cannot be read)."""
    from .sources import read  # the YAML reader only when a project brings a trainer

    try:
        raw = project.read_bytes(path)
        document = read(path, raw.decode("utf-8-sig"), "yaml", from_utf8=True)
    except (OSError, UnicodeDecodeError, ParseError):
        reads.record(path)
        return frozenset()
    keys: set = set()
    stack = [("", document.root)]
    while stack and len(keys) < _MAX_KEYS:
        prefix, mapping = stack.pop()
        for key, value in mapping.items.items():
            dotted = f"{prefix}{key}"
            keys.add(dotted)
            if isinstance(value, Mapping):
                stack.append((dotted + ".", value))
    return frozenset(keys)


def hydra_main(script: str, entry: Optional[str]) -> Optional[tuple]:
    """(the program's file, its config folder, its config name or "") of the project's own copy of
    the module a line runs, from its `@hydra.main(config_path=..., config_name=...)`; None when the
    line runs no copy of the project's or it declares no config folder."""
    copy = own_copy(script, entry)
    if copy is None:
        return None
    try:
        text = project.read_bytes(copy, limit=1 << 20).decode("utf-8", "replace")
    except OSError:
        reads.record(copy)
        return None
    main = _HYDRA_MAIN.search(text)
    if main is None:
        return None
    path = re.search(_ARGUMENT.format("config_path"), main.group(1))
    name = re.search(_ARGUMENT.format("config_name"), main.group(1))
    if path is None:
        return None
    return copy, os.path.normpath(os.path.join(os.path.dirname(copy), path.group(1))), name.group(1) if name else ""


def hydra_keys(script: str, entry: Optional[str], config_name: Optional[str]) -> frozenset:
    """The keys of the Hydra config the project's own copy of `entry` reads
    (`@hydra.main(config_path="config", config_name="ppo_trainer")`, or the
    line's --config-name); empty when the line runs no copy of the project's."""
    main = hydra_main(script, entry)
    if main is None:
        return frozenset()
    _, folder, written = main
    name = config_name or written
    if not name:
        return frozenset()
    return config_keys(os.path.join(folder, name if name.endswith(".yaml") else name + ".yaml"))
