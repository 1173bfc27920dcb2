"""Reporters turn diagnostics into text; they never decide anything."""

from __future__ import annotations

import re

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


# C0 and C1 controls, DEL, and the bidirectional overrides and isolates that can
# make a terminal show other text than the file holds ("Trojan source").
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str, keep_lines: bool = False) -> str:
    """`text` safe to print: control characters out (tabs and, with `keep_lines`,
    line ends kept; else a line end becomes a space), lone surrogates (from
    undecodable file names) shown as U+FFFD."""
    if not keep_lines:
        text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    text = _SURROGATES.sub("\ufffd", text)
    return _CONTROLS.sub("", text) if keep_lines else _CONTROLS.sub("", text.replace("\t", " "))


def without_surrogates(text: str) -> str:
    """Lone surrogates (from undecodable file names) as U+FFFD, so any output encodes."""
    return _SURROGATES.sub("\ufffd", text)
