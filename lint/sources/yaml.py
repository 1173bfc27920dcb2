"""Read YAML into a Document from PyYAML's parser events, never its constructor.

The events come from libyaml (PyYAML's pure-Python parser when libyaml is
missing) and are built into the Document here, in one loop without recursion:
no object is constructed, so a `!!python/object` tag is inert (such a node
becomes Unknown); nesting is bounded by MAX_DEPTH and the document by
MAX_NODES, both counted while building, before the next node is read. An alias
is shared, not copied, but counts as many nodes as its value holds, so a
billion laughs stops at the bound. Scalars are typed by the tag PyYAML's
resolver gives them, the YAML 1.1 way the frameworks' loaders do it, except
that `1e-4` counts as a number (the frameworks' argument parsers convert it).

Lines end at "\\r\\n", "\\r", "\\n", "\\x85", "\\u2028" and "\\u2029", as
PyYAML and libyaml count them; columns count characters.
"""

from __future__ import annotations

from ..document import (
    Document,
    LimitExceeded,
    Mapping,
    Node,
    ParseError,
    Scalar,
    Sequence,
    Span,
    Unknown,
    breaks_other_than_newline,
    without_surrogates,
)
from ..lazy_pattern import LazyPattern, compiling_lazily

with compiling_lazily():  # PyYAML's patterns compile when first run (lint/lazy_pattern.py)
    import yaml
    from yaml.events import (
        AliasEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceStartEvent,
        StreamEndEvent,
    )
from ..limits import MAX_DEPTH, MAX_NODES, MAX_NUMBER_DIGITS
from . import digits_why, long_int
from .plain import BOOL, BOOLEANS, INT, MERGE, NULL, STR, exponent_number, plain_tag, value_offset

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader

# Only scalar constructors, which build plain values from text; never objects.
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_TYPED = {
    "tag:yaml.org,2002:null": _CONSTRUCTOR.construct_yaml_null,
    "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
    INT: _CONSTRUCTOR.construct_yaml_int,
    "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float,
}
# What a constructor raises on text that is not of its type (`!!int`, `!!bool x`, `!!float abc`).
_NOT_OF_TYPE = (ValueError, KeyError, IndexError, TypeError, OverflowError, yaml.YAMLError)
_NOT_DIGIT = LazyPattern(r"[^0-9a-fA-F]+")
_STANDARD_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:omap",
    "tag:yaml.org,2002:merge",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:binary",
    "tag:yaml.org,2002:value",
}
_RESOLVER = yaml.resolver.Resolver()
# Plain scalars' tags, by (text, implicit): keys and values repeat across a tree of configs,
# and resolving tries a regex per candidate type. Bounded: only short texts, and so many.
_RESOLVED: dict = {}
_RESOLVED_MAX = 8192
_new_span = tuple.__new__
_NO_DEPS = Scalar.deps  # Scalar's defaults, given positionally: a keyword costs a third of the call
_QUOTES = ("'", '"')


def _resolve(text: str, implicit) -> str:
    """The tag of an untagged scalar: every one not plain is a string; a plain one's as PyYAML's resolver
    gives it (sources/plain.py, else the resolver itself). Remembered for short texts."""
    tag = (plain_tag(text) or _RESOLVER.resolve(yaml.ScalarNode, text, implicit)) if implicit[0] else STR
    if len(text) <= 64 and len(_RESOLVED) < _RESOLVED_MAX:
        _RESOLVED[(text, implicit)] = tag
    return tag


def read_yaml(path: str, text: str) -> Document:
    pure = _Loader is yaml.SafeLoader
    try:
        loader = _Loader(text)  # only its parser is used: the events
        try:
            root = _Builder(loader).document()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ParseError(f"YAML syntax error: {problem}", line, column) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        # libyaml counts this offset in UTF-8 bytes, the pure reader in characters.
        offset = exc.position if pure else len(text.encode("utf-8")[: exc.position].decode("utf-8", "ignore"))
        before = text[:offset]
        line, column = before.count("\n") + 1, offset - before.rfind("\n")
        raise ParseError(f"YAML error: {exc.reason} (#x{exc.character:04x})", line, column) from None
    except yaml.YAMLError as exc:
        message = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise ParseError(f"YAML error: {message}") from None
    if not isinstance(root, Mapping):
        root = Mapping(span=Span(1, 1, 1, 1))
    return Document(path=path, format="yaml", root=root, text=text)


def _span(start, end) -> Span:
    # tuple.__new__ directly: the NamedTuple constructor is a Python-level call per value.
    return _new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1, None))


class _Open:
    """A collection whose end event has not come yet."""

    __slots__ = ("node", "mapping", "start", "tag", "anchor", "size", "key", "merges")

    def __init__(self, node, start, tag: str, anchor: Optional[str]):
        self.node = node
        self.mapping = type(node) is Mapping  # else a Sequence
        self.start = start  # the start event
        self.tag = tag
        self.anchor = anchor
        self.size = 1  # nodes below and including it, aliases counted in full
        self.key = _NO_KEY  # a mapping's key waiting for its value: (its name, its span)
        self.merges: list = []  # `<<` values, applied at the end


_NO_KEY = object()
_MERGE_KEY = object()
_SKIPPED_KEY = object()  # a key that is not a scalar: the pair is left out, as PyYAML's loaders fail on it


class _Builder:
    def __init__(self, loader):
        self.loader = loader
        self.anchors: dict = {}  # anchor -> [node, size]; size None while the node is still open
        self.sizes: dict = {}  # id(collection) -> nodes it holds, aliases counted in full
        self.count = 0  # nodes so far, aliases counted in full
        self.through_aliases = 0

    def document(self) -> Optional[Node]:
        """The single document's root, or None for an empty stream."""
        loader = self.loader
        loader.get_event()  # stream start
        if loader.check_event(StreamEndEvent):
            return None
        start = loader.get_event()  # document start
        root = self.root()
        loader.get_event()  # document end
        if not loader.check_event(StreamEndEvent):
            event = loader.get_event()
            raise yaml.composer.ComposerError(
                "expected a single document in the stream", start.start_mark,
                "but found another document", event.start_mark,
            )
        return root

    def root(self) -> Node:
        stack: list = []
        get = self.loader.get_event
        resolved = _RESOLVED
        while True:
            event = get()
            kind = type(event)
            merge = False
            if kind is ScalarEvent:
                self.count += 1  # self.counted(1, event), inlined: this runs for every scalar
                if self.count > MAX_NODES:
                    self.counted(0, event)
                tag = event.tag
                if tag is None or tag == "!":
                    text = event.value
                    tag = resolved.get((text, event.implicit)) or _resolve(text, event.implicit)
                # self.scalar(event, tag), inlined for the common case
                if tag in _STANDARD_TAGS:
                    start, end = event.start_mark, event.end_mark
                    span = _new_span(Span, (start.line + 1, start.column + 1, end.line + 1, end.column + 1, None))
                    text = event.value
                    if not text.isascii():
                        text = without_surrogates(text)
                    if tag == STR and stack and stack[-1].key is _NO_KEY and stack[-1].mapping and (
                            event.anchor is None and (event.style or not exponent_number(text))):
                        frame = stack[-1]  # a mapping's string key: its name and place, and no node
                        frame.size += 1
                        frame.key = (text, span)
                        continue
                    value = _scalar(tag, text, event.style, span)
                else:
                    value = self.scalar(event, tag)
                size, merge = 1, tag == MERGE
                if event.anchor is not None:
                    self.anchor(event, [value, 1])
            elif kind is AliasEvent:
                value, size = self.alias(event)
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                stack.append(self.open(event, len(stack)))
                continue
            else:  # the end of the innermost collection
                value, size = self.close(stack.pop(), event)
            if not stack:
                return value
            # self.add(stack[-1], value, size, merge), inlined: this runs for every node
            frame = stack[-1]
            frame.size += size
            if not frame.mapping:
                frame.node.items.append(value)
                continue
            key = frame.key
            if key is _NO_KEY:  # `value` is a key: its name and place are kept
                if merge:
                    frame.key = _MERGE_KEY
                elif isinstance(value, Scalar):
                    frame.key = (value.value if isinstance(value.value, str) else str(value.value), value.span)
                else:
                    frame.key = _SKIPPED_KEY
                continue
            frame.key = _NO_KEY
            if key is _MERGE_KEY:  # not a value of the mapping: only the keys it brings count (in merge())
                frame.size -= size
                frame.merges.append(value)
                self.count -= size
            elif key is not _SKIPPED_KEY:
                name, key_span = key
                node = frame.node
                if name in node.items:
                    node.duplicates.append((name, key_span))
                node.items[name] = value
                node.key_spans[name] = key_span

    # -- counting --------------------------------------------------------------
    def counted(self, size: int, event, alias: bool = False) -> None:
        """Count `size` more nodes, stopping at the bound before building them."""
        self.count += size
        if alias:
            self.through_aliases += size
        if self.count > MAX_NODES:
            why = " once its aliases are expanded" if self.through_aliases else ""
            mark = event.start_mark
            raise LimitExceeded(f"YAML document has too many nodes: more than {MAX_NODES:,}{why}",
                                mark.line + 1, mark.column + 1)

    def anchor(self, event, entry: list) -> None:
        if event.anchor in self.anchors:
            first = self.anchors[event.anchor][0].span.line
            problem = f"found duplicate anchor {event.anchor!r}; the first is on line {first}"
            raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
        self.anchors[event.anchor] = entry

    def alias(self, event) -> tuple:
        entry = self.anchors.get(event.anchor)
        if entry is None:
            raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
        node, size = entry
        # An alias inside its own anchor's value (`&a [*a]`) is a reference back: one node.
        self.counted(size or 1, event, alias=True)
        return node, size or 1

    # -- collections -------------------------------------------------------------
    def open(self, event, depth: int) -> _Open:
        if depth > MAX_DEPTH:
            mark = event.start_mark
            raise LimitExceeded(f"YAML nesting is too deep (more than {MAX_DEPTH} levels)",
                                mark.line + 1, mark.column + 1)
        self.counted(1, event)
        mapping = type(event) is MappingStartEvent
        tag = event.tag
        if tag is None or tag == "!":
            tag = _RESOLVER.resolve(yaml.MappingNode if mapping else yaml.SequenceNode, None, event.implicit)
        node = Mapping() if mapping else Sequence()
        node.span = _span(event.start_mark, event.start_mark)
        frame = _Open(node, event, tag, event.anchor)
        if event.anchor is not None:
            self.anchor(event, [node, None])
        return frame

    def close(self, frame: _Open, end) -> tuple:
        node = frame.node
        node.span = _span(frame.start.start_mark, end.end_mark)
        if frame.merges:
            self.merge(frame, end)
        if frame.tag not in _STANDARD_TAGS:
            node = Unknown(node.span, f"YAML tag {frame.tag} is not interpreted")
        self.sizes[id(node)] = frame.size
        if frame.anchor is not None:
            self.anchors[frame.anchor] = [node, frame.size]
        return node, frame.size

    def merge(self, frame: _Open, event) -> None:
        """`<<: *base` fills only the keys the mapping does not set itself."""
        mapping = frame.node
        for value in frame.merges:
            for base in value.items if isinstance(value, Sequence) else [value]:
                if not isinstance(base, Mapping):
                    continue
                self.counted(len(base.items), event, alias=True)  # the keys looked at
                for name, item in base.items.items():
                    if name not in mapping.items:
                        size = self.sizes.get(id(item), 1)
                        self.counted(size, event, alias=True)
                        frame.size += size + 1
                        mapping.items[name] = item
                        mapping.key_spans[name] = base.key_spans.get(name, base.span)

    # -- scalars -------------------------------------------------------------------
    @staticmethod
    def scalar(event, tag: str) -> Node:
        span = _span(event.start_mark, event.end_mark)
        if tag not in _STANDARD_TAGS:
            return Unknown(span, f"YAML tag {tag} is not interpreted")
        return _scalar(tag, without_surrogates(event.value), event.style, span)


def _scalar(tag: str, text: str, style: Optional[str], span: Span) -> Node:
    """Type a scalar by its (resolved or explicit) tag, as PyYAML's safe loader would."""
    if tag == STR:
        # Quoted, block, `!!str`, or plain text that YAML 1.1 leaves a string.
        if not style and exponent_number(text):
            return Scalar(float(text.replace("_", "")), span)
        return Scalar(text, span, _NO_DEPS, None, style in _QUOTES)  # positional: a call per value
    construct = _TYPED.get(tag)
    if construct is None:  # a timestamp, `=`, `<<`, binary...: kept as written
        return Scalar(text, span)
    if tag == INT and len(text) > MAX_NUMBER_DIGITS:
        digits = len(_NOT_DIGIT.sub("", text))
        if digits > MAX_NUMBER_DIGITS:  # before int(): past 4,300 digits it raises, and it is quadratic
            return Unknown(span, digits_why(digits))
    # The common cases without a node and a constructor call, as SafeConstructor reads them.
    if tag == INT and text.isascii() and text.isdigit() and (text[0] != "0" or text == "0"):
        value = int(text)  # decimal: no sign, `_`, base prefix, octal `0` or base-60 `:`
    elif tag == NULL:
        value = None
    elif tag == BOOL and text.lower() in BOOLEANS:
        value = BOOLEANS[text.lower()]
    else:
        try:
            value = construct(yaml.ScalarNode(tag, text, style=style))
        except _NOT_OF_TYPE as exc:  # `!!int x`, `!!int` with no value, `!!bool maybe`...
            return Unknown(span, f"{text[:20]!r} is not a valid {tag.rsplit(':', 1)[-1]}: {str(exc)[:60]}")
    too_long = long_int(value) if type(value) is int else None  # `1:2:3:...`, base 60
    if too_long:
        return Unknown(span, too_long)
    return Scalar(value, span, _NO_DEPS, None, style in _QUOTES)


def typed_by_pyyaml(text: str):
    """plain.typed_plain, for the shapes it leaves to PyYAML's resolver and constructors."""
    tag = _resolve(text, (True, False))
    node = _scalar(tag, text, None, Span(1, 1, 1, 1))
    return node.value if isinstance(node, Scalar) else text


def string_in_place(text: str, node: Optional[Node]) -> Optional[str]:
    """The YAML text with only the string `node` holds left where it is written (lines kept, every
    other line empty, the rest of its own line spaces), so a reader of that string (a shell script
    under `run: |`) counts lines and columns as the file does. For a literal block (`|`, `|-`, `|+`),
    whose lines keep their indentation (a shell skips it), and a string on one line; None for a
    folded block, a string over several lines, escapes, or lines not broken at "\\n" only."""
    if not isinstance(node, Scalar) or not isinstance(node.value, str) or breaks_other_than_newline(text):
        return None
    lines = text.replace("\r\n", "\n").split("\n")
    span = node.span
    head = lines[span.line - 1] if span.line <= len(lines) else ""
    kept = [""] * len(lines)
    if head[span.column - 1:span.column] == "|":
        last = span.end_line - (1 if span.end_column == 1 else 0)
        body = lines[span.line:last]
        written = [line for line in body if line.strip()]
        indent = len(written[0]) - len(written[0].lstrip(" ")) if written else 0
        if "\n".join(line[indent:] for line in body).rstrip("\n") != node.value.rstrip("\n"):
            return None  # an indentation indicator, tabs or a comment-like line: not as read
        kept[span.line:last] = body
    else:
        start = value_offset(lines, node)
        if start is None:
            return None  # over several lines, or escapes in a quoted string
        kept[span.line - 1] = " " * start + node.value
    return "\n".join(kept)
