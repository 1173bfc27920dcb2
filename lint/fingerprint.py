"""The text of a finding's line, and a fingerprint of the finding that survives
edits elsewhere in the file (SARIF's primaryLocationLineHash, baselines)."""

from __future__ import annotations

import hashlib

from .document import split_lines
from .sources import format_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


class SourceLines:
    """Lines of the files findings point into, each file read once, numbered as Spans number them."""

    def __init__(self, overrides: Optional[dict] = None):
        self.files: dict = {}
        for path, text in (overrides or {}).items():
            self.files[path] = split_lines(text, format_of(path))

    def line(self, path: str, number: int) -> str:
        if path not in self.files:
            from .project import read_bytes

            try:
                text = read_bytes(path).decode("utf-8", "replace")
                self.files[path] = split_lines(text.removeprefix("\ufeff"), format_of(path))
            except OSError:
                self.files[path] = []
        lines = self.files[path]
        return lines[number - 1] if 0 < number <= len(lines) else ""


def fingerprint(diagnostic, lines: SourceLines) -> str:
    """The code, the path and the whitespace-folded text of the line: not the line number."""
    text = " ".join(lines.line(diagnostic.path, diagnostic.span.line).split())
    key = f"{diagnostic.code}\0{diagnostic.path}\0{text}".encode("utf-8", "surrogateescape")  # undecodable names
    return hashlib.sha256(key).hexdigest()[:32]
