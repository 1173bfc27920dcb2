"""Where a value is written: the Span every reader makes for every value (lint/document.py).

A NamedTuple for the type checker, made at run time by `collections.namedtuple`: `typing.NamedTuple`
would import `typing` (lint/annotations.py) and compile each field's annotation, and the first
`compile()` of a process builds the `ast` module's 119 node classes, ~10 M instructions of a one-file
lint's start-up that no other part of a YAML, JSON, TOML or launch script lint needs.
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Optional

    class _Place(NamedTuple):
        line: int
        column: int
        end_line: int
        end_column: int
        path: Optional[str] = None
else:
    _Place = namedtuple("Span", ("line", "column", "end_line", "end_column", "path"), defaults=(None,))


class Span(_Place):
    """1-based line and column; the end column is exclusive. `path` is set only
    for a value written in another file than the document's own (a launch
    script's override applied to a config). A named tuple: readers create one
    per value, so it must be cheap."""

    __slots__ = ()

    @classmethod
    def point(cls, line: int, column: int = 1) -> Span:
        return cls(line, column, line, column + 1)

    def elsewhere(self, path: Optional[str]) -> Span:
        """The same place, marked as being in file `path` (unless it is marked already: a word a
        calling script gave the script read)."""
        return Span(self.line, self.column, self.end_line, self.end_column, self.path or path)
