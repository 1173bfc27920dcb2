"""`path:line:col: CODE [severity] message` (`CODE [*]` when `--fix` can fix it, as
ruff marks it), the notes and the `help:` line below it (`concise`: the first line
alone), then one summary line and how many findings `--fix` can fix."""

from __future__ import annotations

from collections import Counter

from . import fixable, printable

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def render(diagnostics: list, summary, color: bool = False, source=None, concise: bool = False) -> str:
    lines = []
    for d in diagnostics:
        where = printable(f"{d.path}:{d.span.line}:{d.span.column}:")
        severity = f"[{d.severity}]"
        if color:
            where = _BOLD + where + _RESET
            severity = _COLORS.get(d.severity, "") + severity + _RESET
        mark = " [*]" if fixable(d, summary.unsafe_fixes) else ""
        lines.append(f"{where} {d.code}{mark} {severity} {printable(d.message)}")
        if concise:
            continue
        if source is not None:
            lines.extend(_snippet(d, source))
        if summary.show_fixes:
            lines.extend(_edits(d))
        lines.extend(below(d))
    if not summary.quiet:
        lines.append(_summary(diagnostics, summary))
        lines.extend(fix_summary(diagnostics, summary.unsafe_fixes))
    return "\n".join(lines) + "\n" if lines else ""


def below(d) -> list:
    """The lines under a finding: a note at each related place, then its notes and its `help:` line."""
    return ([printable(f"    {r.path}:{r.span.line}:{r.span.column}: note: {r.message}") for r in d.related]
            + [printable(f"    {line}") for line in d.detail])


def _edits(d) -> list:
    """What `--fix` would change for the finding, one line per edit (`--show-fixes`)."""
    import json

    applicability = "unsafe fix" if d.unsafe_fix else "fix"
    lines = []
    for e in d.edits:
        s = e.span
        where = f"{e.path or d.path}:{s.line}:{s.column}"
        if (s.line, s.column) == (s.end_line, s.end_column):
            what = f"insert {json.dumps(e.replacement, ensure_ascii=False)}"
        else:
            what = f"replace up to {s.end_line}:{s.end_column} with {json.dumps(e.replacement, ensure_ascii=False)}"
        lines.append(printable(f"    {applicability}: {where}: {what}"))
    return lines


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
    checked = (f"{summary.configs} training config{'s' if summary.configs != 1 else ''}"
               f" in {summary.files} file{'s' if summary.files != 1 else ''}")
    total = len(diagnostics)
    if summary.fixed:  # ruff's "Found 3 errors (2 fixed, 1 remaining)."
        found = total + summary.fixed
        return (f"Found {found} problem{'s' if found != 1 else ''} ({summary.fixed} fixed, {total} remaining) "
                f"in {checked}.")
    if not diagnostics and summary.unreadable:  # exit 2: not a pass (ruff prints none either)
        return f"No findings in {checked}, but {summary.unreadable} could not be read (see above)."
    if not diagnostics:
        return f"All checks passed ({checked})."
    counts = Counter(d.severity for d in diagnostics)
    parts = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info") if counts[s])
    return f"Found {total} problem{'s' if total != 1 else ''} ({parts}) in {checked}."


def fix_summary(diagnostics: list, unsafe: bool) -> list:
    """ruff's line on what `--fix` would fix: "[*] 3 fixable with `--fix`." and the unsafe fixes
    `--unsafe-fixes` would add; no line when nothing is fixable."""
    safe = sum(1 for d in diagnostics if fixable(d, unsafe))
    hidden = 0 if unsafe else sum(1 for d in diagnostics if d.edits and d.unsafe_fix)
    more = f"{hidden} unsafe fix{'es' if hidden != 1 else ''} available with `--fix --unsafe-fixes`"
    if safe and hidden:
        return [f"[*] {safe} fixable with `--fix` ({more})."]
    if safe:
        return [f"[*] {safe} fixable with `--fix`."]
    return [f"{more}."] if hidden else []
