"""Config files that are templates: placeholders a script fills in before use.

A DeepSpeed JSON written with `"train_batch_size": ${BATCH}` (filled by
`sed` or `envsubst`; `"train_micro_batch_size_per_gpu": BATCH_SIZE` for a
`sed "s/BATCH_SIZE/8/"`), a YAML with Jinja `{{ lr }}` or `{% if %}` lines: the
file is not broken, it is not a config yet. When a JSON, YAML or TOML file does
not parse and holds placeholders where they break it, each one is filled with
text of the same length (so every line and column stays where it was written),
the file is read again, and every value that held a placeholder is Unknown.
A template that still does not parse after that is not reported as broken when
Jinja statements make its shape unknowable (`TemplateError`); otherwise the
original syntax error stands: a placeholder inside a string does not excuse a
missing comma.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from ..document import Document, Mapping, ParseError, Scalar, Sequence, Unknown
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import replace
from ..limits import MAX_NODES
from . import TemplateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# `${VAR}`, `${VAR:-8}`, `$((A * B))`, `$(cmd)`, `$VAR`; Jinja `{{ x }}`, `{% ... %}`, `{# ... #}`.
# Each on one line, and of bounded length: the scan is linear.
_PLACEHOLDER = re.compile(
    r"\$\{[^{}\n]{1,200}\}|\$\(\([^\n]{1,200}?\)\)|\$\([^()\n]{1,200}\)|\$[A-Za-z_][A-Za-z0-9_]{0,100}"
    r"|\{\{[^\n]{1,400}?\}\}|\{%[^\n]{1,400}?%\}|\{#[^\n]{0,400}?#\}"
)
# JSON only: a bare UPPER_CASE word where a value goes, which `sed "s/BATCH_SIZE/8/"`
# replaces (DeepSpeedExamples' ds_config_*_TEMPLATE.json); JSON has no bare words but
# true, false and null, so outside strings it cannot be anything else (TRUE is a typo).
# (`QuantW_FORWARD` too: a capital, then an underscore or capitals only; `True` is a typo.)
_BARE = re.compile(_PLACEHOLDER.pattern + r"|\b[A-Z][A-Za-z0-9]*_\w*|\b[A-Z][A-Z0-9]+\b")
_NOT_BARE = {"TRUE", "FALSE", "NULL", "NONE", "NAN"}
_STATEMENT = ("{%", "{#")
# What stands in for a placeholder's value: a private-use character, which no
# config writes and every format allows inside a string (YAML in a plain scalar too).
_MARK = "\ue000"
_WHY = "a template placeholder, filled in before the file is used"


_JINJA_LINE = LazyPattern(r"(?m)^[ \t]*\{%-?[ \t]*(?:if|for|else|elif|endif|endfor|set|macro|block|raw)\b[^\n]{0,400}?%\}")


def jinja_source(path: str, text: str) -> bool:
    """Whether a source that does not parse is a Jinja template of one (cookiecutter's `{{cookiecutter.x}}`
    folders, `{%- if ... %}` lines): rendered into a program before it runs."""
    return "{{" in path and "}}" in path or _JINJA_LINE.search(text) is not None


def json_lines(text: str) -> bool:
    """Whether a `.json` file that is no JSON document is JSON Lines: two or more lines, each a
    JSON object or array on its own (a dataset saved under .json, not a config to report broken)."""
    import json

    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines:
        stripped = line.strip()
        if stripped[0] not in "{[" or stripped[-1] not in "}]":
            return False
        try:
            json.loads(stripped)
        except (ValueError, RecursionError):
            return False
    return True


def read_template(path: str, text: str, fmt: str, reader: Callable, error: ParseError) -> Document:
    """The document of a template `text` that `reader` refused with `error`;
    raises `error` again when the file is not a template."""
    filled = _fill(text, fmt)
    if filled is None:
        raise error
    text_filled, statements = filled
    try:
        document = reader(path, text_filled)
    except TemplateError:
        raise
    except ParseError:
        if statements:
            raise TemplateError(f"a Jinja template: {error.message}", error.line, error.column) from None
        raise error from None
    _forget_placeholders(document.root)
    return replace(document, text=text)


def _fill(text: str, fmt: str) -> Optional[tuple]:
    """`text` with each placeholder outside strings and comments replaced by a
    same-length value (statements by spaces), and whether Jinja statements were
    among them; None when no placeholder stands where it can break the file."""
    quoting = fmt in ("json", "toml")  # YAML takes a bare value anywhere; JSON and TOML need quotes
    outside = _outside_strings(text, fmt) if quoting else None
    parts, last, breaking, statements = [], 0, False, False
    for match in (_BARE if fmt == "json" else _PLACEHOLDER).finditer(text):
        start, end = match.span()
        free = outside is None or outside(start)
        found = match.group(0)
        if free is None or (found[0].isupper() and (not free or found in _NOT_BARE)):
            continue  # in a comment, or a capitalised word in a string, or a misspelt literal
        if found.startswith(_STATEMENT):
            replacement = " " * (end - start)
            # A statement that shapes the file: outside strings, or (YAML) alone on its line.
            statements = statements or (free if quoting else _alone(text, start, end))
        elif quoting and free and end - start >= 2:
            replacement = '"' + _MARK * (end - start - 2) + '"'
        else:
            replacement = _MARK * (end - start)
        breaking = breaking or free or not quoting
        parts += [text[last:start], replacement]
        last = end
    if not breaking:
        return None
    parts.append(text[last:])
    return "".join(parts), statements


# Strings (unterminated ones end at their line, or at the end for a multi-line one) and comments.
_DOUBLE = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'
_JSON_TOKENS = re.compile(_DOUBLE)
_TOML_TOKENS = re.compile(r'"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)|' + _DOUBLE + r"|'[^'\n]*'?|#[^\n]*")


def _outside_strings(text: str, fmt: str) -> Callable:
    """A function telling, for an offset, True (outside strings and comments),
    False (inside a string) or None (inside a comment). One regex pass over the
    text, then a binary search per question."""
    # Offsets where the state changes, and the state from there.
    starts: list[int] = [0]
    kinds: list[Optional[bool]] = [True]
    for token in (_TOML_TOKENS if fmt == "toml" else _JSON_TOKENS).finditer(text):
        starts += [token.start(), token.end()]
        kinds += [None if token.group(0).startswith("#") else False, True]
    return lambda offset: kinds[bisect.bisect_right(starts, offset) - 1]


def _forget_placeholders(root: Mapping) -> None:
    """Every string value that holds a filled placeholder becomes Unknown."""
    stack: list[Mapping | Sequence] = [root]
    seen = 0
    while stack and seen < MAX_NODES:
        node = stack.pop()
        seen += 1
        for index, child in (enumerate(node.items) if isinstance(node, Sequence) else node.items.items()):
            if isinstance(child, Scalar) and isinstance(child.value, str) and _MARK in child.value:
                node.items[index] = Unknown(child.span, _WHY, child.deps, child.origin)
            elif isinstance(child, (Mapping, Sequence)):
                stack.append(child)


def _alone(text: str, start: int, end: int) -> bool:
    """Nothing but spaces around text[start:end] on its line."""
    before = text.rfind("\n", 0, start) + 1
    after = text.find("\n", end)
    return not text[before:start].strip() and not text[end:None if after < 0 else after].strip()
