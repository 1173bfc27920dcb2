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


def read_toml(path: str, text: str) -> Document:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = _ERROR_AT.search(message)
        line, column = (int(where.group(1)), int(where.group(2))) if where else (1, 1)
        raise ParseError(f"TOML syntax error: {_ERROR_AT.sub('', message).strip()}", line, column) from None
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


def _locate(text: str):
    """Map key paths to the span of their value and of their key."""
    spans: dict = {}
    key_spans: dict = {}
    table: tuple = ()
    array_counts: dict = {}
    lines = text.splitlines()
    skip_until = None  # closing text of a multi-line value being skipped
    depth = 0
    for number, line in enumerate(lines, start=1):
        if skip_until is not None:
            if skip_until in line:
                skip_until = None
            continue
        if depth > 0:
            depth += _bracket_delta(line)
            continue
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        header = _TABLE.match(line)
        if header and stripped.startswith("["):
            parts = _split_key(header.group(2))
            if header.group(1) == "[[":
                index = array_counts.get(parts, 0)
                array_counts[parts] = index + 1
                table = parts + (index,)
            else:
                table = parts
            spans[table] = Span(number, 1, number, len(line.rstrip()) + 1)
            key_spans.setdefault(table, spans[table])
            continue
        assignment = _KEY.match(line)
        if not assignment:
            continue
        path = table + _split_key(assignment.group(1))
        start = assignment.end()
        value_text = _strip_comment(line[start:])
        key_start = len(line) - len(line.lstrip()) + 1
        key_spans[path] = Span(number, key_start, number, key_start + len(assignment.group(1)))
        spans[path] = Span(number, start + 1, number, start + 1 + len(value_text))
        for opener in ('"""', "'''"):
            if value_text.startswith(opener) and value_text.count(opener) == 1:
                skip_until = opener
        if value_text.startswith("["):
            depth = _bracket_delta(value_text)
    return spans, key_spans


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
