"""`path:line:col: CODE [severity] message`, then one summary line."""

from __future__ import annotations

from collections import Counter

from . import printable

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def render(diagnostics: list, summary, color: bool = False, source=None) -> str:
    lines = []
    for d in diagnostics:
        where = printable(f"{d.path}:{d.span.line}:{d.span.column}:")
        severity = f"[{d.severity}]"
        if color:
            where = _BOLD + where + _RESET
            severity = _COLORS.get(d.severity, "") + severity + _RESET
        lines.append(f"{where} {d.code} {severity} {printable(d.text)}")
        if source is not None:
            lines.extend(_snippet(d, source))
        for related in d.related:
            lines.append(printable(f"    {related.path}:{related.span.line}:{related.span.column}: note: {related.message}"))
    lines.append(_summary(diagnostics, summary))
    return "\n".join(lines) + "\n"


def _snippet(d, source) -> list:
    """The finding's line, with carets under its span (ruff's --show-source)."""
    text = printable(source.line(d.path, d.span.line).expandtabs(1))
    if not text:
        return []
    start = d.span.column - 1
    end = d.span.end_column - 1 if d.span.end_line == d.span.line else len(text)
    width = max(1, min(end, len(text)) - start)
    gutter = f"{d.span.line:>5} | "
    return [f"{gutter}{text}", " " * (len(gutter) - 2) + "| " + " " * start + "^" * width]


def _summary(diagnostics: list, summary) -> str:
    checked = f"{summary.configs} training config{'s' if summary.configs != 1 else ''} in {summary.files} file{'s' if summary.files != 1 else ''}"
    if not diagnostics:
        return f"All checks passed ({checked})."
    counts = Counter(d.severity for d in diagnostics)
    parts = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info") if counts[s])
    total = len(diagnostics)
    return f"Found {total} problem{'s' if total != 1 else ''} ({parts}) in {checked}."
