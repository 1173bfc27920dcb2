"""Which other files linting one file has read (a launch line's config, a
linked DeepSpeed JSON), so a cached result can be checked against them."""

from __future__ import annotations

import os
from contextlib import contextmanager

_log = None  # set of paths while tracking, else None


def record(path: str) -> None:
    if _log is not None:
        _log.add(os.path.abspath(path))


@contextmanager
def tracking():
    """Collect the paths `record` sees inside the block."""
    global _log
    outer, _log = _log, set()
    try:
        yield _log
    finally:
        _log = outer
