"""Plain scalars typed the YAML 1.1 way, as PyYAML's safe loader types them, for the shapes configs and
command lines write, without PyYAML's patterns or PyYAML itself.

The YAML reader (sources/yaml.py) types every plain scalar of a config, and a launch line's `key=value`
overrides are typed the same way (launching/lines.py): resolving a tag compiles PyYAML's int, float
and timestamp patterns, and importing PyYAML is a fifth of a launch script's lint. `plain_tag` answers
for the words and numbers configs write; for any other shape it answers None and PyYAML's resolver
decides (tests/test_source_yaml.py holds every answer to the resolver's). `1e-4` is a number here,
as the frameworks' argument parsers read it, though YAML 1.1 leaves it text. `value_offset` finds
where a string is written on its line, for readers of values inside a config's strings (OmegaConf's
interpolations), which need no PyYAML either.
"""

from __future__ import annotations

from ..document import Scalar
from ..lazy_pattern import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
MERGE = "tag:yaml.org,2002:merge"

# The plain scalars that PyYAML's bool, null, merge, value and `yaml` resolvers match: each of those
# patterns is a list of words, so a word's tag is looked up, never matched.
_WORDS = {
    **dict.fromkeys("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF".split(), BOOL),
    **dict.fromkeys(("~", "null", "Null", "NULL", ""), NULL),
    "<<": MERGE, "=": "tag:yaml.org,2002:value",
    **dict.fromkeys("!&*", "tag:yaml.org,2002:yaml"),
}
BOOLEANS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}  # SafeConstructor's
NUMBER_START = frozenset("+-.0123456789")  # what any number's pattern (and EXPONENT) can match first
_DIGITS = frozenset("0123456789")
_DIGITS_OR_UNDERSCORE = frozenset("0123456789_")
_INF_NAN = frozenset(("inf", "Inf", "INF", "nan", "NaN", "NAN"))
# YAML 1.1 wants a dot and a signed exponent (`1.0e-4`); `1e-4`, `1E5`, `1.0e4` are our extension.
EXPONENT = LazyPattern(r"[-+]?([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$")
_SHORT = 18  # digits an int or float typed here may have: past it, the reader's bounds decide


def _ascii_digits(text: str) -> bool:
    return text.isdigit() and text.isascii()


def plain_tag(text: str) -> Optional[str]:
    """The tag PyYAML's resolver gives the plain scalar `text`, for the shapes configs write; None: ask it."""
    tag = _WORDS.get(text)
    if tag is not None:
        return tag
    if text[0] not in NUMBER_START:
        return STR  # the other resolvers' patterns start with + - . or a digit
    if "\n" in text:
        return None  # their `$` also matches before a final line break
    body = text[1:] if text[0] in "+-" else text
    if _ascii_digits(body):  # float needs a dot, a timestamp a dash: decimal, unless an octal-looking 0...
        return INT if body[0] != "0" or len(body) == 1 else None
    if body[:1] == "." and body[1:2] not in _DIGITS_OR_UNDERSCORE and body[1:] not in _INF_NAN:
        return STR  # `./outputs`: float's patterns starting with a dot are `.5`, `.inf` and `.nan`
    whole, dot, fraction = body.partition(".")
    if dot and _ascii_digits(whole):  # float's `[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?`, the common case
        mantissa, e, exponent = fraction.replace("E", "e").partition("e")
        if (not mantissa or _ascii_digits(mantissa)) and (
                not e or exponent[:1] in ("-", "+") and _ascii_digits(exponent[1:])):
            return FLOAT
        return None
    if dot or ":" in text or body[:2] in ("0x", "0b") or set(body) <= _DIGITS_OR_UNDERSCORE:
        return None  # float, base 60, hex, binary, `1_000`, octal: their patterns decide
    if text[4:5] == "-" and set(text[:4]) <= _DIGITS:
        return None  # maybe a timestamp
    return STR  # `1e-4`, `3b`: no int (digits and `_` only, but for 0x/0b), float or timestamp


def exponent_number(text: str) -> bool:
    """Whether plain text YAML 1.1 leaves a string is a number to the frameworks' parsers (`1e-4`)."""
    return text[:1] in NUMBER_START and EXPONENT.match(text) is not None


def typed_plain(text: str):
    """The value `text` has when written unquoted: how the frameworks' parsers read a command-line
    override such as `data.train_batch_size=1024`. Text that would be a number too long to keep stays
    text."""
    tag = plain_tag(text)
    if tag == STR:
        return float(text.replace("_", "")) if exponent_number(text) else text
    if tag == NULL:
        return None
    if tag == BOOL:
        return BOOLEANS[text.lower()]
    if (tag == INT or tag == FLOAT) and len(text) <= _SHORT:
        return int(text) if tag == INT else float(text)  # as SafeConstructor reads these shapes
    from .yaml import typed_by_pyyaml

    return typed_by_pyyaml(text)


def value_offset(lines: list, node: Scalar) -> Optional[int]:
    """Where on its line the string `node` holds starts (0-based), when the line writes it as it
    reads: on one line, plain or quoted without escapes; else None. `lines`: the file's lines."""
    span = node.span
    if span.line != span.end_line or span.line > len(lines) or not isinstance(node.value, str):
        return None
    head = lines[span.line - 1]
    start, end = span.column - 1, span.end_column - 1
    if head[start:start + 1] in ("'", '"'):
        start, end = start + 1, end - 1
    return start if head[start:end] == node.value else None
