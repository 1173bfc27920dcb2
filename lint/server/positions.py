"""Between batchlint's places and the editor's.

batchlint's spans are 1-based lines and columns counted in characters (code
points), lines broken as each format's reader breaks them (YAML also at U+2028,
NEL...). LSP positions are 0-based, lines broken at CR, LF and CRLF only, and
columns counted in the negotiated encoding's units (UTF-16 unless the client
offers another). Both go through the offset in the text, so a line that one side
breaks and the other does not still lands on the same character.
"""

from __future__ import annotations

import bisect
import re

from ..document import LINE_BREAKS
from ..lazy_pattern import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_LSP_BREAKS = LazyPattern(r"\r\n|\r|\n")
_NEWLINE = re.compile("\n")  # JSON, TOML, shell: lines end at "\n" (document.line_starts)


def units(text: str, encoding: str) -> int:
    """The length of `text` in the client's units: "utf-16" (the default), "utf-8" or "utf-32"."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class Text:
    """One file's text, to turn a batchlint (line, column) into an LSP position and back."""

    def __init__(self, text: str, fmt: Optional[str], encoding: str = "utf-16"):
        self.text = text
        self.encoding = encoding
        breaks = list(LINE_BREAKS.get(fmt, _NEWLINE).finditer(text))
        self.starts = [0] + [m.end() for m in breaks]
        self.ends = [m.start() for m in breaks] + [len(text)]
        lsp_breaks = list(_LSP_BREAKS.finditer(text))
        self.lsp_starts = [0] + [m.end() for m in lsp_breaks]
        self.lsp_ends = [m.start() for m in lsp_breaks] + [len(text)]

    def offset(self, line: int, column: int) -> int:
        """The offset of batchlint's 1-based (line, column), kept within that line (an end past
        the last character is the line's end)."""
        index = min(max(line, 1), len(self.starts)) - 1
        return min(self.starts[index] + max(column, 1) - 1, self.ends[index])

    def position(self, offset: int) -> tuple:
        """The 0-based LSP (line, character) of an offset (in a line break: the end of its line,
        as a CR that JSON keeps in the line is a break to the editor)."""
        line = bisect.bisect_right(self.lsp_starts, offset) - 1
        return line, units(self.text[self.lsp_starts[line]:min(offset, self.lsp_ends[line])], self.encoding)

    def lsp(self, line: int, column: int) -> tuple:
        return self.position(self.offset(line, column))

    def line_at(self, line: int, character: int) -> int:
        """batchlint's 1-based line of the LSP position (line, character)."""
        line = min(max(line, 0), len(self.lsp_starts) - 1)
        offset, end = self.lsp_starts[line], len(self.text)
        counted = 0
        while offset < end and counted < character and self.text[offset] not in "\r\n":
            counted += units(self.text[offset], self.encoding)
            offset += 1
        return bisect.bisect_right(self.starts, offset)
