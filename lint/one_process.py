"""W = 1 for a program a plain interpreter runs (`python train.py --deepspeed_config ds.json`).

A launch line with no launcher starts one process. Whether the program then trains on one process
is its runtime's to say (spec.OneProcess: DeepSpeed discovers its processes through MPI, which outside
mpirun/srun finds one), and only when nothing around the line starts or announces more: a launcher's
variables given to it (`export WORLD_SIZE=4`, `RANK=0 python ...`), a batch script's scheduler
(`#SBATCH`), another file in view that runs the script (`srun bash run.sh`, `mpirun -np 8 bash run.sh`,
or a caller that exports a launcher's variables first), or a program that starts processes of its own.
Any doubt leaves W unknown: a false finding is worse than a missing one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Optional

from . import project
from .frameworks.launchers import SCHEDULER_DIRECTIVES
from .frameworks.spec import OneProcess
from .launch import Launch
from .own_trainer import program_imports
from .plan import Fact, Origin
from .sources.shell import in_directory

# Files that may run a script: shell and job scripts, job descriptions (YAML), make and just files.
_CALLER_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".pbs", ".qsub", ".lsf", ".job",
                    ".yaml", ".yml")
_CALLER_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "justfile", "Justfile"})
_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages", "venv"})
# Past this many such files read, or files and folders looked at, the script may have a caller not
# looked at: W stays unknown.
_MAX_CALLER_FILES = 5_000
_MAX_ENTRIES = 100_000
_MAX_CALLER_BYTES = 1 << 20
_DIRECTIVE = re.compile(rb"^[ \t]*(?:" + b"|".join(re.escape(d) for d in SCHEDULER_DIRECTIVES) + rb")", re.M)
# The path a file names a script by: the characters before its name up to a shell word's end.
_PATH_BEFORE = rb"([^\s'\"=;|&()<>`,\[\]{}]*)"


def judge(line: Launch, script: str, text: str, callers: tuple = ()) -> Optional[Callable[[OneProcess], Optional[Fact]]]:
    """For a plain interpreter line (Launch.alone) of `script` (its text `text`; `callers`: the scripts
    that ran it, outermost first): a function giving, for a runtime that finds one process
    (spec.OneProcess), the world size 1 as a fact of the line, or None when anything leaves it in
    doubt. None for any other line."""
    if not line.alone or line.world_size is not None:
        return None

    judged: dict = {}  # spec -> W: the line's scripts and program are looked through once for each runtime

    def one(spec: OneProcess) -> Optional[Fact]:
        if spec not in judged:
            judged[spec] = _one(line, script, text, callers, spec)
        return judged[spec]

    return one


def _one(line: Launch, script: str, text: str, callers: tuple, spec: OneProcess) -> Optional[Fact]:
    """W = 1 of the line for the runtime `spec`, or None when the line, its scripts or its program leave it in doubt."""
    if any(name in line.command.env for name in spec.env):
        return None  # a launcher's variables, from the line, the script or a caller
    if _directives(text.encode("utf-8", "replace")) or any(_batch_script(path) for path in callers):
        return None
    if _named_elsewhere((callers or (script,))[0]) or not _runs_alone(script, _program(line, script), spec):
        return None
    span = line.command.span.elsewhere(script)
    return Fact(1, "world size", span, Origin.LAUNCH, detail=spec.why)


def _directives(data: bytes) -> bool:
    return _DIRECTIVE.search(data) is not None


def _batch_script(path: str) -> bool:
    """A script holding a scheduler's directives; True when it cannot be read (in doubt)."""
    try:
        return _directives(project.read_bytes(path, limit=_MAX_CALLER_BYTES))
    except OSError:
        return True


def _program(line: Launch, script: str) -> Optional[str]:
    """The script the line runs, as a path from `script`'s folder, after the `cd` the script made
    before the line (None when that folder is not known)."""
    command = line.command
    path = in_directory(command.directory, line.entry, command.anchored, command.placed) if line.entry else None
    if path is not None and os.path.isabs(path):
        path = os.path.relpath(path, os.path.dirname(os.path.abspath(script)))
    return path


def _runs_alone(script: str, entry: Optional[str], spec: OneProcess) -> bool:
    """The program (in view) hands its config to the runtime and starts no process of its own."""
    return entry is not None and bool(program_imports(script, entry, spec.drives)) \
        and program_imports(script, entry, spec.starts) is False


def _named_elsewhere(script: str) -> bool:
    """Whether a file in view other than `script` names it by a path that may be its own (`srun
    bash run.sh`, `sbatch scripts/run.sh`, `bash $DIR/run.sh`): it may run it under a launcher or
    with a launcher's variables. True as well when there are too many such files to look through."""
    real = os.path.realpath(script)
    name = os.path.basename(real).encode()
    folders = real.split(os.sep)[:-1]
    pattern = re.compile(_PATH_BEFORE + re.escape(name) + rb"(?![\w.-])")
    seen = entries = 0
    for folder, dirs, files in os.walk(_top(real)):
        entries += len(dirs) + len(files)
        if entries > _MAX_ENTRIES:
            return True
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS)
        for file in sorted(files):
            candidate = os.path.join(folder, file)
            if candidate == real or not (file.endswith(_CALLER_SUFFIXES) or file in _CALLER_NAMES):
                continue
            seen += 1
            if seen > _MAX_CALLER_FILES:
                return True
            if not project.may_read(candidate):
                continue
            try:
                data = project.read_bytes(candidate, limit=_MAX_CALLER_BYTES)
            except OSError:
                continue  # not a regular file, or past the bound: a data file, not a caller
            if name in data and any(_may_be(match.group(1), folders) for match in pattern.finditer(data)):
                return True
    return False


def _may_be(written: bytes, folders: list) -> bool:
    """Whether `written/NAME` may be the script in `folders`: the folders written after the last one
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
    """The deepest project folder that holds the script (what is in view), else its own folder."""
    current = project.current()
    roots = [root for root in (current.roots if current else ()) if real.startswith(root.rstrip(os.sep) + os.sep)]
    return max(roots, key=len) if roots else os.path.dirname(real)
