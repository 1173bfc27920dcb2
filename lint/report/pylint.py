"""ruff's `pylint` format, `path:line: [CODE] message; fix: ...`, one line per finding: the shape
of Pylint's `parseable` output and flake8's pylint formatter, for tools and editors' problem
matchers that read it."""

from __future__ import annotations

from . import printable


def render(diagnostics: list, summary) -> str:
    return "".join(printable(f"{d.path}:{d.span.line}: [{d.code}] {d.text}") + "\n" for d in diagnostics)
