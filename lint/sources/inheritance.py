"""mmengine config inheritance, read statically: a Python config with the bases it names.

mmengine builds a config from its bases in one of two ways, chosen for each file by
`Config._is_lazy_import` (mmengine/config/config.py @ v0.10.3 to v0.11): the first of these
that a breadth-first walk of the file meets decides. A `_base_ = ...` assignment: the first
way; a `with read_base():`, a relative import, or an import of anything outside the
standard library (`mmengine.config` aside): the second.

- `_base_ = "./base.py"` or a list of them (`Config._file2dict`): each base is built on its
  own by these same rules; their top-level names (two bases may not share one) make up
  `_base_`, the only name of theirs the file sees (`_base_.lr`). `{{_base_.x}}` is first
  replaced by a placeholder string, which becomes the base's value where it stands as a
  whole value once the file has run. The file's names are then merged into the bases'
  (`_merge_a_into_b`): a dict into a dict key by key, unless it says `_delete_=True`;
  anything else, a list too, replaces. Every base must itself be of this way: a base that
  imports an installed package is refused ("the configuration file type in the
  inheritance chain must match"; `Refusal`).
- `with read_base(): from .base import *` (`Config._parse_lazy_import`): each base module is
  built on its own, and the names imported from it (each a copy) are bound before any
  statement of the file runs; the file's statements then change or replace them as Python
  would. Nothing is merged: a dict assigned again replaces the base's.

Either way a base's values are computed with the base's own names: an
`accumulative_counts *= sequence_parallel_size` in a base used the base's sp, whatever sp
the child sets later.

Every value keeps where it was written: a base's spans carry its path (`Span.path`). Bases
are read only inside the project (lint/project.py), at most MAX_BASE_FILES reads and
MAX_BASE_DEPTH levels deep. A cycle, a base outside the project, missing, unreadable or
past a bound, or a chain mmengine would refuse to load, leaves the config as it reads
alone, with a notice; a chain refused for mixing the two ways also says where (`Refusal`).
"""

from __future__ import annotations

import ast
import os
import re
import sys

from .. import reads
from ..discover import display_path
from ..document import Document, LimitExceeded, Mapping, Node, ParseError, Scalar, Sequence, Span, Unknown
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import field, lean_dataclass
from ..limits import MAX_BASE_DEPTH, MAX_BASE_FILES
from ..project import ProjectView
from . import format_of, read
from .python import Scope, _bound_sizes, _Evaluator, parse_python, read_python

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, TypeGuard, overload
else:
    from ..annotations import overload

BASE_KEY = "_base_"
DELETE_KEY = "_delete_"
DEPRECATION_KEY = "_deprecation_"  # popped from each file's names before merging
# mmengine's own pattern (Config._pre_substitute_base_vars).
_PLACEHOLDER = LazyPattern(r"\{\{\s*" + BASE_KEY + r"\.([\w\.]+)\s*\}\}")


@lean_dataclass(frozen=True)
class Refusal:
    """A chain whose files are not all read the same way, which mmengine refuses to load: a
    `_base_` file that mmengine reads as a pure-Python config (RuntimeError in `_file2dict`), or
    `_base_ =` in a file read as one (ConfigParsingError in `_get_base_modules`), both "The
    configuration file type in the inheritance chain must match the current configuration file
    type" (mmengine/config/config.py:780, 519 @ v0.8.0, the first release with pure-Python
    configs; 846, 579 @ v0.10.7, the newest)."""

    span: Span  # the `_base_` value (a base's path in it) that is refused; `path` set in a base
    why: str
    related: tuple[tuple[str, Span], ...] = ()  # (message, span): what makes mmengine read a file the other way


@lean_dataclass
class Inherited(Document):
    """A config built with its bases: `root` and `namespace` as mmengine makes them,
    each value with the span of the file that wrote it."""

    bases: tuple = ()  # display paths of the bases read, in the order read
    lazy: bool = False  # `with read_base()`: names inherited, nothing merged
    texts: dict = field(default_factory=dict)  # display path -> text, of each base
    # display path -> each base's names as it built them on its own (its own sp, say)
    base_names: dict = field(default_factory=dict)
    refused: Optional[Refusal] = None  # a chain mmengine refuses: the document is the file alone


def inherit(doc: Document, view: ProjectView) -> Document:
    """`doc` built with the bases it names, read through `view`; `doc` itself when it names none or
    they are not followed."""
    if doc.format != "python" or not _mentions_bases(doc.text):
        return doc
    return read_config(doc.path, doc.text, view, plain=doc)


def read_config(path: str, text: str, view: ProjectView, pinned: Optional[dict] = None,
                plain: Optional[Document] = None) -> Document:
    """The Python config at `path` (shown as it is) built with its bases, each read through `view`, the
    project as the lint reads it (read_python's `pinned` applies to every file of the chain); `plain`:
    the file as it reads alone, when the caller has it. Raises ParseError or LimitExceeded for the file
    itself only."""

    def alone() -> Document:
        return plain if plain is not None else read_python(path, text, pinned)

    if not _mentions_bases(text):
        return alone()
    tree = parse_python(path, text)
    if not _names_bases(tree):
        return alone()
    chain = _Chain(pinned, view)
    try:
        built = chain.build(os.path.abspath(path), path, text, tree)
    except _Refused as exc:
        reads.notice(f"{path}: {exc.why}; the config is checked alone")
        own = alone()
        refusal = Refusal(exc.span or Span.point(1), exc.why, exc.related)
        return Inherited(path=path, format="python", root=own.root, text=text, namespace=own.namespace,
                         unused=own.unused, bases=tuple(chain.texts), texts=chain.texts, refused=refusal)
    except _NotFollowed as exc:
        reads.notice(f"{path}: {exc.why}; the config is checked alone")
        return alone()
    except RecursionError:  # values nested near MAX_DEPTH in every file of a deep chain
        reads.notice(f"{path}: its bases' values nest too deeply to follow; the config is checked alone")
        return alone()
    names = built.names
    _bound_sizes(names)
    root = Mapping(items=dict(names), key_spans=dict(built.spans), span=Span(1, 1, 1, 1))
    return Inherited(path=path, format="python", root=root, text=text, namespace=names, unused=built.unused,
                     bases=tuple(chain.texts), lazy=built.lazy, texts=chain.texts, base_names=chain.names)


def text_at(doc: Document, span: Span) -> Optional[str]:
    """The text of the file `span` is in: the document's own, or a base's it was built with."""
    if span.path is None:
        return doc.text
    return doc.texts.get(span.path) if isinstance(doc, Inherited) else None


class _NotFollowed(Exception):
    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class _Refused(_NotFollowed):
    """A chain mmengine refuses for mixing its two ways (Refusal). Spans are of the file being
    built until the loader of that file marks them with its path (`marked`)."""

    def __init__(self, why: str, span: Optional[Span] = None, related: tuple = ()):
        super().__init__(why)
        self.span = span
        self.related = related

    def marked(self, path: str) -> _Refused:
        related = tuple((message, span.elsewhere(path)) for message, span in self.related)
        return _Refused(self.why, self.span.elsewhere(path) if self.span else None, related)


@lean_dataclass
class _Built:
    names: dict  # top-level name -> Node
    spans: dict  # top-level name -> Span of its assignment
    unused: set  # names no statement reads
    lazy: bool


def _mentions_bases(text: str) -> bool:
    return BASE_KEY in text or "read_base" in text


def _names_bases(tree: ast.Module) -> bool:
    """A top-level `_base_ = ...` or `with read_base():`: the file inherits."""
    return any(_is_base_assignment(stmt) or _read_base_block(stmt) for stmt in tree.body)


def _is_base_assignment(stmt: ast.stmt) -> TypeGuard[ast.Assign]:
    return isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == BASE_KEY


def _read_base_block(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.With):
        return False
    expr = stmt.items[0].context_expr
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "read_base"


class _Chain:
    """One config's chain of bases, read once each time one is named."""

    def __init__(self, pinned: Optional[dict], view: ProjectView):
        self.pinned = pinned
        self.view = view
        self.texts: dict = {}  # display path -> text of each base read
        self.names: dict = {}  # display path -> the base's names, as built
        self.count = 0  # base files read
        self.stack: list = []  # real paths of the files being built, for cycles

    def build(self, path: str, shown: str, text: str, tree: ast.Module, depth: int = 0) -> _Built:
        self.stack.append(os.path.realpath(path))
        try:
            if _is_lazy(tree):
                return self.lazy(path, shown, text, tree, depth)
            return self.merged(path, shown, text, tree, depth)
        finally:
            self.stack.pop()

    # -- `_base_ = [...]` -----------------------------------------------------------------------
    def merged(self, path: str, shown: str, text: str, tree: ast.Module, depth: int) -> _Built:
        """Config._file2dict: the bases' names, then this file's merged into them."""
        names, spans, unused = self.bases(path, _base_files(tree), depth, _base_spans(text, tree))
        bases = Mapping(items=names, key_spans=spans)
        text, placeholders = _placeholders(text)
        own = read_python(shown, text, self.pinned, Scope({BASE_KEY: bases}, {}, _is_base_assignment),
                          tree if not placeholders else None)
        if own.namespace.get(BASE_KEY) is not bases:  # `_base_.hooks.append(...)`, `_base_ = ...` in a block
            raise _NotFollowed(f"it changes `{BASE_KEY}` in a way not followed")
        values = {name: value for name, value in own.namespace.items()
                  if name not in (BASE_KEY, DEPRECATION_KEY) and not name.startswith("__")}
        if placeholders:
            values = {name: _substituted(value, placeholders, bases, 0) for name, value in values.items()}
        items, key_spans = _merge(values, own.root.key_spans, names, spans, 0)
        kept = {name for name in unused if name not in values} | (own.unused - {BASE_KEY})
        return _Built(items, key_spans, kept, lazy=False)

    def bases(self, path: str, files: list, depth: int, where: list) -> tuple:
        """The names of the `_base_` files of the file at `path` (`where`: the span each is written
        at), built each on its own: (names, spans, unused)."""
        names: dict = {}
        spans: dict = {}
        unused: set = set()
        for written, at in zip(files, where):
            if "::" in written:
                raise _NotFollowed(f"base `{written}` is an installed package's config; not read")
            try:
                base = self.load(os.path.join(os.path.dirname(path), written), written, depth, lazy=False)
            except _Refused as exc:
                if exc.span is None:  # the base itself is refused: at the place this file names it
                    exc.span = at
                raise
            shared = names.keys() & base.names.keys()
            if shared:
                raise _NotFollowed(f"its bases both set `{min(shared)}`, which mmengine refuses")
            names.update(base.names)
            spans.update(base.spans)
            unused |= base.unused
        return names, spans, unused

    def data(self, path: str, shown: str, text: str, fmt: str, depth: int) -> _Built:
        """A YAML or JSON base (Config._file2dict loads it, and merges it into its own `_base_`)."""
        if "{{" in text:
            raise _NotFollowed(f"base `{shown}` holds `{{{{...}}}}` placeholders, which are not followed")
        root = read(shown, text, fmt).root
        written = root.items.get(BASE_KEY)
        files = [written] if isinstance(written, Scalar) else written.items if isinstance(written, Sequence) else []
        if written is not None and not all(isinstance(f, Scalar) and isinstance(f.value, str) for f in files):
            raise _NotFollowed(f"`{BASE_KEY}` of base `{shown}` is not a path or a list of paths")
        names, spans, _ = self.bases(path, [f.value for f in files], depth, [f.span for f in files])
        values = {key: value for key, value in root.items.items() if key not in (BASE_KEY, DEPRECATION_KEY)}
        items, key_spans = _merge(values, root.key_spans, names, spans, 0)
        return _Built(items, key_spans, set(), lazy=False)

    # -- `with read_base(): from .base import *` --------------------------------------------------
    def lazy(self, path: str, shown: str, text: str, tree: ast.Module, depth: int) -> _Built:
        """Config._parse_lazy_import: the names imported from the bases, then this file's statements."""
        imports = _base_modules(tree, text)
        modules = {"." * stmt.level + (stmt.module or "") for stmt in imports}
        # An import from a base module anywhere at the top level binds the base's names too.
        imports += [stmt for stmt in tree.body if isinstance(stmt, ast.ImportFrom) and stmt not in imports
                    and "." * stmt.level + (stmt.module or "") in modules]
        seeds: dict = {}
        spans: dict = {}
        base_unused: set = set()
        loaded: dict = {}  # module -> its names: each base module is built once
        for stmt in imports:
            module = "." * stmt.level + (stmt.module or "")
            if not stmt.level:
                raise _NotFollowed(f"base `{module}` is an installed package's config; not read")
            base = loaded.get(module)
            if base is None:
                where = os.path.join(os.path.dirname(path), *([".."] * (stmt.level - 1)),
                                     stmt.module.replace(".", "/") + ".py")
                try:
                    base = loaded[module] = self.load(where, module, depth, lazy=True)
                except _Refused as exc:
                    exc.related += (("imported here with `with read_base()`: mmengine reads the base as "
                                     "a pure-Python config too", _node_span(text, stmt)),)
                    raise
            for alias in stmt.names:
                if alias.name == "*":
                    seeds.update(base.names)
                    spans.update(base.spans)
                    base_unused |= base.unused
                    break
                if alias.name not in base.names:
                    raise _NotFollowed(f"base `{module}` has no `{alias.name}`")
                name = alias.asname or alias.name
                seeds[name] = base.names[alias.name]
                spans[name] = base.spans.get(alias.name, base.names[alias.name].span)
                if alias.name in base.unused:
                    base_unused.add(name)
        skipped = set(map(id, imports)) | {id(stmt) for stmt in tree.body if _read_base_block(stmt)}
        own = read_python(shown, text, self.pinned, Scope(seeds, spans, lambda stmt: id(stmt) in skipped), tree)
        names = {name: value for name, value in own.namespace.items() if not name.startswith("__")}
        key_spans = own.root.key_spans
        # A base's name is unused here when its base did not read it either and this file does not.
        unused = {name for name in own.unused if key_spans[name].path is None or name in base_unused}
        return _Built(names, key_spans, unused, lazy=True)

    # -- reading a base -------------------------------------------------------------------------
    def load(self, path: str, written: str, depth: int, lazy: bool) -> _Built:
        """The base at `path` (`written` as the file names it), built on its own, its values
        copied and marked as written there."""
        path = os.path.normpath(path)
        if depth + 1 > MAX_BASE_DEPTH:
            raise _NotFollowed(f"its bases nest more than {MAX_BASE_DEPTH} deep")
        if self.count >= MAX_BASE_FILES:
            raise _NotFollowed(f"it names more than {MAX_BASE_FILES} base files")
        if os.path.realpath(path) in self.stack:
            raise _NotFollowed(f"base `{written}` inherits from itself (a cycle)")
        if not self.view.may_read(path):  # asked first: whether a file outside exists is not ours to say
            raise _NotFollowed(f"base `{written}` resolves outside the project; not read "
                               "(widen it with `reference-paths` in the project config)")
        if not self.view.is_file(path):
            reads.record(path)  # missing: creating it changes the result
            raise _NotFollowed(f"base `{written}` is not found")
        self.count += 1
        try:
            text = self.view.read_bytes(path).decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise _NotFollowed(f"base `{written}` cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
        shown = display_path(path)
        self.texts[shown] = text
        fmt = format_of(path)
        if fmt not in ("python", "yaml", "json") or (lazy and fmt != "python"):
            raise _NotFollowed(f"base `{written}` is not a Python, YAML or JSON config")
        try:
            if fmt != "python":
                built = self.data(path, shown, text, fmt, depth + 1)
                self.names[shown] = built.names
                return _exported(built, shown)
            tree = parse_python(shown, text)
            marker = None if lazy else _is_lazy(tree)
            if lazy:  # _parse_lazy_import reads a base whatever its form
                self.stack.append(os.path.realpath(path))
                try:
                    built = self.lazy(path, shown, text, tree, depth + 1)
                finally:
                    self.stack.pop()
            elif marker:
                raise _Refused(f"base `{written}` is a pure-Python config ({_lazy_reason(marker)}), which mmengine "
                               f"refuses under `{BASE_KEY}`: the configuration file type in the inheritance chain "
                               "must match", None,
                               ((f"{_lazy_reason(marker)}: mmengine reads {shown} as a pure-Python config",
                                 _node_span(text, marker).elsewhere(shown)),))
            else:
                built = self.build(path, shown, text, tree, depth + 1)
        except _Refused as exc:  # a place in this base's text: marked as in it
            raise exc.marked(shown) if exc.span is not None else exc from None
        except (ParseError, LimitExceeded) as exc:
            raise _NotFollowed(f"base `{written}` is not read: line {exc.line}: {exc.message}") from None
        self.names[shown] = built.names
        return _exported(built, shown)


# -- mmengine's rules, one function each ---------------------------------------------------------

def _is_builtin(module: str) -> bool:
    """mmengine's _is_builtin_module: the standard library, and mmengine.config."""
    if module.startswith("."):
        return False
    return module.startswith("mmengine.config") or module.split(".", 1)[0] in sys.stdlib_module_names


def _is_lazy(tree: ast.Module) -> Optional[ast.stmt]:
    """Config._is_lazy_import: whether mmengine reads the file as a pure-Python config; the
    statement that decides it when it does, else None."""
    for node in ast.walk(tree):  # breadth first, as mmengine walks it
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == BASE_KEY:
            return None
        if isinstance(node, ast.With):
            if not _read_base_block(node):
                raise _NotFollowed("mmengine loads no config with a `with` block other than `with read_base():`")
            return node
        if isinstance(node, ast.ImportFrom):
            if node.level:
                return node
            if node.module == "mmengine" and len(node.names) == 1 and node.names[0].name == "Config":
                continue
            if node.module is not None and not _is_builtin(node.module):
                return node
        if isinstance(node, ast.Import) and any(not _is_builtin(alias.name) for alias in node.names):
            return node
    return None


def _lazy_reason(node: ast.stmt) -> str:
    """What the statement _is_lazy found does, as a message says it."""
    if isinstance(node, ast.With):
        return f"line {node.lineno} uses `with read_base()`"
    if isinstance(node, ast.ImportFrom):
        module = "." * node.level + (node.module or "")
        return f"line {node.lineno} imports from `{module}`" + ("" if node.level else ", an installed package")
    name = next(alias.name for alias in node.names if not _is_builtin(alias.name))  # type: ignore[attr-defined]
    return f"line {node.lineno} imports `{name}`, an installed package"


def _node_span(text: str, node: ast.AST) -> Span:
    """Where `node` is in `text`, columns in characters (as the Python reader gives them)."""
    return _Evaluator(text).span(node)  # type: ignore[arg-type]


def _base_files(tree: ast.Module) -> list:
    """Config._get_base_files: the first top-level `_base_ = ...`, a string or a list of them."""
    found = next((stmt for stmt in tree.body if _is_base_assignment(stmt)), None)
    if found is None:
        return []
    try:
        value = ast.literal_eval(found.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _NotFollowed(f"`{BASE_KEY}` (line {found.lineno}) is not a literal path or list of paths") from None
    files = value if isinstance(value, list) else [value]
    if not all(isinstance(name, str) for name in files):
        raise _NotFollowed(f"`{BASE_KEY}` (line {found.lineno}) is not a path or a list of paths")
    if len(files) > MAX_BASE_FILES:
        raise _NotFollowed(f"it names more than {MAX_BASE_FILES} base files")
    return files


def _base_spans(text: str, tree: ast.Module) -> list:
    """Where each file of the first top-level `_base_ = ...` is written (_base_files' order): each
    string of a list, else the whole value."""
    found = next((stmt for stmt in tree.body if _is_base_assignment(stmt)), None)
    if found is None:
        return []
    value = found.value
    if isinstance(value, (ast.List, ast.Tuple)):
        return [_node_span(text, element) for element in value.elts]
    return [_node_span(text, value)]


def _base_modules(tree: ast.Module, text: str) -> list:
    """Config._get_base_modules: the imports of the first top-level `with read_base():`."""
    for node in tree.body:
        if _is_base_assignment(node):
            marker = _is_lazy(tree)
            related = ((f"{_lazy_reason(marker)}: mmengine reads this file as a pure-Python config",
                        _node_span(text, marker)),) if marker is not None else ()
            raise _Refused(f"mmengine reads this file as a pure-Python config, where line {node.lineno}'s "
                           f"`{BASE_KEY} =` is refused: the configuration file type in the inheritance chain "
                           "must match", _node_span(text, node), related)
        if not isinstance(node, ast.With):
            continue
        if not _read_base_block(node) or len(node.items) > 1:
            raise _NotFollowed("mmengine loads no config with a `with` block other than `with read_base():`")
        if not all(isinstance(stmt, ast.ImportFrom) and stmt.module is not None for stmt in node.body):
            raise _NotFollowed(f"`with read_base():` (line {node.lineno}) holds more than `from ... import ...`")
        return list(node.body)
    return []


def _placeholders(text: str) -> tuple:
    """The text with each `{{_base_.x}}` replaced by a string literal of the same length
    (positions stay), and placeholder -> "x"; mmengine substitutes the same way."""
    found: dict = {}

    def replace(match: re.Match) -> str:
        written = match.group()
        holder = f"~{BASE_KEY}{len(found)}".ljust(len(written) - 2, "~")
        if "\n" in written or "\r" in written or len(holder) + 2 != len(written):
            return written  # positions would move: left as written
        found[holder] = match.group(1)
        return f'"{holder}"'

    return _PLACEHOLDER.sub(replace, text), found


def _substituted(node: Node, placeholders: dict, bases: Mapping, depth: int) -> Node:
    """Config._substitute_base_vars: a placeholder that is a whole value becomes the base's value."""
    if type(node) is Scalar and isinstance(node.value, str) and node.value in placeholders:
        value: Node = bases
        for key in placeholders[node.value].split("."):
            if not isinstance(value, Mapping) or key not in value.items:
                raise _NotFollowed(f"`{{{{{BASE_KEY}.{placeholders[node.value]}}}}}` names no value of its bases")
            value = value.items[key]
        return value
    if depth > 200 or not isinstance(node, (Mapping, Sequence)):
        return node
    if type(node) is Mapping:
        items = {key: _substituted(value, placeholders, bases, depth + 1) for key, value in node.items.items()}
        return Mapping(items=items, key_spans=dict(node.key_spans), span=node.span, deps=node.deps, origin=node.origin)
    members = [_substituted(value, placeholders, bases, depth + 1) for value in node.items]
    return Sequence(items=members, span=node.span, deps=node.deps, origin=node.origin)


def _merge(a: dict, a_spans: dict, b: dict, b_spans: dict, depth: int) -> tuple:
    """Config._merge_a_into_b: `a`'s items over `b`'s, a dict into a dict key by key unless
    it says `_delete_=True`; (items, key spans), neither input changed."""
    items, spans = dict(b), dict(b_spans)
    for key, value in a.items():
        if type(value) is Mapping and key in items:
            deleted = _truth(value.items.get(DELETE_KEY))
            own = {k: v for k, v in value.items.items() if k != DELETE_KEY}
            own_spans = {k: s for k, s in value.key_spans.items() if k != DELETE_KEY}
            base = items[key]
            if deleted is None or (not deleted and type(base) is Unknown):
                why = f"merged into its base's `{key}` in a way not known"
                value = Unknown(value.span, why, value.deps, value.origin)
            elif deleted:
                value = Mapping(items=own, key_spans=own_spans, span=value.span, deps=value.deps, origin=value.origin)
            elif type(base) is not Mapping:
                raise _NotFollowed(f"`{key}` is a dict here but not in its base, which mmengine refuses to merge "
                                   f"(`{DELETE_KEY}=True` replaces it)")
            elif depth >= 200:
                value = Unknown(value.span, "dicts merged too deeply", value.deps, value.origin)
            else:
                merged, merged_spans = _merge(own, own_spans, base.items, base.key_spans, depth + 1)
                value = Mapping(items=merged, key_spans=merged_spans, span=value.span, deps=value.deps,
                                origin=value.origin)
        items[key] = value
        if key in a_spans:
            spans[key] = a_spans[key]
    return items, spans


def _truth(node: Optional[Node]) -> Optional[bool]:
    if node is None:
        return False
    return bool(node.value) if type(node) is Scalar else None


def _exported(built: _Built, path: str) -> _Built:
    """A base's names as its loader hands them on: each top-level value a copy of its own
    (mmengine makes each a new ConfigDict), every span marked as written in `path`."""
    names = {name: _copy(value, path, {}) for name, value in built.names.items()}
    spans = {name: span.elsewhere(path) for name, span in built.spans.items()}
    return _Built(names, spans, built.unused, built.lazy)


@overload
def marked(node: Mapping, path: str) -> Mapping: ...  # a copy of a node is a node of its kind
@overload
def marked(node: Node, path: str) -> Node: ...
def marked(node: Node, path: str) -> Node:
    """A copy of `node` with every span marked as written in the file at `path` (a config another
    is built from: lint/sources/hydra.py too)."""
    return _copy(node, path, {})


def _copy(node: Node, path: str, memo: dict) -> Node:
    found = memo.get(id(node))
    if found is not None:
        return found
    # Exact kinds (a Scalar subclass such as omegaconf.Interpolated is not copied as a Scalar).
    if type(node) is Scalar:
        copied: Node = Scalar(node.value, node.span.elsewhere(path), node.deps, node.origin, node.quoted)
    elif type(node) is Mapping:
        copied = Mapping(span=node.span.elsewhere(path), deps=node.deps, origin=node.origin)
        memo[id(node)] = copied  # before the items: a mapping may hold itself
        copied.items = {key: _copy(value, path, memo) for key, value in node.items.items()}
        copied.key_spans = {key: span.elsewhere(path) for key, span in node.key_spans.items()}
        copied.duplicates = [(key, span.elsewhere(path)) for key, span in node.duplicates]
    elif type(node) is Sequence:
        copied = Sequence(span=node.span.elsewhere(path), deps=node.deps, origin=node.origin)
        memo[id(node)] = copied
        copied.items = [_copy(value, path, memo) for value in node.items]
    else:
        copied = Unknown(node.span.elsewhere(path), getattr(node, "why", ""), node.deps, node.origin)
    memo[id(node)] = copied
    return copied
