"""Read JSON with the position of every value and every key.

The standard `json` module gives no positions, so this is a small recursive
descent parser; strings go through json's own C scanner. Duplicate keys are
recorded (DeepSpeed rejects them, other loaders keep the last silently).
"""

from __future__ import annotations

import bisect
import re
from json.decoder import scanstring

from ..document import Document, Mapping, ParseError, Scalar, Sequence, Span

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
# Each level costs two Python frames; deeper nesting would hit the interpreter's
# recursion limit first and lose the position of the fault.
MAX_DEPTH = 200


def read_json(path: str, text: str) -> Document:
    parser = _Parser(text)
    value = parser.document()
    if not isinstance(value, Mapping):
        value = Mapping(span=value.span)
    return Document(path=path, format="json", root=value, text=text)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple:
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end))

    def fail(self, message: str, offset: int):
        raise ParseError(f"JSON syntax error: {message}", *self.position(offset))

    def skip(self, offset: int) -> int:
        return _WHITESPACE.match(self.text, offset).end()

    def document(self):
        start = self.skip(0)
        value, end = self.value(start, 0)
        end = self.skip(end)
        if end != len(self.text):
            self.fail("extra data after the top-level value", end)
        return value

    def value(self, offset: int, depth: int):
        if depth > MAX_DEPTH:
            self.fail("nesting is too deep", offset)
        if offset >= len(self.text):
            self.fail("unexpected end of file", offset)
        ch = self.text[offset]
        if ch == "{":
            return self.object(offset, depth)
        if ch == "[":
            return self.array(offset, depth)
        if ch == '"':
            string, end = self.string(offset)
            return Scalar(string, self.span(offset, end), quoted=True), end
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, offset):
                end = offset + len(word)
                return Scalar(literal, self.span(offset, end)), end
        number = _NUMBER.match(self.text, offset)
        if number and number.end() > offset:
            raw = number.group()
            try:
                parsed = float(raw) if number.group(1) or number.group(2) else int(raw)
            except ValueError:  # more digits than int() converts; Python's json refuses it too
                self.fail("number with too many digits", offset)
            return Scalar(parsed, self.span(offset, number.end())), number.end()
        self.fail(f"unexpected character {ch!r}", offset)

    def string(self, offset: int):
        try:
            return scanstring(self.text, offset + 1, True)
        except ValueError as exc:
            self.fail(f"bad string: {str(exc).split(':')[0]}", getattr(exc, "pos", offset))

    def object(self, start: int, depth: int):
        mapping = Mapping()
        offset = self.skip(start + 1)
        if self.text.startswith("}", offset):
            mapping.span = self.span(start, offset + 1)
            return mapping, offset + 1
        while True:
            if not self.text.startswith('"', offset):
                self.fail("expected a key in double quotes", offset)
            key, key_end = self.string(offset)
            key_span = self.span(offset, key_end)
            offset = self.skip(key_end)
            if not self.text.startswith(":", offset):
                self.fail("expected ':' after a key", offset)
            value, offset = self.value(self.skip(offset + 1), depth + 1)
            if key in mapping.items:
                mapping.duplicates.append((key, key_span))
            mapping.items[key] = value
            mapping.key_spans[key] = key_span
            offset = self.skip(offset)
            if self.text.startswith(",", offset):
                offset = self.skip(offset + 1)
                continue
            if self.text.startswith("}", offset):
                mapping.span = self.span(start, offset + 1)
                return mapping, offset + 1
            self.fail("expected ',' or '}'", offset)

    def array(self, start: int, depth: int):
        sequence = Sequence()
        offset = self.skip(start + 1)
        if self.text.startswith("]", offset):
            sequence.span = self.span(start, offset + 1)
            return sequence, offset + 1
        while True:
            value, offset = self.value(offset, depth + 1)
            sequence.items.append(value)
            offset = self.skip(offset)
            if self.text.startswith(",", offset):
                offset = self.skip(offset + 1)
                continue
            if self.text.startswith("]", offset):
                sequence.span = self.span(start, offset + 1)
                return sequence, offset + 1
            self.fail("expected ',' or ']'", offset)
