"""Read YAML into a Document through PyYAML's composer, never its constructor.

Composing builds the node graph with positions and constructs no object, so a
`!!python/object` tag is inert: such a node becomes Unknown. Aliases are
shared, not copied, so an alias bomb costs nothing; a hard budget on nodes
guards the conversion anyway. Scalars are typed by the tag PyYAML's resolver
gives them, the YAML 1.1 way the frameworks' loaders do it, except that `1e-4`
counts as a number (the frameworks' argument parsers convert it).
"""

from __future__ import annotations

import re

import yaml

from ..document import Document, Mapping, ParseError, Scalar, Sequence, Span, Unknown

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader

MAX_NODES = 200_000
# libyaml's composer recurses in C: ~30 000 nested levels overflow an 8 MB stack
# and kill the process. Text that might nest deeper than this goes through the
# pure-Python loader, whose recursion fails cleanly (a RecursionError).
MAX_C_DEPTH = 5_000

_STR = "tag:yaml.org,2002:str"
# Only scalar constructors, which build plain values from text; never objects.
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_TYPED = {
    "tag:yaml.org,2002:null": _CONSTRUCTOR.construct_yaml_null,
    "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
    "tag:yaml.org,2002:int": _CONSTRUCTOR.construct_yaml_int,
    "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float,
}
# YAML 1.1 wants a dot and a signed exponent (`1.0e-4`); `1e-4`, `1E5`, `1.0e4` are our extension.
_EXPONENT = re.compile(r"[-+]?([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$")
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


def read_yaml(path: str, text: str) -> Document:
    pure = _Loader is yaml.SafeLoader or _depth_bound(text) > MAX_C_DEPTH
    try:
        loader = yaml.SafeLoader(text) if pure else _Loader(text)
        try:
            node = loader.get_single_node()
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
    converter = _Converter()
    root = converter.convert(node) if node is not None else None
    if not isinstance(root, Mapping):
        root = Mapping(span=Span(1, 1, 1, 1))
    return Document(path=path, format="yaml", root=root, text=text)


def _depth_bound(text: str) -> int:
    """An upper bound on how deep `text` nests, cheap enough for every file.

    A block level starts at a deeper column than its parent (only a sequence
    right under a mapping key may share the key's column), so block levels are
    at most twice the longest line; each flow level needs its own bracket.
    """
    longest = max(map(len, text.split("\n")))
    return 2 * longest + 2 + text.count("[") + text.count("{")


def _span(node) -> Span:
    start, end = node.start_mark, node.end_mark
    return Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)


class _Converter:
    def __init__(self):
        self.seen: dict = {}
        self.count = 0

    def convert(self, node):
        done = self.seen.get(id(node))
        if done is not None:
            return done
        self.count += 1
        if self.count > MAX_NODES:
            raise ParseError("YAML document has too many nodes (an alias bomb?)", node.start_mark.line + 1)
        if node.tag not in _STANDARD_TAGS:
            result = Unknown(_span(node), f"YAML tag {node.tag} is not interpreted")
        elif isinstance(node, yaml.ScalarNode):
            result = _scalar(node)
        elif isinstance(node, yaml.SequenceNode):
            result = Sequence(span=_span(node))
            self.seen[id(node)] = result
            result.items = [self.convert(item) for item in node.value]
        else:
            result = Mapping(span=_span(node))
            self.seen[id(node)] = result
            self.fill(result, node)
        self.seen[id(node)] = result
        return result

    def fill(self, mapping: Mapping, node) -> None:
        merged = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged.append(value_node)
                continue
            key = self.convert(key_node)
            if not isinstance(key, Scalar):
                continue
            name = key.value if isinstance(key.value, str) else str(key.value)
            if name in mapping.items:
                mapping.duplicates.append((name, key.span))
            mapping.items[name] = self.convert(value_node)
            mapping.key_spans[name] = key.span
        # `<<: *base` fills only the keys the mapping does not set itself.
        for value_node in merged:
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                base = self.convert(source)
                if isinstance(base, Mapping):
                    for name, value in base.items.items():
                        if name not in mapping.items:
                            mapping.items[name] = value
                            mapping.key_spans[name] = base.key_spans.get(name, base.span)


def _scalar(node):
    """Type a scalar by its (resolved or explicit) tag, as PyYAML's safe loader would."""
    span = _span(node)
    text = node.value
    if node.tag == _STR:
        # Quoted, block, `!!str`, or plain text that YAML 1.1 leaves a string.
        if not node.style and _EXPONENT.match(text):
            return Scalar(float(text.replace("_", "")), span)
        return Scalar(text, span, quoted=node.style in ("'", '"'))
    construct = _TYPED.get(node.tag)
    if construct is None:  # a timestamp, `=`, `<<`, binary...: kept as written
        return Scalar(text, span)
    try:
        return Scalar(construct(node), span, quoted=node.style in ("'", '"'))
    except (ValueError, KeyError, yaml.YAMLError) as exc:  # `!!int x`, or more digits than int() takes
        return Unknown(span, f"{text[:20]!r} is not a valid {node.tag.rsplit(':', 1)[-1]}: {str(exc)[:60]}")


_RESOLVER = yaml.resolver.Resolver()


def typed_plain(text: str):
    """The value `text` has when written unquoted: how the frameworks' parsers
    read a command-line override such as `data.train_batch_size=1024`."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    if tag == _STR:
        return float(text.replace("_", "")) if _EXPONENT.match(text) else text
    try:
        return _TYPED[tag](yaml.ScalarNode(tag, text)) if tag in _TYPED else text
    except (ValueError, KeyError, yaml.YAMLError):
        return text

