"""Read TOML: values from tomllib (or tomli), positions from a small line locator.

tomllib validates the file and gives exact values but no positions, so a
second pass finds where each `key = value` and `[table]` was written.
"""

from __future__ import annotations

import re
import sys

from ..document import Document, Mapping, ParseError, Scalar, Sequence, Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old interpreters only
    import tomli as tomllib

_KEY_PART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_KEY = re.compile(rf"\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=\s*")
_TABLE = re.compile(rf"\s*(\[\[?)\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*\]\]?")
_PART = re.compile(_KEY_PART)
_ERROR_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_AT_END = "(at end of document)"


def read_toml(path: str, text: str) -> Document:
    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer with more digits than int() takes
        message = str(exc)
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
    spans, key_spans = _locate(text)
    root = _convert(data, (), spans, key_spans, Span(1, 1, 1, 1))
    return Document(path=path, format="toml", root=root, text=text)


def _convert(value, path: tuple, spans: dict, key_spans: dict, fallback: Span):
    span = spans.get(path, fallback)
    if isinstance(value, dict):
        mapping = Mapping(span=span)
        for key, item in value.items():
            mapping.items[key] = _convert(item, path + (key,), spans, key_spans, span)
            mapping.key_spans[key] = key_spans.get(path + (key,), span)
        return mapping
    if isinstance(value, list):
        sequence = Sequence(span=span)
        sequence.items = [_convert(item, path + (i,), spans, key_spans, span) for i, item in enumerate(value)]
        return sequence
    return Scalar(value, span)


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
    open_path = None  # path of a multi-line value whose end is still to come
    skip_until = None  # closing text of a multi-line string being skipped
    depth = 0  # bracket depth of a multi-line array being skipped
    # TOML ends lines with \n or \r\n only; str.splitlines() would also break
    # at \x1c, \u2028... in strings and comments and shift every later line.
    for number, line in enumerate(text.split("\n"), start=1):
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
