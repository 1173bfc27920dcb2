"""Caches that live for one run: what a run asks of many files again and again (the scripts in
view that name a file, the code a launch line's program runs) is found once. A new run, an
editor's new question, or a test starts them empty (`forget`): the files may have changed since."""

from __future__ import annotations

_caches: list = []


def cache() -> dict:
    """A dict emptied at each `forget`."""
    found: dict = {}
    _caches.append(found)
    return found


def forget() -> None:
    """Read the files again at the next question (a new run: they may have changed)."""
    for found in _caches:
        found.clear()
