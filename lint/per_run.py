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


class Side:
    """The caches of another state of the project (a git revision's files): `with side:` every
    per-run cache holds what this side found, and the run's own are back after the block."""

    __slots__ = ("kept", "saved")

    def __init__(self) -> None:
        self.kept: list = [{} for _ in _caches]
        self.saved: list = []

    def __enter__(self) -> None:
        self.saved = [dict(found) for found in _caches]
        self.kept += [{} for _ in range(len(_caches) - len(self.kept))]  # caches made since (a module imported)
        for found, kept in zip(_caches, self.kept):
            found.clear()
            found.update(kept)

    def __exit__(self, *exc: object) -> None:
        self.kept = [dict(found) for found in _caches]
        saved = self.saved + [{} for _ in range(len(_caches) - len(self.saved))]
        for found, mine in zip(_caches, saved):
            found.clear()
            found.update(mine)
