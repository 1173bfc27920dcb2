"""Experiments that bring their own trainer.

A launch line runs `python -m pkg.trainer.main`; when the project holds its
own `pkg/trainer/main.py` (a fork that vendors the framework it trains with,
as several RL research repositories do), Python runs that copy - the working
directory comes first on sys.path - and Hydra reads the copy's own `config/`
next to it. Rules that judge a line against the core trainer's schema ask here
for the keys the project's own trainer defines, so a key its copy added is not
called a typo.

Every file is read through a project view (lint/project.py): the one an adapter was handed
(`Outside.project`), else, for the run layer and rules, the view in force.
"""

from __future__ import annotations

import os
import re

from . import per_run, reads
from .document import Mapping, ParseError
from .lazy_pattern import LazyPattern
from .project import ProjectView, upward

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_LEVELS = 12  # folders searched upward from the launch script: a project is not deeper
_MAX_KEYS = 20_000
_HYDRA_MAIN = LazyPattern(r"""@hydra\.main\(([^)]{0,400})\)""")
_ARGUMENT = r"""\b{}\s*=\s*["']([\w./-]{{1,200}})["']"""


def own_copy(script: str, entry: Optional[str], view: ProjectView) -> Optional[str]:
    """The project's own file of the module a line runs (`a.b.c` -> a/b/c.py), found
    in the launch script's folder or one above it inside the project; None when the
    line runs a script or the installed framework."""
    if not entry or "/" in entry or entry.endswith(".py") or not all(p.isidentifier() for p in entry.split(".")):
        return None
    relative = os.path.join(*entry.split(".")) + ".py"
    return _upward_from(script, relative, view)


def own_script(script: str, entry: Optional[str], view: ProjectView) -> Optional[str]:
    """The project's own file of the script a line runs (`open_instruct/dpo.py`), found from the
    launch script's folder or one above it inside the project (where the job's working folder
    usually is); None for a module, or a script the project does not hold."""
    if not entry or not entry.endswith(".py") or os.path.isabs(entry):
        return None
    return _upward_from(script, entry, view)


def _upward_from(script: str, relative: str, view: ProjectView) -> Optional[str]:
    """`relative` from the launch script's folder or one above it, inside the project."""
    for folder in upward(os.path.dirname(os.path.abspath(script)), _LEVELS):
        candidate = os.path.normpath(os.path.join(folder, relative))
        if not view.may_read(candidate):
            return None
        if view.is_file(candidate):
            return candidate
        reads.record(candidate)  # missing: creating it changes the result
    return None


_MAX_PROGRAM_FILES = 2_000
_MAX_PROGRAM_BYTES = 1 << 20  # per file


def program_imports(script: str, entry: Optional[str], package: str | tuple, runtime: tuple = (),
                    view: Optional[ProjectView] = None) -> Optional[bool]:
    """Whether the project's own program a line runs imports `package` (`trl`; a tuple: any of them)
    in the code it runs: its file and the project's modules it imports, import by import (a sibling
    script that imports trl is not run). None when the program is not the project's (an installed
    one may) or its code is too large or unreadable. `runtime`: packages (a copy of the runtime the
    program hands its config to) whose modules are not followed: what they import is theirs."""
    # `import x`, `from x import y`, and a list: `import argparse, deepspeed`, `import os as o, trl`.
    packages = (package,) if isinstance(package, str) else package
    pattern = re.compile(rb"^[ \t]*(?:from[ \t]+|import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*)"
                         + b"(?:" + b"|".join(re.escape(p.encode()) for p in packages) + rb")\b", re.M)
    return _program_holds(script, entry, pattern, runtime, view)


# A call that trains: a trainer built (`Trainer(`, `SFTTrainer(`; not a class statement defining one),
# `trainer.train(`, a custom loop's `loss.backward(` / `deepspeed.initialize(`, Lightning's `.fit(`.
_TRAINS = LazyPattern(rb"(?<!class )(?<![\w])\w*Trainer\s*\(|\.(?:train|backward|fit)\s*\(|deepspeed\.initialize\s*\(")
_IMPORT = LazyPattern(rb"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w \t,*]+)|import[ \t]+([\w., \t]+))", re.M)


def program_trains(script: str, entry: Optional[str], view: Optional[ProjectView] = None) -> Optional[bool]:
    """Whether the project's own program a line runs may train: a training call in the code it runs
    (Eagle's data_prepare.py parses the Trainer's flags to build datasets and imports nothing that
    trains). None as for program_imports."""
    return _program_holds(script, entry, _TRAINS, view=view)


# Keyed by the project too: one run may lint files of several projects, each reading only its own.
_held: per_run.Cache = per_run.cache()  # (program, pattern, project roots) -> (verdict, the reads it took)
_entries: per_run.Cache = per_run.cache()  # (folder, project roots) -> the names in it (empty when unreadable)


def _project_roots(view: ProjectView) -> Optional[tuple]:
    return view.boundary.roots if view.boundary else None


def _program_holds(script: str, entry: Optional[str], pattern: re.Pattern | LazyPattern, runtime: tuple = (),
                   view: Optional[ProjectView] = None) -> Optional[bool]:
    """Whether `pattern` is in the program's file or in a module of the project it imports, followed
    import by import; None when the program is not the project's or its code cannot all be read.
    Found once a run for each program: every launch line running it asks again."""
    view = view or ProjectView.now()
    path = own_script(script, entry, view)
    if path is None:
        return None
    return reads.remembered(_held, (path, pattern.pattern, runtime, _project_roots(view)),
                            lambda: _search(path, pattern, runtime, view))


def _search(path: str, pattern: re.Pattern | LazyPattern, runtime: tuple, view: ProjectView) -> Optional[bool]:
    """`runtime`: packages whose own modules are not followed (a copy of the runtime the program hands
    its config to: what its code imports is the runtime's doing, not the program's)."""
    roots = _roots(path, view)
    queue, seen = [path], {path}
    while queue:
        file = queue.pop(0)
        try:
            code = view.read_bytes(file, limit=_MAX_PROGRAM_BYTES)
        except OSError:
            return None  # unreadable or too large: it may
        if pattern.search(code):
            return True
        for module in _imported(code, file):
            if module[0] is None and module[1][:1] and module[1][0] in runtime:
                continue
            for found in _module_files(module, roots, view):
                if found not in seen:
                    if len(seen) >= _MAX_PROGRAM_FILES:
                        return None
                    seen.add(found)
                    queue.append(found)
    return False


def _roots(path: str, view: ProjectView) -> list:
    """Where the program's absolute imports may be found in the project: its own folder (sys.path[0])
    and each folder above it inside the project (the working folder a launch runs in; the top of a
    project installed with `pip install -e .`, as LLaVA's train_mem.py imports `llava.train.train`)."""
    roots = []
    for folder in upward(os.path.dirname(path), _LEVELS):
        if not view.may_read(folder):
            break
        roots.append(folder)
    return roots


def _imported(code: bytes, file: str) -> list:
    """(folder, module parts, member) of each import in `code`: folder None for an absolute import
    (found from the roots), the folder a relative one starts from; member "" for `import m`."""
    names: list = []
    for match in _IMPORT.finditer(code):
        base, members, plain = match.groups()
        if plain is not None:
            names.extend((None, part.split()[0].decode().split("."), "") for part in plain.split(b",") if part.split())
            continue
        module = base.decode()
        dots = len(module) - len(module.lstrip("."))
        folder = None
        if dots:
            folder = os.path.dirname(file)
            for _ in range(dots - 1):
                folder = os.path.dirname(folder)
        parts = module[dots:].split(".") if module[dots:] else []
        for member in members.split(b","):
            word = member.split()[0].decode() if member.split() else ""
            names.append((folder, parts, "" if word == "*" else word))
    return names


def _module_files(name: tuple, roots: list, view: ProjectView) -> list:
    """The project's files an import runs: the module's file and the `__init__.py` of each package
    on its way (`a.b.c` runs a/__init__.py, a/b/__init__.py, a/b/c.py), and for `from m import x`
    also m/x.py when x is a submodule."""
    start, parts, member = name
    files: list = []
    for top in roots if start is None else [start]:
        for path in (parts, parts + [member]) if member else (parts,):
            folder = top
            for part in path:
                names = _names_in(folder, view)
                if part + ".py" in names:
                    _add(files, os.path.join(folder, part + ".py"), view)
                    break  # a module: nothing below it
                if part not in names:
                    reads.record(os.path.join(folder, part + ".py"))  # missing: creating it changes the result
                    break
                folder = os.path.join(folder, part)
                if "__init__.py" in _names_in(folder, view):
                    _add(files, os.path.join(folder, "__init__.py"), view)
    return files


def _add(files: list, path: str, view: ProjectView) -> None:
    if path not in files and view.may_read(path):
        files.append(path)


def _names_in(folder: str, view: ProjectView) -> frozenset:
    """The entries of `folder`, listed once a run (an import is looked for in several folders)."""
    key = (folder, _project_roots(view))
    found = _entries.get(key)
    if found is None:
        try:
            found = frozenset(os.listdir(folder)) if view.may_read(folder) else frozenset()
        except OSError:
            found = frozenset()
        _entries[key] = found
    return found


# -- a program that hands over to a framework's entry point --------------------------------------

# What makes a program read its own arguments or config, so that the entry point it calls does not
# read the line as it would alone: argv rewritten, a parser or Hydra config of its own, a config store.
_OWN_READING = LazyPattern(r"\bsys\.argv\b|@hydra\.main\b|\bArgumentParser\b|\bparse_args\b|\bConfigStore\b"
                           r"|\bcompose\s*\(|\binitialize(?:_config_dir|_config_module)?\s*\(|\bfire\.Fire\b|\bclick\.")
# `from pkg.mod import main [as alias]`, `from pkg import mod [as alias]`, `import pkg.mod [as alias]`.
_FROM_MAIN = LazyPattern(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+main\b(?:[ \t]+as[ \t]+(\w+))?", re.M)
_FROM_MODULE = LazyPattern(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\w+)(?:[ \t]+as[ \t]+(\w+))?[ \t]*$", re.M)
_IMPORT_MODULE = LazyPattern(r"^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?[ \t]*$", re.M)
_handovers: per_run.Cache = per_run.cache()  # (program, project roots) -> the modules it hands over to


def handed_over(script: str, entry: str, module: bool, view: ProjectView) -> tuple:
    """The modules whose `main()` the project's own program a line runs calls with nothing of its own
    read first (`scripts/train_fold.py`: `from verl.trainer.main_ppo import main; main()`): that entry
    point then reads the line's arguments as it would run alone, so the line is read as its own.
    Empty when the program is not the project's, reads its arguments itself (argparse, Hydra, sys.argv)
    or calls no module's main without arguments."""
    path = own_copy(script, entry, view) if module else own_script(script, entry, view)
    if path is None:
        return ()
    return reads.remembered(_handovers, (path, _project_roots(view)), lambda: _handed_over(path, view))


def _handed_over(path: str, view: ProjectView) -> tuple:
    try:
        text = view.read_bytes(path, limit=_MAX_PROGRAM_BYTES).decode("utf-8", "replace")
    except OSError:
        return ()
    if _OWN_READING.search(text):
        return ()
    found = []
    for match in _FROM_MAIN.finditer(text):  # from pkg.mod import main [as alias]; alias()
        if re.search(rf"(?<![\w.]){re.escape(match.group(2) or 'main')}\(\s*\)", text):
            found.append(match.group(1))
    for match in _FROM_MODULE.finditer(text):  # from pkg import mod [as alias]; alias.main()
        name = match.group(3) or match.group(2)
        if match.group(2) != "main" and re.search(rf"(?<![\w.]){re.escape(name)}\.main\(\s*\)", text):
            found.append(f"{match.group(1)}.{match.group(2)}")
    for match in _IMPORT_MODULE.finditer(text):  # import pkg.mod [as alias]; pkg.mod.main()
        name = match.group(2) or match.group(1)
        if re.search(rf"(?<![\w.]){re.escape(name)}\.main\(\s*\)", text):
            found.append(match.group(1))
    return tuple(dict.fromkeys(found))


def config_keys(path: str, view: ProjectView) -> frozenset:
    """Every dotted key of the YAML config at `path` (empty when it cannot be read)."""
    from .sources import read  # the YAML reader only when a project brings a trainer

    try:
        raw = view.read_bytes(path)
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


def hydra_main(script: str, entry: Optional[str], view: Optional[ProjectView] = None) -> Optional[tuple]:
    """(the program's file, its config folder, its config name or "") of the project's own copy of
    the module a line runs, from its `@hydra.main(config_path=..., config_name=...)`; None when the
    line runs no copy of the project's or it declares no config folder."""
    view = view or ProjectView.now()
    copy = own_copy(script, entry, view)
    if copy is None:
        return None
    try:
        text = view.read_bytes(copy, limit=1 << 20).decode("utf-8", "replace")
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


def hydra_keys(script: str, entry: Optional[str], config_name: Optional[str],
               view: Optional[ProjectView] = None) -> frozenset:
    """The keys of the Hydra config the project's own copy of `entry` reads
    (`@hydra.main(config_path="config", config_name="ppo_trainer")`, or the
    line's --config-name); empty when the line runs no copy of the project's."""
    view = view or ProjectView.now()
    main = hydra_main(script, entry, view)
    if main is None:
        return frozenset()
    _, folder, written = main
    name = config_name or written
    if not name:
        return frozenset()
    return config_keys(os.path.join(folder, name if name.endswith(".yaml") else name + ".yaml"), view)
