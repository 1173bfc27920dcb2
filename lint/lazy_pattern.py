"""Regular expressions compiled when first used. A one-file lint imports many modules whose patterns it
never runs (a YAML config's lint never reads a shell script's redirections), and compiling each at import
cost more than importing its module (`docs/performance.md`). A `LazyPattern` compiles on its first use and
then keeps the compiled pattern's methods as its own, so a use costs what a compiled pattern's does."""

from __future__ import annotations

import contextlib
import re
from _thread import get_ident  # `threading` itself costs a one-file lint ~4 M instructions to import
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
            "flags", "groups", "groupindex")


class LazyPattern:
    """`re.compile(pattern, flags)`, made when one of its methods or attributes is first asked for."""

    __slots__ = ("_source", "pattern") + _METHODS

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source: tuple[Any, int] = (pattern, flags)  # Any: re.compile takes str or bytes, each alike
        self.pattern: Any = pattern  # as the compiled pattern's, without compiling (a cache's key)

    def __getattr__(self, name: str) -> Any:  # only while unset: each is set on the first use
        if name not in _METHODS:
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


@contextlib.contextmanager
def compiling_lazily() -> Iterator[None]:
    """While a dependency is imported, the patterns its modules compile at import are LazyPatterns:
    PyYAML's reader and resolver compile ten at import, ~70 M instructions, a quarter of a YAML lint,
    and a lint through libyaml runs few of them, if any. Only in this thread: another thread's
    `re.compile` meanwhile gets a compiled pattern, as always."""
    real = re.compile
    importing = get_ident()

    def compile_(pattern: Any, flags: int = 0) -> Any:
        if get_ident() != importing or isinstance(pattern, re.Pattern):
            return real(pattern, flags)
        return LazyPattern(pattern, flags)

    re.compile = compile_
    try:
        yield
    finally:
        re.compile = real
