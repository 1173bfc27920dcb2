"""`path:line:col: CODE [severity] message`, then one summary line."""

from __future__ import annotations

from collections import Counter

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def render(diagnostics: list, summary, color: bool = False) -> str:
    lines = []
    for d in diagnostics:
        where = f"{d.path}:{d.span.line}:{d.span.column}:"
        severity = f"[{d.severity}]"
        if color:
            where = _BOLD + where + _RESET
            severity = _COLORS.get(d.severity, "") + severity + _RESET
        lines.append(f"{where} {d.code} {severity} {d.text}")
        for related in d.related:
            lines.append(f"    {related.path}:{related.span.line}:{related.span.column}: note: {related.message}")
    lines.append(_summary(diagnostics, summary))
    return "\n".join(lines) + "\n"


def _summary(diagnostics: list, summary) -> str:
    checked = f"{summary.configs} training config{'s' if summary.configs != 1 else ''} in {summary.files} file{'s' if summary.files != 1 else ''}"
    if not diagnostics:
        return f"All checks passed ({checked})."
    counts = Counter(d.severity for d in diagnostics)
    parts = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info") if counts[s])
    total = len(diagnostics)
    return f"Found {total} problem{'s' if total != 1 else ''} ({parts}) in {checked}."
