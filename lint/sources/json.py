"""Read JSON with the position of every value and every key.

The standard `json` module gives no positions, so this is a small recursive
descent parser; strings go through json's own C scanner. Duplicate keys are
recorded (DeepSpeed rejects them, other loaders keep the last silently).

Lines end at "\\n" only (a "\\r" before it is the last column of its line), as
JSON's own whitespace rules have it; columns count characters.
"""

from __future__ import annotations

import bisect
from json.decoder import scanstring  # type: ignore[attr-defined]  # public in json.decoder, not in its stubs

from ..document import (
    Document,
    LimitExceeded,
    Mapping,
    ParseError,
    Scalar,
    Sequence,
    Span,
    TooManyValues,
    Unknown,
    line_starts,
    without_surrogates,
)
from ..lazy_pattern import LazyPattern
from ..limits import MAX_DEPTH, MAX_NODES, MAX_NUMBER_DIGITS
from . import digits_why

_WHITESPACE = LazyPattern(r"[ \t\n\r]*")
_NUMBER = LazyPattern(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


def read_json(path: str, text: str) -> Document:
    parser = _Parser(text)
    value = parser.document()
    if not isinstance(value, Mapping):
        value = Mapping(span=value.span)
    return Document(path=path, format="json", root=value, text=text)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.line_starts = line_starts(text, "json")
        self.nodes = 0

    def position(self, offset: int) -> tuple:
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end))

    def scalar_span(self, start: int, end: int) -> Span:
        """A scalar never holds a raw line break: one lookup is enough."""
        line, column = self.position(start)
        return Span(line, column, line, column + end - start)

    def fail(self, message: str, offset: int):
        raise ParseError(f"JSON syntax error: {message}", *self.position(offset))

    def skip(self, offset: int) -> int:
        match = _WHITESPACE.match(self.text, offset)  # `*`: matches everywhere, maybe empty
        return match.end() if match else offset

    def document(self):
        start = self.skip(0)
        value, end = self.value(start, 0)
        end = self.skip(end)
        if end != len(self.text):
            self.fail("extra data after the top-level value", end)
        return value

    def value(self, offset: int, depth: int):
        # Each level costs two Python frames: stop well before the interpreter's limit.
        if depth > MAX_DEPTH:
            raise LimitExceeded(f"JSON nesting is too deep (more than {MAX_DEPTH} levels)", *self.position(offset))
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise TooManyValues(f"JSON document has too many values (more than {MAX_NODES:,})", *self.position(offset))
        if offset >= len(self.text):
            self.fail("unexpected end of file", offset)
        ch = self.text[offset]
        if ch == "{":
            return self.object(offset, depth)
        if ch == "[":
            return self.array(offset, depth)
        if ch == '"':
            string, end = self.string(offset)
            return Scalar(without_surrogates(string), self.scalar_span(offset, end), quoted=True), end
        if ch in _LITERALS:
            word, literal = _LITERALS[ch]
            if self.text.startswith(word, offset):
                end = offset + len(word)
                return Scalar(literal, self.scalar_span(offset, end)), end
        number = _NUMBER.match(self.text, offset)
        if number and number.end() > offset:
            return self.number(number), number.end()
        self.fail(f"unexpected character {ch!r}", offset)

    def number(self, match) -> Scalar | Unknown:
        raw = match.group()
        span = self.scalar_span(match.start(), match.end())
        if match.group(1) or match.group(2):
            return Scalar(float(raw), span)  # past a float's range is inf, as json.loads gives
        digits = len(raw) - raw.startswith("-")
        if digits > MAX_NUMBER_DIGITS:  # before int(): past 4,300 digits it raises, and it is quadratic
            return Unknown(span, digits_why(digits))
        return Scalar(int(raw), span)

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
            key = without_surrogates(key)
            key_span = self.scalar_span(offset, key_end)
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
