"""Read YAML into a Document through PyYAML's composer, never its constructor.

Composing builds the node graph with positions and constructs no object, so a
`!!python/object` tag is inert: such a node becomes Unknown. Aliases are
shared, not copied, so an alias bomb costs nothing; a hard budget on nodes
guards the conversion anyway. Scalars are typed here, the YAML 1.1 way the
frameworks' PyYAML loaders do it, except that `1e-4` counts as a number (the
frameworks' argument parsers convert it).
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

_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}
_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}
_NULL = {"", "~", "null", "Null", "NULL"}
_INT = re.compile(r"[-+]?(0|[1-9][0-9_]*)$")
_HEX = re.compile(r"[-+]?0x[0-9a-fA-F_]+$")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_INF_NAN = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}
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
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ParseError(f"YAML syntax error: {problem}", line, column) from None
    except yaml.YAMLError as exc:
        message = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise ParseError(f"YAML error: {message}") from None
    converter = _Converter()
    root = converter.convert(node) if node is not None else None
    if not isinstance(root, Mapping):
        root = Mapping(span=Span(1, 1, 1, 1))
    return Document(path=path, format="yaml", root=root, text=text)


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


def _scalar(node) -> Scalar:
    text = node.value
    span = _span(node)
    if node.style:  # quoted or block scalars are strings (plain: None or "")
        return Scalar(text, span, quoted=node.style in ("'", '"'))
    return Scalar(plain_value(text), span)


def plain_value(text: str):
    """The value of an unquoted scalar."""
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        return int(text.replace("_", ""))
    if _HEX.match(text):
        return int(text.replace("_", ""), 16)
    if _FLOAT.match(text) and any(ch.isdigit() for ch in text):
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return text
    return _INF_NAN.get(text.lower(), text)
