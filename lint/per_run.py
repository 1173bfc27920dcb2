"""Caches that live for one run: what a run asks of many files again and again (the scripts in
view that name a file, the code a launch line's program runs) is found once. A new run, an
editor's new question, or a test starts them empty (`forget`): the files may have changed since.

The caches belong to the run, not to the modules that declare them: a module holds a `Cache`
handle, and what the handle reaches is the storage of the run in force (a context variable, so
two runs in two threads of the editor's server never share one). A git revision's side of a run
(`check --since`) has a storage of its own (`Side`)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, MutableMapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_declared = 0  # how many handles the imported modules declared: each has its index in a storage


class _Storage:
    """One run's caches: a dict per declared handle, made when first asked for."""

    __slots__ = ("dicts",)

    def __init__(self) -> None:
        self.dicts: list = []

    def at(self, index: int) -> dict:
        dicts = self.dicts
        if index >= len(dicts):
            dicts.extend({} for _ in range(index + 1 - len(dicts)))
        return dicts[index]


_storage: contextvars.ContextVar[_Storage] = contextvars.ContextVar("batchlint_per_run")


def _current() -> _Storage:
    found = _storage.get(None)
    if found is None:  # the first question of this thread: a run of its own
        found = _Storage()
        _storage.set(found)
    return found


class Cache(MutableMapping):
    """A dict of the run in force: `cache[key]`, `key in cache`, `.get`, `.setdefault`, `len`, `.clear`."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    @property
    def _dict(self) -> dict:
        return _current().at(self.index)

    def __getitem__(self, key: Any) -> Any:
        return self._dict[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._dict[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._dict

    def __iter__(self) -> Iterator[Any]:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._dict.get(key, default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return self._dict.setdefault(key, default)

    def pop(self, key: Any, *default: Any) -> Any:
        return self._dict.pop(key, *default)

    def items(self) -> Any:
        return self._dict.items()

    def clear(self) -> None:
        self._dict.clear()


def cache() -> Cache:
    """A cache emptied at each `forget`, held by the run in force."""
    global _declared
    _declared += 1
    return Cache(_declared - 1)


def forget() -> None:
    """Read the files again at the next question (a new run: they may have changed)."""
    _storage.set(_Storage())


class Side:
    """The caches of another state of the project (a git revision's files): `with side:` every
    per-run cache holds what this side found, and the run's own are back after the block."""

    __slots__ = ("storage", "tokens")

    def __init__(self) -> None:
        self.storage = _Storage()
        self.tokens: list = []

    def __enter__(self) -> None:
        self.tokens.append(_storage.set(self.storage))

    def __exit__(self, *exc: object) -> None:
        _storage.reset(self.tokens.pop())
