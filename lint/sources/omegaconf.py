"""OmegaConf interpolations, resolved over a YAML document the way OmegaConf resolves them when
the program reads a value (omegaconf 2.3.0: grammar/OmegaConfGrammarLexer.g4 and
OmegaConfGrammarParser.g4, grammar_visitor.py, base.py, resolvers/oc/__init__.py).

- `${a.b}`, `${a[0]}`, `${a.${k}}`: the value at that path from the config's root; a leading dot
  starts from the container holding the interpolating value (`${.x}`: a sibling), each further
  dot one container up (`${..x}`: a sibling of that container) (base.py `_resolve_key_and_root`,
  called on the value's parent container);
- a value that is one interpolation takes the target's type (`${a}` of 8 is 8); text around
  interpolations makes a string of each part's str() (`x_${a}` is "x_8") (grammar_visitor.py
  `visitText`, `_unescape`);
- `${oc.select:key,default}`: the value at key (from the root, or relative with leading dots),
  else the default (null without one) when the key is absent or `???` (`select_value`);
- `${oc.env:VAR,default}`: the variable's value when the job starts, unknown here; with a default,
  the default is assumed and every finding on it says so (OmegaConf returns it as text,
  `str(default)`; the typed settings reading it take the number);
- `${oc.decode:text}`: the text read as one value of the grammar (`${oc.decode:${oc.env:N,8}}` is 8);
- `\\${` is a literal `${` (an even number of backslashes before it are halved), and the
  backslashes before an interpolation are halved.

Anything else is Unknown, never an error: a resolver the program registers (Hydra's `${hydra:...}`,
NeMo's `${multiply:...}`), a cycle, an interpolation to its own container, a key that is not
there, text the grammar refuses. A file with a Hydra `defaults:` list, and a launch line's own
settings, are composed with other configs (lint/sources/hydra.py, before this runs): once composed
the document holds every key; where the composition is not followed, a key they do not write may
come from those configs, so an interpolation to it, and an oc.select default standing for it, is
unknown.

A value read through an interpolation is an `Interpolated` scalar that keeps the span where the
value is written and that key's path as its `origin` (facts name it, as a Python value is named by
its variable: that is the text to edit), with the interpolations it came through (`route`), which
the engine shows as notes on a finding at that value. A value written inside the interpolation (a
default) is placed on its own characters when the scalar is written on one line as it reads.
"""

from __future__ import annotations

import re

from ..document import Document, LaunchDocument, Mapping, Node, Scalar, Sequence, Span, Unknown, split_lines
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import field, lean_dataclass, replace
from ..limits import MAX_DEPTH, MAX_EVAL_STEPS, MAX_LENGTH, MAX_NODES
from .plain import value_offset

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn, Optional

_OPEN = "${"
# Nesting of interpolations, brackets and quotes inside one value, and of interpolations followed
# from one another: configs nest two or three.
_MAX_NESTING = 64
_SHOWN = 80  # characters of an interpolation quoted in a note


@lean_dataclass(frozen=True)
class Hop:
    """One interpolation a value was read through: where the interpolating value is written."""

    span: Span
    key: str  # its dotted path
    text: str  # the interpolation as written (shortened)


@lean_dataclass(eq=False)
class Interpolated(Scalar):
    """A value read through interpolations (span and origin: where it is written)."""

    route: tuple = ()  # Hop, the interpolating value first
    assumed: str = ""  # what was assumed to know it (an oc.env default): every finding says it
    read: bool = False  # a fact was made of it (lint/frameworks/facts.py marks an assumed value so)


@lean_dataclass
class Resolution:
    """What resolving a document's interpolations gave: the document as written, and each value read
    through an interpolation by the span it is placed at (several values can read one target)."""

    written: Document
    by_span: dict = field(default_factory=dict)  # Span -> [Interpolated]


def resolve(doc: Document) -> Document:
    """`doc` with every interpolation in its tree resolved (the same document when it has none)."""
    if doc.resolved is not None:
        return doc
    root, found = resolve_tree(doc.root, doc.text, whole=_whole(doc))
    if root is doc.root:
        return doc
    return replace(doc, root=root, resolved=Resolution(doc, found))


def _whole(doc: Document) -> bool:
    """Whether every key the config has is in the document (no Hydra composition adds any, or the
    composition is done: lint/sources/hydra.py)."""
    if doc.composed is not None:
        return True
    return not isinstance(doc, LaunchDocument) and "defaults" not in doc.root.items


def resolve_tree(root: Mapping, text: str = "", whole: bool = True) -> tuple:
    """(a copy of `root` with its interpolations resolved, {Span: [Interpolated]}); `root` itself
    when it holds none. Untouched subtrees are shared, not copied."""
    sites = _sites(root)
    if not sites:
        return root, {}
    resolver = _Resolver(root, text, whole)
    results = {path: resolver.site(path, scalar) for path, scalar in sites}
    return _rebuilt(root, results), resolver.found


def notes(resolution: Resolution, facts) -> dict:
    """{Span: [(note message, note Span)]} for findings at a value read through interpolations: each
    interpolation it came through. Where several values read one target, only those the plan's facts
    hold (`facts`: an iterable of Fact) are noted, and none where a fact reads the target itself (the
    finding is then about it: the critic inheriting the actor's mini batch is not noted on the
    actor's finding). Under None, the notes every finding takes: each assumed value a fact was made
    of (a W from `${oc.env:NGPUS,8}` is in every verdict with W)."""
    facts = list(facts)
    used = {id(fact.node) for fact in facts if isinstance(fact.node, Interpolated)}
    direct = {fact.span for fact in facts if fact.node is not None and not isinstance(fact.node, Interpolated)}
    found: dict = {}
    for span, values in resolution.by_span.items():
        chosen = [] if span in direct else [v for v in values if id(v) in used] or (values if len(values) == 1 else [])
        for value in chosen:
            for hop in value.route:
                _add(found, span, (f"`{hop.key}: {hop.text}` reads this value", hop.span))
        for value in values:
            if value.assumed and value.read:
                _add(found, None, (f"`{value.route[0].key}` is {value.value}, {value.assumed}", value.span))
    return found


def _add(found: dict, key, note: tuple) -> None:
    kept = found.setdefault(key, [])
    if note not in kept:
        kept.append(note)


# -- the tree ------------------------------------------------------------------------------------


def _sites(root: Mapping) -> list[tuple[tuple, Scalar]]:
    """(path, value) of the string values holding `${`, in document order."""
    found: list[tuple[tuple, Scalar]] = []
    stack: list[tuple[tuple, Mapping | Sequence]] = [((), root)]
    seen = 0
    while stack and seen < MAX_NODES:
        path, node = stack.pop()
        seen += 1
        children = node.items.items() if isinstance(node, Mapping) else enumerate(node.items)
        below: list[tuple[tuple, Mapping | Sequence]] = []
        for key, child in children:
            if isinstance(child, Scalar):
                if isinstance(child.value, str) and _OPEN in child.value:
                    found.append((path + (key,), child))
            elif isinstance(child, (Mapping, Sequence)) and len(path) < MAX_DEPTH:
                below.append((path + (key,), child))
        stack.extend(reversed(below))
    return found


def _rebuilt(root: Mapping, results: dict) -> Mapping:
    """A copy of the containers above each resolved value, with the values put in."""
    copies: dict = {(): _copy(root)}
    for path in sorted(results, key=len):
        for depth in range(1, len(path)):
            head = path[:depth]
            if head not in copies:
                parent = copies[path[:depth - 1]]
                copies[head] = parent.items[path[depth - 1]] = _copy(parent.items[path[depth - 1]])
    for path, result in results.items():
        if isinstance(result, tuple):  # a whole container: as copied, or as written
            result = copies.get(result) or _at(root, result)
        copies[path[:-1]].items[path[-1]] = result
    return copies[()]


def _at(root: Mapping, path: tuple):
    node = root
    for key in path:
        node = _child(node, key)
    return node


def _copy(node):
    if isinstance(node, Mapping):
        return Mapping(dict(node.items), dict(node.key_spans), node.span, node.deps, node.origin, list(node.duplicates))
    return Sequence(list(node.items), node.span, node.deps, node.origin)


def _dotted(path: tuple) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


# -- values --------------------------------------------------------------------------------------


class _Unknown(Exception):
    """Resolution stops: the value is not known (why)."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class _TooDeep(_Unknown):
    """Past the nesting bound: the value being resolved is unknown, but not the values on the way
    (each is known when resolved from nearer), so none of them is remembered as unknown."""


@lean_dataclass
class _Got:
    """What an interpolation or an argument gives: a node of the tree (and the path it is written
    at), or a value made here (`where`: its offsets in the text when it is written there)."""

    value: Any = None
    node: Optional[Node] = None
    path: tuple = ()
    where: Optional[tuple] = None
    assumed: str = ""

    @property
    def plain(self) -> Any:
        """Its Python value (a container's is not made: unknown)."""
        node = self.node
        if node is None:
            return self.value
        if isinstance(node, Scalar):
            return node.value
        if isinstance(node, Unknown):
            raise _Unknown(node.why)
        raise _Unknown("an interpolation of a whole mapping or list inside a value")


_ABSENT = object()


class _Resolver:
    def __init__(self, root: Mapping, text: str, whole: bool):
        self.root, self.text, self.whole = root, text, whole
        self.done: dict = {}  # path -> _Got (a value's resolution)
        self.active: list = []  # paths being resolved, for cycles
        self.steps = 0
        self.found: dict = {}  # Span -> [Interpolated]
        self.lines: Optional[list] = None
        self.depth = 0  # interpolations followed and nested, which each take stack

    def nested(self) -> None:
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise _TooDeep(f"interpolations nested or followed more than {_MAX_NESTING} deep")

    def charge(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > MAX_EVAL_STEPS:
            raise _Unknown(f"more than {MAX_EVAL_STEPS:,} steps of interpolation")

    # -- a site: one string value holding `${` ------------------------------------------------

    def site(self, path: tuple, scalar: Scalar):
        """The node the string value `scalar` at `path` resolves to; for a whole container, its
        path (a tuple), which `_rebuilt` places as the tree is copied."""
        try:
            node, real = self.value_at(path, scalar)
        except _Unknown as exc:  # past the nesting bound
            return Unknown(scalar.span, f"{_short(scalar.value)}: {exc.why}")
        return real if isinstance(node, (Mapping, Sequence)) else node

    def value_at(self, path: tuple, scalar: Scalar) -> tuple:
        """(node, the path it is written at) the string value `scalar` at `path` resolves to:
        memoized; a cycle is unknown."""
        done = self.done.get(path)
        if done is not None:
            return done
        if path in self.active:
            shown = " -> ".join(_dotted(p) for p in self.active[self.active.index(path):] + [path])
            raise _Unknown(f"an interpolation cycle ({shown})")
        depth = self.depth
        self.active.append(path)
        try:
            self.nested()
            got = _Parser(scalar.value, self, path[:-1]).config_value()
            done = self.made(got, path, scalar)
        except _TooDeep:
            raise
        except _Unknown as exc:
            done = Unknown(scalar.span, f"{_short(scalar.value)}: {exc.why}"), path
        finally:
            self.active.pop()
            self.depth = depth
        self.done[path] = done
        return done

    def made(self, got: _Got, path: tuple, scalar: Scalar) -> tuple:
        """(node, path written at) for what the value at `path` resolved to."""
        hop = Hop(scalar.span, _dotted(path), _short(scalar.value))
        node = got.node
        if isinstance(node, Unknown):
            raise _Unknown(node.why)
        if isinstance(node, (Mapping, Sequence)):
            if got.path == path[:len(got.path)]:
                raise _Unknown(f"{_dotted(got.path) or 'the root'} is a container holding the value itself")
            return node, got.path
        if isinstance(node, Scalar):
            made = Interpolated(node.value, node.span, node.deps, node.origin or _dotted(got.path), node.quoted,
                                route=(hop,) + getattr(node, "route", ()), assumed=getattr(node, "assumed", ""))
            where = got.path
        else:
            span = self.placed(scalar, got.where) if got.where else scalar.span
            made = Interpolated(got.value, span, scalar.deps, None, scalar.quoted, route=(hop,), assumed=got.assumed)
            where = path
        self.found.setdefault(made.span, []).append(made)
        return made, where

    # -- the tree as written ---------------------------------------------------------------------

    def raw(self, path: tuple) -> Optional[Node]:
        return _at(self.root, path)

    def deref(self, node: Optional[Node], path: tuple) -> tuple:
        """(node, path) with a string value holding `${` replaced by what it resolves to."""
        self.charge()
        if isinstance(node, Scalar) and isinstance(node.value, str) and _OPEN in node.value \
                and not isinstance(node, Interpolated):
            return self.value_at(path, node)
        return node, path

    def select(self, key: str, base: tuple) -> tuple:
        """(node, path) at `key` (OmegaConf's key syntax: `a.b`, `a[0]`, leading dots relative to
        `base`, the container holding the interpolating value); (_ABSENT, why) when not there."""
        dots = len(key) - len(key.lstrip("."))
        if dots:
            if dots - 1 > len(base):
                raise _Unknown(f"`{key}` goes above the config's root")
            start = base[:len(base) - (dots - 1)]
        else:
            start = ()
        parts = _split(key[dots:])
        node, path = self.deref(self.raw(start), start)
        for part in parts:
            if isinstance(node, Unknown):
                raise _Unknown(node.why)
            if not isinstance(node, (Mapping, Sequence)):
                return _ABSENT, f"{_dotted(path) or 'the root'} holds no keys"
            key_of = part if isinstance(node, Mapping) else _index(part, node)
            child = _child(node, key_of) if key_of is not None else None
            if child is None:
                return _ABSENT, f"{_dotted(path + (part,))} is not in the config"
            node, path = self.deref(child, path + (key_of,))
        if isinstance(node, Scalar) and node.value == "???":
            return _ABSENT, f"{_dotted(path)} is ??? (mandatory, not set)"
        return node, path

    def placed(self, scalar: Scalar, where: tuple) -> Span:
        """The span of characters where[0]..where[1] of a scalar's string, when the file writes it
        on one line as it reads; else the scalar's span."""
        span = scalar.span
        if span.path is not None or not self.text:
            return span
        if self.lines is None:
            self.lines = split_lines(self.text, "yaml")
        offset = value_offset(self.lines, scalar)
        if offset is None:
            return span
        return Span(span.line, offset + where[0] + 1, span.line, offset + where[1] + 1)


def _child(node, key):
    if isinstance(node, Mapping):
        return node.items.get(key) if isinstance(key, str) else None
    if isinstance(node, Sequence) and isinstance(key, int) and -len(node.items) <= key < len(node.items):
        return node.items[key]
    return None


def _index(part: str, node: Sequence) -> Optional[int]:
    if re.fullmatch(r"-?[0-9]{1,9}", part):
        return int(part)
    return None


_KEY_HEAD = LazyPattern(r"[^.\[]*")
_KEY_OTHER = LazyPattern(r"\.([^.\[]*)|\[(.*?)\]")


def _split(key: str) -> list:
    """OmegaConf's split_key (the dots before the key already taken): `a.b[c].d` -> [a, b, c, d]."""
    if key == "":
        return []
    head = _KEY_HEAD.match(key)
    if head is None:  # not so: the pattern matches empty text too
        raise _Unknown(f"`{key}` is not a key OmegaConf reads")
    parts = [head.group(0)]
    position = head.end()
    while position < len(key):
        match = _KEY_OTHER.match(key, position)
        if match is None:
            raise _Unknown(f"`{key}` is not a key OmegaConf reads")
        parts.append(match.group(1) if match.group(1) is not None else match.group(2))
        position = match.end()
    return parts


def _short(text: str) -> str:
    text = str(text)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


# -- the grammar ---------------------------------------------------------------------------------

# VALUE_MODE tokens a single-token primitive is typed by (OmegaConfGrammarLexer.g4; FLOAT, INT,
# BOOL and NULL win a tie with ID, being listed first).
_INT = r"[+-]?(?:0|[1-9](?:_?[0-9])*)"
_POINT = r"(?:(?:0|[1-9](?:_?[0-9])*)\.|(?:0|[1-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*)"
_FLOAT = re.compile(rf"[+-]?(?:{_POINT}|(?:0|[1-9](?:_?[0-9])*|{_POINT})[eE][+-]?[0-9](?:_?[0-9])*|[Ii][Nn][Ff]|[Nn][Aa][Nn])")
_INT_TOKEN = re.compile(_INT)
_BOOL = re.compile(r"[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]")
_NULL = re.compile(r"[Nn][Uu][Ll][Ll]")
_ID = LazyPattern(r"[A-Za-z_][A-Za-z0-9_-]*")
# Runs of an unquoted value's characters (ID's, UNQUOTED_CHAR's, COLON, WS; `$` and escapes apart),
# a dict key's (no colon), and of an interpolation key (INTER_KEY: any but these; `${` nests).
_PLAIN_RUN = re.compile(r"[A-Za-z0-9_\-/+.%*@?|: \t]+")
_KEY_PLAIN = re.compile(r"[A-Za-z0-9_\-/+.%*@?| \t]+")
_KEY_RUN = LazyPattern(r"(?:[^\\{}()\[\]:. \t'\"$]|\$(?!\{))+")
_ESCAPABLE = frozenset("\\()[]{}:=, \t")
_WS = " \t"
# Literal text up to the next `$`, backslash or closing quote.
_TEXT_RUNS = {"": re.compile(r"[^$\\]+"), "'": re.compile(r"[^$\\']+"), '"': re.compile(r'[^$\\"]+')}
_BACKSLASHES = LazyPattern(r"\\+")


class _Parser:
    """One string value read by OmegaConf's grammar and evaluated as it is read (the visitor's
    order: arguments before their resolver). Offsets count characters of the string."""

    def __init__(self, text: str, resolver: _Resolver, base: tuple):
        self.s, self.i, self.r, self.base = text, 0, resolver, base
        if len(text) > MAX_LENGTH:
            raise _Unknown(f"a value of more than {MAX_LENGTH:,} characters")

    def fail(self, what: str = "") -> NoReturn:
        raise _Unknown(f"not read by OmegaConf's grammar ({what or 'unexpected ' + repr(self.s[self.i:self.i + 10])})")

    def skip_ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in _WS:
            self.i += 1

    # configValue: text EOF -- the top level of a value.
    def config_value(self) -> _Got:
        parts = self.text(until="")
        if len(parts) == 1 and isinstance(parts[0], _Got):
            return parts[0]
        return self.joined(parts)

    def joined(self, parts: list) -> _Got:
        """Text and interpolations concatenated, each as str() (the visitor's `_unescape`)."""
        out, assumed, length = [], "", 0
        for part in parts:
            if isinstance(part, _Got):
                piece = str(part.plain)
                assumed = assumed or part.assumed
            else:
                piece = part
            length += len(piece)
            if length > MAX_LENGTH:
                raise _Unknown(f"a string of more than {MAX_LENGTH:,} characters")
            out.append(piece)
        return _Got(value="".join(out), assumed=assumed)

    def text(self, until: str) -> list:
        """Literal text and interpolations up to the end (or to the quote `until`), escapes read:
        `\\${` is `${`, backslashes before an interpolation are halved, others are kept."""
        s, buffer = self.s, []
        parts: list[str | _Got] = []
        run_of = _TEXT_RUNS[until]
        while self.i < len(s):
            literal = run_of.match(s, self.i)
            if literal is not None:
                buffer.append(literal.group(0))
                self.i = literal.end()
                continue
            char = s[self.i]
            if char == until:
                break
            if s.startswith(_OPEN, self.i):
                if buffer:
                    parts.append("".join(buffer))
                    buffer = []
                parts.append(self.interpolation())
                continue
            if char == "$":  # not followed by `{`
                buffer.append(char)
                self.i += 1
                continue
            backslashes = _BACKSLASHES.match(s, self.i)  # the runs stop at `$`, `\\` and the quote: a backslash
            if backslashes is None:
                self.fail()
            end = backslashes.end()
            run = end - self.i
            if s.startswith(_OPEN, end):
                if run % 2:  # ESC_INTER: an escaped `${`
                    buffer.append("\\" * (run // 2) + _OPEN)
                    self.i = end + 2
                else:  # TOP_ESC before an interpolation: halved
                    buffer.append("\\" * (run // 2))
                    self.i = end
            elif until and s.startswith(until, end):
                # Quoted: an odd run escapes the quote; an even one ending the string is halved.
                buffer.append("\\" * (run // 2) + (until if run % 2 else ""))
                self.i = end + run % 2
            else:
                buffer.append(s[self.i:end])
                self.i = end
        if buffer:
            parts.append("".join(buffer))
        return parts

    # interpolation: interpolationNode | interpolationResolver
    def interpolation(self) -> _Got:
        self.r.nested()
        self.r.charge()
        start = self.i
        self.i += 2
        self.skip_ws()
        dots = 0
        while self.i < len(self.s) and self.s[self.i] == ".":
            dots += 1
            self.i += 1
        pieces, names, bracketed, expect_key = [], True, False, True
        while True:
            if self.i >= len(self.s):
                self.fail("an interpolation without its closing brace")
            if self.s[self.i] == "[":
                self.i += 1
                pieces.append("[" + self.key() + "]")
                if self.i >= len(self.s) or self.s[self.i] != "]":
                    self.fail("an unclosed [")
                self.i += 1
                bracketed = True
            elif expect_key:
                piece = self.key()
                names = names and _ID.fullmatch(piece) is not None
                pieces.append(piece)
            else:
                break
            expect_key = self.s.startswith(".", self.i)
            if expect_key:
                self.i += 1
                pieces.append(".")
            elif not self.s.startswith("[", self.i):
                break
        self.skip_ws()
        if self.i >= len(self.s):
            self.fail("an interpolation without its closing brace")
        if self.s[self.i] == "}":
            self.i += 1
            got = self.node("." * dots + "".join(pieces))
        elif self.s[self.i] == ":" and not dots and not bracketed and names:
            self.i += 1
            name = "".join(pieces)
            args = self.arguments()
            got = self.call(name, args, self.s[start:self.i])
        else:
            self.fail()
        self.r.depth -= 1
        return got

    def key(self) -> str:
        """configKey: a nested interpolation (giving a string), an ID or an INTER_KEY."""
        if self.s.startswith(_OPEN, self.i):
            value = self.interpolation().plain
            if not isinstance(value, str):
                raise _Unknown("an interpolation that names a key gives no string")
            return value
        found = _KEY_RUN.match(self.s, self.i)
        if found is None:
            self.fail()
        self.i = found.end()
        return found.group(0)

    def node(self, key: str) -> _Got:
        """interpolationNode: the value at `key`; a key that is not there is unknown."""
        node, path = self.r.select(key, self.base)
        if node is _ABSENT:
            raise _Unknown(path if self.r.whole else f"{path} in this file (the configs it is composed with may set it)")
        if isinstance(node, Unknown):
            raise _Unknown(node.why)
        if path == self.base[:len(path)]:
            raise _Unknown(f"`${{{key}}}` is a container holding the value itself")
        return _Got(node=node, path=path)

    # -- resolvers ---------------------------------------------------------------------------

    def call(self, name: str, args: list, written: str) -> _Got:
        """A resolver OmegaConf registers itself (oc.select, oc.env, oc.decode); any other is unknown."""
        if name == "oc.select" and 1 <= len(args) <= 2:
            return self.select(args, written)
        if name == "oc.env" and 1 <= len(args) <= 2:
            variable = args[0].plain
            if len(args) == 1:
                raise _Unknown(f"the environment variable {variable} is read when the job starts")
            default = args[1]
            value = default.plain
            assumed = f"assumed from the default of `{_short(written)}`: {variable} is read when the job starts"
            return _Got(value=value, where=default.where if default.node is None else None, assumed=assumed)
        if name == "oc.decode" and len(args) == 1:
            value = args[0].plain
            if value is None:
                return _Got(value=None)
            if not isinstance(value, str):
                if args[0].assumed:  # an oc.env default, which OmegaConf gives as its text
                    return args[0]
                raise _Unknown("oc.decode takes a string")
            decoder = _Parser(value, self.r, self.base)
            got = decoder.element()
            decoder.skip_ws()
            if decoder.i != len(value):
                decoder.fail()
            return _Got(value=got.plain, assumed=args[0].assumed or got.assumed)
        raise _Unknown(f"the resolver {name} is registered by the program when it runs")

    def select(self, args: list, written: str) -> _Got:
        key = args[0].plain
        if not isinstance(key, str):
            raise _Unknown("oc.select takes a key")
        node, path = self.r.select(key, self.base)
        if node is not _ABSENT:
            if isinstance(node, Unknown):
                raise _Unknown(node.why)
            return _Got(node=node, path=path)
        if not self.r.whole:
            raise _Unknown(f"{path} in this file (the configs it is composed with may set it)")
        if len(args) == 1:
            return _Got(value=None)
        default = args[1]
        return default

    def arguments(self) -> list:
        """sequence? BRACE_CLOSE, after a resolver's colon: elements separated by commas (an empty
        one is "": OmegaConf 2.3 still reads it so)."""
        args: list[_Got] = []
        self.skip_ws()
        if self.i < len(self.s) and self.s[self.i] == "}":
            self.i += 1
            return args
        while True:
            self.skip_ws()
            if self.i < len(self.s) and self.s[self.i] in ",}":
                args.append(_Got(value=""))
            else:
                args.append(self.element())
            self.skip_ws()
            if self.i >= len(self.s):
                self.fail("a resolver without its closing brace")
            if self.s[self.i] == ",":
                self.i += 1
                if len(args) > MAX_LENGTH:
                    raise _Unknown("too many arguments")
                continue
            if self.s[self.i] == "}":
                self.i += 1
                return args
            self.fail()

    # element: primitive | quotedValue | listContainer | dictContainer
    def element(self) -> _Got:
        self.skip_ws()
        if self.i >= len(self.s):
            self.fail("a missing value")
        char = self.s[self.i]
        if char in "'\"":
            self.r.nested()
            self.i += 1
            parts = self.text(until=char)
            if self.i >= len(self.s):
                self.fail("an unclosed quote")
            self.i += 1
            self.r.depth -= 1
            got = self.joined(parts)
            return got
        if char == "[":
            return self.container("]")
        if char == "{":
            return self.container("}")
        return self.primitive()

    def container(self, close: str) -> _Got:
        """A list `[a, b]` or a dict `{k: v}` argument: made as a Python value."""
        self.r.nested()
        self.i += 1
        items: list = []
        self.skip_ws()
        while self.i < len(self.s) and self.s[self.i] != close:
            if close == "}":
                key = self.primitive(dict_key=True).plain
                self.skip_ws()
                if self.i >= len(self.s) or self.s[self.i] != ":":
                    self.fail("a dict entry without its colon")
                self.i += 1
                items.append((key, self.element().plain))
            else:
                items.append(self.element().plain)
            self.skip_ws()
            if self.i < len(self.s) and self.s[self.i] == ",":
                self.i += 1
                self.skip_ws()
            elif self.i < len(self.s) and self.s[self.i] != close:
                self.fail()
            if len(items) > MAX_LENGTH:
                raise _Unknown("a container of too many items")
        if self.i >= len(self.s):
            self.fail("an unclosed container")
        self.i += 1
        self.r.depth -= 1
        return _Got(value=dict(items) if close == "}" else items)

    def primitive(self, dict_key: bool = False) -> _Got:
        """Tokens up to a comma or a closing bracket: one token is typed (INT, FLOAT, BOOL, NULL;
        an interpolation keeps its value), several make a string, escapes read."""
        s, start = self.s, self.i
        pieces: list = []  # _Got, or [text, escaped, end offset]
        plain = _KEY_PLAIN if dict_key else _PLAIN_RUN
        while self.i < len(s):
            found = plain.match(s, self.i)
            if found is not None:
                self.i = found.end()
                pieces.append([found.group(0), False, self.i])
                continue
            char = s[self.i]
            if s.startswith(_OPEN, self.i) and not dict_key:
                pieces.append(self.interpolation())
            elif char == "$":
                self.i += 1
                pieces.append([char, False, self.i])
            elif char == "\\":
                follow = s[self.i + 1:self.i + 2]
                escaped = follow != "" and follow in _ESCAPABLE
                self.i += 2 if escaped else 1
                pieces.append([follow if escaped else char, escaped, self.i])
            elif char in ",]}" or (dict_key and char == ":"):
                break
            else:
                self.fail(f"{char!r} is not allowed unquoted")
        # Whitespace before a comma or a closing bracket belongs to it, not to the value.
        while pieces and isinstance(pieces[-1], list) and not pieces[-1][1]:
            last = pieces[-1]
            kept = last[0].rstrip(_WS)
            last[2] -= len(last[0]) - len(kept)
            last[0] = kept
            if kept:
                break
            pieces.pop()
        if not pieces:
            self.fail("a missing value")
        if len(pieces) == 1 and isinstance(pieces[0], _Got):
            return pieces[0]
        if any(isinstance(p, _Got) for p in pieces):
            return self.joined([p if isinstance(p, _Got) else p[0] for p in pieces])
        end = pieces[-1][2]
        raw, text = s[start:end], "".join(p[0] for p in pieces)
        if raw == text:
            for pattern, make in _TYPED:
                if pattern.fullmatch(raw):
                    return _Got(value=make(raw), where=(start, end))
        return _Got(value=text, where=(start, end) if raw == text else None)


_TYPED = (
    (_FLOAT, lambda text: float(text)),
    (_INT_TOKEN, lambda text: int(text)),
    (_BOOL, lambda text: text.lower() == "true"),
    (_NULL, lambda text: None),
)
