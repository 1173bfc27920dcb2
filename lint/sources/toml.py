"""Read TOML: values from tomllib (or tomli), positions from a small line locator.

tomllib validates the file and gives exact values but no positions, so a
second pass finds where each `key = value` and `[table]` was written. A first
pass refuses, before tomllib sees it, text tomllib would take too long over:
a key of too many parts, brackets nested too deeply.

Lines end at "\n" only (TOML allows "\r\n", whose "\r" is then the last
column of its line); columns count characters.
"""

from __future__ import annotations

import itertools
import re
import sys

from ..document import Document, LimitExceeded, Mapping, ParseError, Scalar, Sequence, Span, Unknown
from ..lazy_pattern import LazyPattern, compiling_lazily
from ..limits import MAX_DEPTH, MAX_NODES, MAX_TOML_KEY_PARTS
from . import long_int

with compiling_lazily():  # tomllib's date and time patterns, and string.Template's, compile when first run
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on old interpreters only
        import tomli as tomllib

_KEY_PART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_KEY = LazyPattern(rf"\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=\s*")
_TABLE = LazyPattern(rf"\s*(\[\[?)\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*\]\]?")
_PART = LazyPattern(_KEY_PART)
_ERROR_AT = LazyPattern(r"\(at line (\d+), column (\d+)\)")
_AT_END = "(at end of document)"
# Strings and comments, blanked out before the first pass looks for keys and brackets.
# Unrolled loops (`"[^"]*(?:\\.[^"]*)*"`): the regex engine keeps no state per character of a long string.
_STRING_OR_COMMENT = LazyPattern(
    r'''"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""|\'\'\'[^']*(?:'(?!'')[^']*)*\'\'\''''
    r'''|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\n]*'|#[^\n]*'''
)
# A dotted key with more than MAX_TOML_KEY_PARTS parts (a float has one dot, a date none). It is
# tried only where a chain starts, and `(?=(w+))\1` keeps a part from being backtracked into,
# so that the search stays linear in the text.
_LONG_KEY = LazyPattern(
    r"(?<![\w.-])(?<!\.[ \t])(?=([\w-]+))\1(?:[ \t]*\.[ \t]*(?=([\w-]+))\2){%d}" % MAX_TOML_KEY_PARTS
)
_BRACKET = LazyPattern(r"[\[\]{}]")
# Python's own bound on int() of decimal text (PYTHONINTMAXSTRDIGITS; Python 3.10 before 3.10.7 has none).
_INT_TEXT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)()
_LONG_INTEGER = LazyPattern(r"[0-9][0-9_]{%d,}" % _INT_TEXT_DIGITS)


def read_toml(path: str, text: str) -> Document:
    _check_bounds(text)
    spans, key_spans = _locate(text)  # first: it stops at MAX_NODES places, tomllib would read on
    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer with more digits than int() takes
        message = str(exc)
        if not isinstance(exc, tomllib.TOMLDecodeError):
            found = _LONG_INTEGER.search(text)
            at = _position(text, found.start()) if found else (1, 1)
            raise LimitExceeded(f"TOML number with more than {_INT_TEXT_DIGITS:,} digits, more than Python converts",
                                *at) from None
        where = _ERROR_AT.search(message)
        if where:
            line, column = int(where.group(1)), int(where.group(2))
        elif _AT_END in message:  # just after the last thing written, not at the top
            before = text.rstrip()
            line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
        else:
            line, column = 1, 1
        message = _ERROR_AT.sub("", message).replace(_AT_END, "").strip()
        raise ParseError(f"TOML syntax error: {message}", line, column) from None
    root = _Converter(spans, key_spans).convert(data, (), Span(1, 1, 1, 1))
    return Document(path=path, format="toml", root=root, text=text)


def _position(text: str, offset: int) -> tuple:
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def _check_bounds(text: str) -> None:
    """Refuse, before tomllib reads it, text it would spend too long on: a key
    of too many parts (tomllib checks every prefix of a dotted key against every
    table: quadratic), brackets nested too deeply (it recurses), surely more
    values than MAX_NODES (it spends up to a second per MB)."""
    if "." not in text and "," not in text and text.count("=") + text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # a small file without dotted keys or arrays: skip the scan
    # Same length, so that offsets stay those of the file; `"a"."b"` keeps looking like a key.
    bare = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()) if m.group()[0] == "#" else "s" * len(m.group()), text)
    long_key = _LONG_KEY.search(bare)
    if long_key:
        where = _position(text, long_key.start())
        raise LimitExceeded(f"TOML key with more than {MAX_TOML_KEY_PARTS} dotted parts", *where)
    _check_count(text, bare)
    if bare.count("[") + bare.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for bracket in _BRACKET.finditer(bare):
        depth = depth + 1 if bracket.group() in "[{" else max(0, depth - 1)
        if depth > MAX_DEPTH:
            where = _position(text, bracket.start())
            raise LimitExceeded(f"TOML nesting is too deep (more than {MAX_DEPTH} levels)", *where)


def _check_count(text: str, bare: str) -> None:
    """Outside strings and comments each `=` and `{` starts a value, each `[`
    too (but the second of `[[`), and commas separate an array's items or an
    inline table's pairs: past MAX_NODES values before tomllib reads a thing."""
    values = {"=": bare.count("="), "{": bare.count("{"), "[": bare.count("[") - bare.count("[["),
              ",": bare.count(",") // 2}
    for mark, count in values.items():
        if count > MAX_NODES:
            nth = MAX_NODES * (2 if mark == "," else 1)  # where the bound is passed, near enough
            past = next(itertools.islice(re.finditer(re.escape(mark), bare), nth, None), None)
            where = _position(text, past.start()) if past else (1, 1)
            raise LimitExceeded(f"TOML document has too many values (more than {MAX_NODES:,})", *where)


class _Converter:
    """tomllib's values to Document nodes, at the places the locator found."""

    def __init__(self, spans: dict, key_spans: dict):
        self.spans = spans
        self.key_spans = key_spans
        self.count = 0

    def convert(self, value, path: tuple, fallback: Span):
        span = self.spans.get(path, fallback)
        self.count += 1
        if self.count > MAX_NODES:
            raise LimitExceeded(f"TOML document has too many values (more than {MAX_NODES:,})", span.line, span.column)
        if isinstance(value, dict):
            mapping = Mapping(span=span)
            for key, item in value.items():
                mapping.items[key] = self.convert(item, path + (key,), span)
                mapping.key_spans[key] = self.key_spans.get(path + (key,), span)
            return mapping
        if isinstance(value, list):
            sequence = Sequence(span=span)
            sequence.items = [self.convert(item, path + (i,), span) for i, item in enumerate(value)]
            return sequence
        too_long = long_int(value) if type(value) is int else None
        return Unknown(span, too_long) if too_long else Scalar(value, span)


def _split_key(text: str) -> tuple:
    return tuple(part.strip("\"'") for part in _PART.findall(text))


def _resolve(parts: tuple, arrays: dict) -> tuple:
    """`[a.b]` after `[[a]]` is a table inside the last element of `a`: ('a', index, 'b')."""
    path: tuple = ()
    for part in parts:
        path += (part,)
        if path in arrays:
            path += (arrays[path] - 1,)
    return path


def _locate(text: str):
    """Map key paths to the span of their value and of their key."""
    spans: dict = {}
    key_spans: dict = {}
    table: tuple = ()
    arrays: dict = {}  # path of an array of tables -> how many `[[...]]` it has had so far
    open_path: tuple = ()  # path of a multi-line value whose end is still to come (set before either wait below)
    skip_until = None  # closing text of a multi-line string being skipped
    depth = 0  # bracket depth of a multi-line array being skipped
    # TOML ends lines with \n or \r\n only; str.splitlines() would also break
    # at \x1c, \u2028... in strings and comments and shift every later line.
    for number, line in enumerate(text.split("\n"), start=1):
        if len(spans) > MAX_NODES:  # each place found is a value of its own
            raise LimitExceeded(f"TOML document has too many values (more than {MAX_NODES:,})", number - 1)
        if skip_until is not None:
            if skip_until in line:
                end = line.index(skip_until) + len(skip_until)
                while line[end : end + 1] == skip_until[0]:  # `""""`: a quote ends the text
                    end += 1
                _close(spans, open_path, number, end + 1)
                skip_until = None
            continue
        if depth > 0:
            depth += _bracket_delta(line)
            if depth <= 0:
                _close(spans, open_path, number, len(_strip_comment(line)) + 1)
            continue
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        header = _TABLE.match(line)
        if header and stripped.startswith("["):
            parts = _split_key(header.group(2))
            if header.group(1) == "[[":
                array = _resolve(parts[:-1], arrays) + parts[-1:]
                index = arrays.get(array, 0)
                arrays[array] = index + 1
                table = array + (index,)
            else:
                table = _resolve(parts, arrays)
            span = Span(number, indent + 1, number, len(_strip_comment(line)) + 1)
            spans[table] = span
            for i in range(1, len(table)):  # `[a.b]` alone also defines `a`; `[[a]]` the array `a`
                spans.setdefault(table[:i], span)
                key_spans.setdefault(table[:i], span)
            key_spans.setdefault(table, span)
            continue
        assignment = _KEY.match(line)
        if not assignment:
            continue
        parts = _split_key(assignment.group(1))
        path = table + parts
        start = assignment.end()
        value_text = _strip_comment(line[start:])
        key_span = Span(number, indent + 1, number, indent + 1 + len(assignment.group(1)))
        key_spans[path] = key_span
        spans[path] = Span(number, start + 1, number, start + 1 + len(value_text))
        for i in range(len(table) + 1, len(path)):  # `a.b.c = 1` also defines `a` and `a.b`
            spans.setdefault(path[:i], key_span)
            key_spans.setdefault(path[:i], key_span)
        open_path = path
        for opener in ('"""', "'''"):
            if value_text.startswith(opener) and value_text.count(opener) == 1:
                skip_until = opener
        if value_text.startswith("["):
            depth = _bracket_delta(value_text)
    return spans, key_spans


def _close(spans: dict, path: tuple, line: int, end_column: int) -> None:
    """A multi-line value's span runs to the line that closes it."""
    start = spans[path]
    spans[path] = Span(start.line, start.column, line, end_column)


def _strip_comment(value: str) -> str:
    quote = None
    for i, ch in enumerate(value):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return value[:i].rstrip()
    return value.rstrip()


def _bracket_delta(text: str) -> int:
    text = _strip_comment(re.sub(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', "", text))
    return text.count("[") - text.count("]")
