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

from . import project
from .frameworks.launchers import SCHEDULER_DIRECTIVES
from .frameworks.spec import OneProcess
from .launching.callers import named_elsewhere
from .launching.lines import Launch
from .lazy_pattern import LazyPattern
from .own_trainer import program_imports
from .plan import Fact, Origin
from .sources.shell import in_directory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_MAX_CALLER_BYTES = 1 << 20  # of a calling script read for scheduler directives
_DIRECTIVE = LazyPattern(rb"^[ \t]*(?:" + b"|".join(re.escape(d) for d in SCHEDULER_DIRECTIVES) + rb")", re.M)


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
    if named_elsewhere((callers or (script,))[0]) or not _runs_alone(script, _program(line, script), spec):
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
        and program_imports(script, entry, spec.starts, runtime=spec.drives) is False


