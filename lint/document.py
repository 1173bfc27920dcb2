"""The format-neutral tree every source reader produces.

Every value knows where it was written (its Span), so a rule can point at the
exact characters at fault whatever the file format. A value the reader could
not know is `Unknown`, never a guess. Python configs also record which
top-level names a value was computed from (`deps`), because some rules judge
how a value was derived, not only what it is.
"""

from __future__ import annotations

from collections.abc import Iterator

from .lazy_pattern import LazyPattern
from .lean_dataclass import field, lean_dataclass
from .span import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Union

# Where each reader starts a new line, which is what a Span's line counts.
# str.splitlines() would also break at \x0b, \x0c, \x1c-\x1e, U+0085, U+2028 and
# U+2029, which JSON and TOML allow inside strings: every later line would be off.
LINE_BREAKS: dict[Optional[str], LazyPattern] = {
    "python": LazyPattern(r"\r\n|\r|\n"),  # the tokenizer's
    "yaml": LazyPattern("\r\n|[\r\n\x85\u2028\u2029]"),  # PyYAML's and libyaml's
}
_NEWLINE_ONLY = LazyPattern("\n")  # JSON, TOML, shell; CRLF ends a line at its "\n"


def line_starts(text: str, fmt: Optional[str]) -> list:
    """Offset of the first character of each line, lines broken as the reader of `fmt` breaks them."""
    return [0] + [m.end() for m in LINE_BREAKS.get(fmt, _NEWLINE_ONLY).finditer(text)]


def split_lines(text: str, fmt: Optional[str]) -> list:
    """The lines of `text` as Spans number them, without their line breaks."""
    if _newline_only(text, fmt):
        return text.split("\n")  # the same lines, without a regex: only "\n" breaks them here
    return LINE_BREAKS.get(fmt, _NEWLINE_ONLY).split(text)


def first_lines(text: str, fmt: Optional[str], count: int) -> list:
    """`split_lines(text, fmt)[:count]`, without splitting the lines after them."""
    if _newline_only(text, fmt):
        return text.split("\n", count)[:count]
    return split_lines(text, fmt)[:count]


def _newline_only(text: str, fmt: Optional[str]) -> bool:
    """Whether only "\n" breaks the lines of `text` for the reader of `fmt`."""
    return "\r" not in text and (fmt != "yaml" or text.isascii())


SURROGATE = LazyPattern("[\ud800-\udfff]")  # a lone surrogate: no UTF-8 output can encode it


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate (from an undecodable file name, or an escape such as `\\ud800` in
    a config) as U+FFFD, so any output encodes it."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # none: the common case, without a regex
        return text
    except UnicodeEncodeError:
        return SURROGATE.sub("\ufffd", text)


def breaks_other_than_newline(text: str) -> bool:
    """Whether `text` holds a line break that some readers count and "\\n"-only ones do not (Python's
    lone "\\r"; YAML's NEL, LS and PS): its lines are numbered otherwise by different readers.
    Substring tests, not a regex: this runs on every file with a directive."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return True
    return not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text)


@lean_dataclass(frozen=True)
class Symbol:
    """A name a Python config imported or defined, resolved to its qualified name."""

    qualname: str

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    def __str__(self) -> str:
        return self.qualname


class Node:
    span: Span
    deps: frozenset = frozenset()
    # The top-level assignment that produced this value (Python configs), so a
    # rule can name the variable rather than only the characters.
    origin: Optional[str] = None


@lean_dataclass(eq=False)
class Scalar(Node):
    """A single value: a number, a string, a bool, None, or a Symbol (Python configs)."""

    value: Any  # int, float, bool, str, None or Symbol
    span: Span
    deps: frozenset = frozenset()
    origin: Optional[str] = None
    # Text exactly as written (YAML/TOML); lets rules tell `"4"` from `4`.
    quoted: bool = False


@lean_dataclass(eq=False)
class Mapping(Node):
    """Keys to values, each key with where it is written."""

    items: dict = field(default_factory=dict)  # str -> Node
    key_spans: dict = field(default_factory=dict)  # str -> Span
    span: Span = Span(1, 1, 1, 1)
    deps: frozenset = frozenset()
    origin: Optional[str] = None
    duplicates: list = field(default_factory=list)  # [(key, Span)] for keys given twice

    def get(self, *path: str) -> Optional[Node]:
        node: Optional[Node] = self
        for key in path:
            if not isinstance(node, Mapping):
                return None
            node = node.items.get(key)
        return node

    def __iter__(self) -> Iterator[str]:
        return iter(self.items)


@lean_dataclass(eq=False)
class Sequence(Node):
    """A list or a tuple."""

    items: list = field(default_factory=list)
    span: Span = Span(1, 1, 1, 1)
    deps: frozenset = frozenset()
    origin: Optional[str] = None


@lean_dataclass(eq=False)
class Unknown(Node):
    """A value that cannot be known without running something."""

    span: Span
    why: str = ""
    deps: frozenset = frozenset()
    origin: Optional[str] = None


if TYPE_CHECKING:
    Value = Union[Scalar, Mapping, Sequence, Unknown]


@lean_dataclass
class Document:
    """One file read: its values under `root`, and its text."""

    path: str  # as the user should see it
    format: str  # "python", "yaml", "toml", "json"
    root: Mapping
    text: str
    # Python only: top-level name -> Node as it stands after the module body.
    namespace: dict = field(default_factory=dict)
    # Python only: names assigned at top level that no later statement reads.
    unused: set = field(default_factory=set)
    # A launch line's own settings (`megatron sft --micro_batch_size 1 ...`) carry
    # the framework their launcher implies, since the keys alone may not tell.
    launched_by: Optional[str] = None
    # One config of several the file holds, by name (a function of a config registry), when the
    # document is that config alone.
    selected: Optional[str] = None
    # OmegaConf interpolations resolved (sources/omegaconf.py Resolution: the document as written,
    # the values read through them); None: the tree is as written.
    resolved: Any = None
    # Hydra composition (sources/hydra.py Composition: the configs its `defaults:` list composed);
    # None: the tree is the file's alone.
    composed: Any = None
    # A config a launch line names: (that launch script, the program it runs as written), which reads
    # the config (lint/launching/lines.py apply_overrides); None: not known.
    program: Optional[tuple] = None

    def get(self, *path: str) -> Optional[Node]:
        return self.root.get(*path)


@lean_dataclass
class LaunchDocument(Document):
    """The settings a launch line holds (`Launcher.inline`), with the entry point it runs, so an
    adapter whose entry points differ (defaults, asserts) reads which one it is."""

    entry: Optional[str] = None
    handed_over: Optional[str] = None  # the project's own program that runs `entry`'s main (Launch.handed_over)
    # Hydra's `--config-path` and `--config-name` (Words) and the line's overrides as launching/lines.py
    # reads them, for the composition of the config the line names (sources/hydra.py).
    config_path: Any = None
    config_name: Any = None
    overrides: list = field(default_factory=list)


class ParseError(Exception):
    """A file that is not valid in its format; becomes a BL001 diagnostic."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)


class LimitExceeded(ParseError):
    """A file past one of the bounds in lint/limits.py: one BL003 diagnostic at
    the place the bound was reached, and the file is not checked further."""


class TooManyValues(LimitExceeded):
    """A JSON document of more values than any training config holds (lint/limits.py MAX_NODES): a data
    file (a tokenizer's vocabulary under any name, a dataset), skipped with a notice, not a BL003."""
