"""Reporters turn diagnostics into text; they never decide anything."""

from __future__ import annotations

FORMATS = ("text", "github", "json", "sarif")


def render(fmt: str, diagnostics: list, summary: "Summary", color: bool = False, source=None) -> str:
    """`source` (SourceLines): show each finding's line under it, in text output."""
    if fmt == "json":
        from .json import render as renderer
    elif fmt == "github":
        from .github import render as renderer
    elif fmt == "sarif":
        from .sarif import render as renderer
    else:
        from .text import render as renderer
        return renderer(diagnostics, summary, color=color, source=source)
    return renderer(diagnostics, summary)


def statistics_table(diagnostics: list, color: bool = False) -> str:
    """How many findings each rule has, most first (ruff's --statistics)."""
    from collections import Counter

    counts = Counter((d.code, d.name) for d in diagnostics)
    rows = [f"{count:>5}  {code}  {name}" for (code, name), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(rows + [f"{len(diagnostics):>5}  total"]) + "\n"


class Summary:
    """Counts the reporters print after the findings."""

    def __init__(self, files: int, configs: int, unreadable: int = 0):
        self.files = files
        self.configs = configs
        self.unreadable = unreadable
