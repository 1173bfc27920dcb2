"""Reporters turn diagnostics into text; they never decide anything."""

from __future__ import annotations

FORMATS = ("text", "github", "json", "sarif")


def render(fmt: str, diagnostics: list, summary: "Summary", color: bool = False) -> str:
    if fmt == "json":
        from .json import render as renderer
    elif fmt == "github":
        from .github import render as renderer
    elif fmt == "sarif":
        from .sarif import render as renderer
    else:
        from .text import render as renderer
        return renderer(diagnostics, summary, color=color)
    return renderer(diagnostics, summary)


class Summary:
    """Counts the reporters print after the findings."""

    def __init__(self, files: int, configs: int, unreadable: int = 0):
        self.files = files
        self.configs = configs
        self.unreadable = unreadable
