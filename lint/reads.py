"""What linting one file touched besides the file itself: the other files it
read (a launch line's config, a linked DeepSpeed JSON), so a cached result can
be checked against them, and the notices it left (a reference outside the
project, a FIFO skipped), which the CLI prints on stderr."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Optional


@dataclass
class Touched:
    paths: set = field(default_factory=set)
    notices: list = field(default_factory=list)


_log: Optional[Touched] = None


def record(path: str) -> None:
    if _log is not None:
        _log.paths.add(os.path.abspath(path))


def notice(message: str) -> None:
    if _log is not None and message not in _log.notices:
        _log.notices.append(message)


@contextmanager
def tracking() -> Iterator[Touched]:
    """Collect what `record` and `notice` see inside the block."""
    global _log
    outer, _log = _log, Touched()
    try:
        yield _log
    finally:
        _log = outer
