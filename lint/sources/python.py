"""Read a Python config by evaluating its top-level statements statically.

The file is parsed with `ast` and never executed: only literals, names,
arithmetic, comparisons, conditional expressions, `dict(...)`/`{...}`,
lists/tuples, a few pure builtins and imports (resolved to qualified names)
are understood, and so are `cfg["k"] = v`, `cfg.k = v` and `cfg.update(...)` on a
known dict. Anything else - a call, a loop, a function - makes the values
it touches `Unknown`. Each value records the top-level names it was computed
from, so `accumulative_counts *= sequence_parallel_size` leaves a trace.

Every cost is bounded before it is paid (lint/limits.py): the source's size in
tokens before `ast.parse`, each operation's result before it is computed, the
evaluation's steps as it goes, and each top-level value's size once shared
parts are counted at every use.

Lines end at "\r\n", "\r" or "\n", as Python's tokenizer has it (not at "\f",
"\x1c", "\u2028"... which str.splitlines() would take); columns count characters.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import math
import operator
import re
import warnings
from collections.abc import Callable

from ..document import (
    Document,
    LimitExceeded,
    Mapping,
    Node,
    ParseError,
    Scalar,
    Sequence,
    Span,
    Symbol,
    Unknown,
    line_starts,
    split_lines,
    without_surrogates,
)
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass
from ..limits import (
    MAX_DEPS,
    MAX_DEPTH,
    MAX_EVAL_STEPS,
    MAX_FSTRING_FIELDS,
    MAX_LENGTH,
    MAX_NODES,
    MAX_NUMBER_DIGITS,
    MAX_PYTHON_TOKENS,
)
from . import _INT_LIMIT, long_int

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Union

_new_span = tuple.__new__
_NON_ASCII = LazyPattern(r"[^\x00-\x7f]")
_MARK_NON_ASCII = bytes(range(128)) + b"\x80" * 128  # bytes.translate table: ASCII kept, the rest 0x80
# An estimate of Python's tokens: a string or a comment counts as one.
# Unrolled loops (`[^"]*(?:\\.[^"]*)*`): the regex engine keeps no state per character of a long string.
_STRING = (r'''(?:"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""|\'\'\'[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*\'\'\''''
           r'''|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*')''')
_TOKEN = LazyPattern(rf"[rRbBuUfF]{{0,2}}{_STRING}|#[^\n]*|\w+|[^\w\s]", re.S)
_FSTRING = LazyPattern(rf"(?<![\w])(?:[rR][fF]|[fF][rR]?){_STRING}", re.S)
# An f-string field costs Python's parser about three tokens' time.
_FIELD_TOKENS = 3
# A result this many bits long may have more than MAX_NUMBER_DIGITS digits: not computed.
_INT_BITS = math.ceil(MAX_NUMBER_DIGITS * math.log2(10))

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_PURE_BUILTINS: dict[str, Callable[..., Any]] = {
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "len": len,
}
_BUILTIN_NAMES = set(_PURE_BUILTINS) | {"dict", "list", "tuple", "set", "print", "range", "getattr", "open"}
# Symbols are immutable: one per builtin serves every use.
_BUILTIN_SYMBOLS = {name: Symbol("builtins." + name) for name in _BUILTIN_NAMES}
_NUMBER = (int, float)
_NAME, _CONSTANT = ast.Name, ast.Constant
_CONTAINERS = frozenset((Mapping, Sequence))  # the values _size walks into
# Constants kept as they are written (expr_Constant); a string or an integer may need a look first.
_PLAIN_CONSTANTS = frozenset((bool, float, type(None)))


@lean_dataclass(frozen=True)
class Scope:
    """What a config's evaluation starts from besides its own statements: the names
    a loader binds before the first statement runs (the bases' of an mmengine config,
    lint/sources/inheritance.py), where each was written, and the top-level
    statements the loader removes before running the file."""

    names: dict  # name -> Node
    spans: dict  # name -> Span of its assignment
    skip: Callable[[ast.stmt], bool]


def read_python(path: str, text: str, pinned: Optional[dict] = None, scope: Optional[Scope] = None,
                tree: Optional[ast.Module] = None) -> Document:
    """`pinned` (name -> number) makes every read of a top-level name that the
    file defines give that number instead: the config evaluated as if it set
    that value (`sequence_parallel_size` at 1, to ask what a derivation gives there).
    `tree`: the file's parse_python, when the caller has it already."""
    tree = tree or parse_python(path, text)
    evaluator = _Evaluator(text, pinned)
    body = tree.body
    if scope is not None:
        evaluator.names.update(scope.names)
        evaluator.assigned_at.update(scope.spans)
        body = [stmt for stmt in body if not scope.skip(stmt)]
    evaluator.run(body)
    names = evaluator.names
    _bound_sizes(names, evaluator.sizes)
    root = Mapping(items=dict(names), key_spans=dict(evaluator.assigned_at), span=Span(1, 1, 1, 1))
    unused = {name for name in evaluator.assigned_at if name not in evaluator.reads}
    return Document(path=path, format="python", root=root, text=text, namespace=names, unused=unused)


def parse_python(path: str, text: str) -> ast.Module:
    """The syntax tree of a Python config, its size checked first; raises ParseError or LimitExceeded."""
    _check_size(text)
    try:
        with warnings.catch_warnings():  # `1if x else 2`, `"\d"`: the config's business, not a report's
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise ParseError(f"Python syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1) from None
    except ValueError as exc:  # a NUL byte (before Python 3.12)
        raise ParseError(f"Python source cannot be parsed: {exc}") from None
    except (RecursionError, MemoryError):  # the parser's own stack: nested too deeply
        raise LimitExceeded("Python source is nested too deeply for Python's parser") from None


def _position(text: str, offset: int) -> tuple:
    starts = line_starts(text, "python")
    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


def _check_size(text: str) -> None:
    """Refuse, before `ast.parse` spends seconds and gigabytes on it, source
    of more than MAX_PYTHON_TOKENS tokens or with an f-string of more than
    MAX_FSTRING_FIELDS fields (their parse is quadratic before Python 3.12)."""
    tokens = text.count("\n")  # each line ends with a NEWLINE token
    if text.count("{") > MAX_FSTRING_FIELDS // 4:  # only then can f-string fields matter
        for fstring in _FSTRING.finditer(text):
            fields = fstring.group().count("{")
            if fields > MAX_FSTRING_FIELDS:
                raise LimitExceeded(f"Python f-string with more than {MAX_FSTRING_FIELDS:,} fields",
                                    *_position(text, fstring.start()))
            tokens += _FIELD_TOKENS * fields
    # Every token spans at least one character: a short text cannot pass the bound,
    # and needs no tokenizing (which costs a third of ast.parse).
    if tokens + len(text) <= MAX_PYTHON_TOKENS:
        return
    tokens += len(_TOKEN.findall(text))
    if tokens > MAX_PYTHON_TOKENS:
        # Where the bound was passed, roughly: line breaks are not in the regex.
        past = next(itertools.islice(_TOKEN.finditer(text), MAX_PYTHON_TOKENS, None), None)
        where = _position(text, past.start()) if past else (1, 1)
        raise LimitExceeded(f"Python source has too many tokens (more than {MAX_PYTHON_TOKENS:,})", *where)


def _bound_sizes(names: dict, sizes: Optional[dict] = None) -> None:
    """A value built by sharing (`x = [x, x]` forty times) is small here but
    huge to whatever walks it: count each top-level value with its shared parts
    counted at every use, and make the values past MAX_NODES together, or
    nested past MAX_DEPTH, Unknown. `sizes`: the evaluator's, of the containers
    it measured as it built them (_Evaluator.built); the walk stops at those."""
    sizes = {} if sizes is None else sizes
    left = MAX_NODES
    for name, value in names.items():
        if not isinstance(value, (Mapping, Sequence)):
            continue
        found = sizes.get(id(value))  # most are measured already
        size, depth = found[:2] if found is not None else _size(value, sizes)
        if depth > MAX_DEPTH:
            names[name] = Unknown(value.span, f"a value nested more than {MAX_DEPTH} levels deep", value.deps, name)
        elif size > left:
            why = f"past {MAX_NODES:,} values in the file, a shared part counted at each use"
            names[name] = Unknown(value.span, why, value.deps, name)
        else:
            left -= size


def _size(top: Union[Mapping, Sequence], sizes: dict) -> tuple:
    """(nodes, depth) of a value, each shared part counted at every use; a part
    that holds itself counts once. Iterative: a value may nest thousands deep.
    `sizes`: id -> (nodes, depth, ...) of the parts counted already."""
    # (node, its collections once visited, its other items)
    stack: list[tuple[Union[Mapping, Sequence], Optional[list], int]] = [(top, None, 0)]
    while stack:
        node, parts, leaves = stack.pop()
        if parts is not None:
            total, depth = 1 + leaves, 0
            for child in parts:
                # A part on the path (None: a cycle) counts as one node.
                found = sizes.get(id(child))
                if found is None:
                    total += 1
                else:
                    total += found[0]
                    if found[1] > depth:
                        depth = found[1]
            sizes[id(node)] = (total, depth + 1)
            continue
        key = id(node)
        if key in sizes:
            continue
        sizes[key] = None  # on the path: a cycle back to it counts as one node
        children = node.items.values() if type(node) is Mapping else node.items
        parts = [child for child in children if type(child) is Mapping or type(child) is Sequence]
        stack.append((node, parts, len(children) - len(parts)))  # a scalar counts as one node
        stack.extend((child, None, 0) for child in parts if id(child) not in sizes)
    return sizes[id(top)][:2]


def walked(node: ast.AST) -> list:
    """`list(ast.walk(node))`, in its order (breadth first, children in field order), without its three
    layers of generators: a statement not evaluated (a function, a class of a program) is walked whole,
    and ast.walk took 2.5 times as long."""
    nodes = [node]
    append = nodes.append
    for current in nodes:  # the list grows as it is gone through: each node's children follow the rest
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, ast.AST):
                append(value)
            elif type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        append(item)
    return nodes


class _Evaluator:
    def __init__(self, text: str, pinned: Optional[dict] = None):
        # Line number -> text of each line where UTF-8 bytes and characters differ;
        # elsewhere ast's byte columns are already character columns.
        self.wide_lines: dict[int, str] = {} if text.isascii() else _wide_lines(text)
        self.wide_columns: dict = {}  # line -> (byte offsets of its non-ASCII characters, extra bytes up to each)
        self.first_wide, self.last_wide = (min(self.wide_lines), max(self.wide_lines)) if self.wide_lines else (0, -1)
        self.steps = MAX_EVAL_STEPS
        self.line = 1  # of the statement being evaluated
        self.names: dict[str, Node] = {}
        self.assigned_at: dict[str, Span] = {}  # top-level name -> span of its target
        self.reads: set[str] = set()
        self.depth = 0  # of the expression being evaluated
        # Deps of the undecidable `if` tests around the running statement; None outside them.
        self.condition: Optional[frozenset] = None
        self.pinned: dict = pinned or {}
        # id -> (nodes, depth, container) of each container measured as it was built (`built`), so
        # that _bound_sizes need not walk every value again. Valid while no container changes in
        # place: `changed` forgets them all.
        self.sizes: dict = {}

    # -- sizes -----------------------------------------------------------
    def built(self, container: Node, children) -> None:
        """Record a container just built, counted as _size counts it, when each container in
        it is recorded too (one built before the last `changed` is not: the walk counts it)."""
        sizes = self.sizes
        total, depth = 1 + len(children), 0  # each child one node; a container's own count below
        for child in children:
            if type(child) in _CONTAINERS:
                found = sizes.get(id(child))
                if found is None:
                    return
                total += found[0] - 1
                if found[1] > depth:
                    depth = found[1]
        # The container itself is kept with its size: while it lives, no other object takes its id.
        sizes[id(container)] = (total, depth + 1, container)

    def changed(self) -> None:
        """A container changed in place: any size recorded may hold it, none is kept."""
        self.sizes.clear()

    # -- positions -------------------------------------------------------
    def _column(self, line: int, byte_offset: int) -> int:
        """ast columns count UTF-8 bytes; users count characters. Each wide line
        is measured once, so that a long one costs no more per value than a short one."""
        found = self.wide_columns.get(line)
        if found is None:
            text = self.wide_lines.get(line, "")
            found = self.wide_columns[line] = _wide_characters(text)
        starts, extras = found
        before = bisect.bisect_left(starts, byte_offset)  # non-ASCII characters before the offset
        return byte_offset - (extras[before - 1] if before else 0) + 1

    def charge(self, steps: int) -> None:
        """Spend evaluation steps; the whole file is past its bound when they run out."""
        self.steps -= steps
        if self.steps < 0:
            raise LimitExceeded(f"Python config needs more than {MAX_EVAL_STEPS:,} evaluation steps", self.line)

    def walk(self, node: ast.AST) -> list:
        """Every node below `node`, each one paid for."""
        nodes = walked(node)
        self.charge(len(nodes))
        return nodes

    def span(self, node: Union[ast.expr, ast.stmt, ast.keyword]) -> Span:
        line = node.lineno
        end_line = node.end_lineno or line
        # Outside the wide lines' range (all lines, in most files): no look in wide_lines.
        if line <= self.last_wide and end_line >= self.first_wide and (
                line in self.wide_lines or end_line in self.wide_lines):
            wide = self.wide_lines
            column, end_column = node.col_offset + 1, (node.end_col_offset or 0) + 1
            if line in wide:
                column = self._column(line, column - 1)
            if end_line in wide:
                end_column = self._column(end_line, end_column - 1)
            return _new_span(Span, (line, column, end_line, end_column, None))
        # tuple.__new__ directly: the NamedTuple constructor is a Python-level call per value.
        return _new_span(Span, (line, node.col_offset + 1, end_line, (node.end_col_offset or 0) + 1, None))

    # -- statements ------------------------------------------------------
    def run(self, body: list) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        self.line = stmt.lineno
        self.steps -= 1  # self.charge(1), inlined
        if self.steps < 0:
            self.charge(0)
        if type(stmt) is ast.Assign:  # most statements of a config: tested first
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value, stmt)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.bind(alias.asname, Scalar(Symbol(alias.name), self.span(stmt)), stmt, declare=False)
                else:
                    top = alias.name.split(".", 1)[0]
                    self.bind(top, Scalar(Symbol(top), self.span(stmt)), stmt, declare=False)
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            span = self.span(stmt)  # one for every name the statement imports: spans are immutable
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                # `from . import x` is `.x`, not `..x`: no dot after the leading dots alone.
                qualname = f"{module}.{alias.name}" if stmt.module else module + alias.name
                self.bind(alias.asname or alias.name, Scalar(_symbol(qualname), span), stmt, declare=False)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value), stmt)
        elif isinstance(stmt, ast.AugAssign):
            self.augmented(stmt)
        elif isinstance(stmt, ast.If):
            self.branch(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.note_reads(stmt)
            self.bind(stmt.name, Scalar(Symbol(stmt.name), self.span(stmt)), stmt, declare=False)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.names.pop(target.id, None)
                elif isinstance(target, (ast.Subscript, ast.Attribute)):
                    self.delete_from(target, stmt)
        elif isinstance(stmt, ast.Expr):
            self.note_reads(stmt)
            self.expression_statement(stmt)
        else:
            # Loops, with, try, match...: whatever they assign is not known.
            self.note_reads(stmt)
            self.forget_assigned(stmt)

    def note_reads(self, stmt: ast.stmt) -> None:
        """A name that a statement not evaluated mentions is still used (`print(sampler)`)."""
        for node in self.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reads.add(node.id)

    def bind(self, name: str, value: Node, stmt: ast.stmt, declare: bool = True) -> None:
        self.names[name] = value
        if declare:
            self.assigned_at[name] = self.span(stmt)

    def assign(self, target: ast.expr, value: Node, stmt: ast.stmt) -> None:
        if type(target) is ast.Name:  # most assignments: `bind` inlined
            name = target.id
            if type(value) is Scalar:
                value = Scalar(value.value, value.span, value.deps, name, value.quoted)
            elif type(value) is Unknown:
                value = Unknown(value.span, value.why, value.deps, name)
            elif value.origin is None:
                value.origin = name
            self.names[name] = value
            self.assigned_at[name] = self.span(stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = value.items if isinstance(value, Sequence) else None
            if parts is not None and len(parts) == len(target.elts) and not any(
                isinstance(t, ast.Starred) for t in target.elts
            ):
                for sub_target, part in zip(target.elts, parts):
                    self.assign(sub_target, part, stmt)
            else:
                for sub_target in target.elts:
                    self.assign(sub_target, Unknown(self.span(stmt), "unpacking"), stmt)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.assign_into(target, value, stmt)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, Unknown(self.span(stmt), "starred assignment"), stmt)

    def assign_into(self, target: Union[ast.Subscript, ast.Attribute], value: Node, stmt: ast.stmt) -> None:
        """`cfg['key'] = v` and `cfg.key = v` update a known mapping in place."""
        container, key = self.item_of(target)
        if isinstance(container, Mapping) and isinstance(key, str):
            if self.condition is not None:
                # The mapping is shared with the other branch: the key may or may not have changed.
                before = container.items.get(key)
                deps = _joined(value.deps, self.condition, before.deps if before else frozenset())
                value = Unknown(self.span(stmt), "assigned under a condition that cannot be evaluated", deps)
            container.items[key] = value
            container.key_spans[key] = self.span(target)
            self.changed()
        else:
            self.forget_base(target, stmt, "modified in a way not followed")

    def delete_from(self, target: Union[ast.Subscript, ast.Attribute], stmt: ast.stmt) -> None:
        """`del cfg['key']` removes a key that is known to go; anything else is not followed."""
        container, key = self.item_of(target)
        if isinstance(container, Mapping) and isinstance(key, str) and self.condition is None:
            container.items.pop(key, None)
            container.key_spans.pop(key, None)
            self.changed()
        else:
            self.assign_into(target, Unknown(self.span(stmt), "deleted in a way not followed"), stmt)

    def item_of(self, target: Union[ast.Subscript, ast.Attribute]) -> tuple:
        """The container and key that `cfg['key']` or `cfg.key` names (None when not known)."""
        container = self.expr(target.value)
        if isinstance(target, ast.Attribute):
            return container, target.attr
        key_node = self.expr(target.slice)
        return container, key_node.value if isinstance(key_node, Scalar) else None

    def forget_base(self, target: ast.expr, stmt: ast.stmt, why: str) -> None:
        """`cfg.model[k] = v` with k unknown: all of `cfg` becomes unknown."""
        base = target
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.names:
            self.names[base.id] = Unknown(self.span(stmt), why)

    def augmented(self, stmt: ast.AugAssign) -> None:
        if not isinstance(stmt.target, ast.Name):
            self.assign_into(stmt.target, Unknown(self.span(stmt), "augmented item"), stmt)
            return
        name = stmt.target.id
        current = self.name(name, stmt.target)
        operand = self.expr(stmt.value)
        result = self.binop(type(stmt.op), current, operand, self.span(stmt))
        result.origin = name
        self.names[name] = result
        self.assigned_at.setdefault(name, self.span(stmt))

    def branch(self, stmt: ast.If) -> None:
        test = self.expr(stmt.test)
        truth = _truth(test)
        if truth is True:
            self.run(stmt.body)
            return
        if truth is False:
            self.run(stmt.orelse)
            return
        # Only names a branch mentions can change: copying all of them per `if` would be quadratic.
        # Sorted: a set's order changes with the hash seed, and the names are put back in this order.
        touched = sorted(self.touched(stmt.body + stmt.orelse))
        before, outer = {name: self.names.get(name) for name in touched}, self.condition
        self.condition = _joined(outer or frozenset(), test.deps)
        self.run(stmt.body)
        after_body = {name: self.names.get(name) for name in touched}
        for name, value in before.items():
            if value is None:
                self.names.pop(name, None)
            else:
                self.names[name] = value
        self.run(stmt.orelse)
        self.condition = outer
        for name in touched:
            a, b = after_body[name], self.names.get(name)
            if a is not None and a is b:
                continue
            if a is None and b is None:
                self.names.pop(name, None)
                continue
            deps = _joined(a.deps if a else frozenset(), b.deps if b else frozenset(), test.deps)
            self.names[name] = Unknown(self.span(stmt), "assigned under a condition that cannot be evaluated", deps)

    def touched(self, body: list) -> set:
        """The top-level names statements could bind, rebind or delete."""
        found = set()
        for stmt in body:
            for node in self.walk(stmt):
                if isinstance(node, ast.Name):
                    found.add(node.id)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.add(node.name)
                elif isinstance(node, ast.alias):
                    found.add(node.asname or node.name.split(".", 1)[0])
        return found

    def expression_statement(self, stmt: ast.Expr) -> None:
        """`cfg.update(...)` on a known mapping is followed; `hooks.append(x)` and the like change
        a value in ways not followed."""
        call = stmt.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"
                and self.update_mapping(call.func, call)):
            return
        self.forget_called(call, stmt)

    def update_mapping(self, method: ast.Attribute, call: ast.Call) -> bool:
        """`cfg.update(key=v)`, `cfg.update({"key": v})`, `cfg.update(dict(key=v))` on a known mapping,
        in place; False (nothing changed) when the target or an argument is not known, or the call
        runs under a condition that cannot be evaluated."""
        keywords = call.keywords
        if self.condition is not None or len(call.args) > 1 or any(k.arg is None for k in keywords) or any(
                isinstance(arg, ast.Starred) for arg in call.args):
            return False
        target = self.expr(method.value)
        if type(target) is not Mapping:
            return False
        pairs = []
        if call.args:
            other = self.expr(call.args[0])
            if type(other) is not Mapping:
                return False
            pairs = [(key, value, other.key_spans.get(key, other.span)) for key, value in other.items.items()]
        pairs += [(keyword.arg, self.expr(keyword.value), self.span(keyword)) for keyword in keywords]
        self.charge(len(pairs))
        _update(target, pairs, 0)
        self.changed()
        return True

    def forget_called(self, call: ast.AST, stmt: ast.stmt) -> None:
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            base = call.func.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and isinstance(self.names.get(base.id), (Mapping, Sequence)):
                self.names[base.id] = Unknown(self.span(stmt), f"changed by {call.func.attr}()")

    def forget_assigned(self, stmt: ast.stmt) -> None:
        """A block not evaluated may have run any number of times: what it changes is unknown."""
        nodes = self.walk(stmt)
        why = "assigned inside a block that is not evaluated"
        for node in nodes:  # names first, so that `cfg[i] = ...` sees the loop variable as unknown
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bind(node.id, Unknown(self.span(stmt), why), stmt)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.names[node.name] = Unknown(self.span(node), "defined inside a block")
        for node in nodes:
            if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.assign_into(node, Unknown(self.span(stmt), why), stmt)
            else:
                self.forget_called(node, stmt)

    # -- expressions -----------------------------------------------------
    def expr(self, node: ast.expr) -> Node:
        # Half of all expressions are names and constants, which hold no expression: no dispatch,
        # no depth to count, and the commonest constants made here, without a call more. Each is
        # told by `type(node) is`, which is also what tells the type checker which node it is.
        if type(node) is _NAME and self.depth < MAX_DEPTH:
            self.steps -= 1  # self.charge(1), inlined: this runs for every expression
            if self.steps < 0:
                self.charge(0)
            return self.name(node.id, node)
        if type(node) is _CONSTANT and self.depth < MAX_DEPTH:
            self.steps -= 1
            if self.steps < 0:
                self.charge(0)
            value = node.value
            value_kind = type(value)
            if value_kind in _PLAIN_CONSTANTS or (value_kind is int and -_INT_LIMIT < value < _INT_LIMIT) or (
                    type(value) is str and value.isascii()):
                return Scalar(value, self.span(node))
            return self.expr_Constant(node)
        kind = type(node)
        method = _EXPRESSIONS.get(kind)
        if method is None or self.depth >= MAX_DEPTH:
            why = f"{kind.__name__} is not evaluated" if method is None else "expression nested too deeply"
            return Unknown(self.span(node), why, self.deps_of(node))
        self.steps -= 1
        if self.steps < 0:
            self.charge(0)
        # No try/finally: an exception out of here ends the file's reading, depth and all.
        self.depth += 1
        result = method(self, node)
        self.depth -= 1
        return result

    def deps_of(self, node: ast.AST) -> frozenset:
        """Names an unevaluated expression reads, so derivations stay visible."""
        read = {sub.id for sub in self.walk(node)
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in self.names}
        self.reads |= read
        return _joined(frozenset(read), *(self.names[name].deps for name in read))

    def name(self, name: str, node: ast.expr) -> Node:
        self.reads.add(name)
        value = self.names.get(name)
        if value is None:
            if name in _BUILTIN_NAMES:
                return Scalar(_BUILTIN_SYMBOLS[name], self.span(node))
            return Unknown(self.span(node), f"{name} is not defined in this file")
        deps = value.deps
        deps = _joined(deps, _single(name)) if deps else _SINGLES.get(name) or _single(name)
        if name in self.pinned:
            return Scalar(self.pinned[name], value.span, deps, value.origin)
        if type(value) is Scalar:
            # A class is best shown where it is used.
            span = self.span(node) if type(value.value) is Symbol else value.span
            return Scalar(value.value, span, deps, value.origin, value.quoted)
        if type(value) is Unknown:
            return Unknown(value.span, value.why, deps, value.origin)
        return value  # containers stay shared, as in Python

    def expr_Name(self, node: ast.Name) -> Node:
        return self.name(node.id, node)

    def expr_Constant(self, node: ast.Constant) -> Node:
        value = node.value
        if isinstance(value, str):  # `'\\ud800'` would not encode as UTF-8
            return Scalar(value if value.isascii() else without_surrogates(value), self.span(node))
        if isinstance(value, int) and not isinstance(value, bool):
            too_long = long_int(value)  # `0xfff...` takes no digit limit; `str()` of it later would
            return Unknown(self.span(node), too_long) if too_long else Scalar(value, self.span(node))
        if value is None or isinstance(value, (bool, float)):
            return Scalar(value, self.span(node))
        return Unknown(self.span(node), f"a {type(value).__name__} constant")  # bytes, complex, `...`

    def expr_Attribute(self, node: ast.Attribute) -> Node:
        base = self.expr(node.value)
        if isinstance(base, Scalar) and isinstance(base.value, Symbol):
            return Scalar(_symbol(f"{base.value.qualname}.{node.attr}"), self.span(node), base.deps)
        if isinstance(base, Mapping) and node.attr in base.items:  # mmengine ConfigDict access
            return base.items[node.attr]
        return Unknown(self.span(node), f"attribute {node.attr}", base.deps)

    def expr_Subscript(self, node: ast.Subscript) -> Node:
        base = self.expr(node.value)
        key = self.expr(node.slice)
        deps = _joined(base.deps, key.deps)
        if isinstance(key, Scalar):
            if isinstance(base, Mapping) and isinstance(key.value, str) and key.value in base.items:
                return base.items[key.value]
            if isinstance(base, Sequence) and type(key.value) is int and -len(base.items) <= key.value < len(base.items):
                return base.items[key.value]
        return Unknown(self.span(node), "subscript", deps)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Node:
        operand = self.expr(node.operand)
        span = self.span(node)
        if isinstance(node.op, ast.Not):
            truth = _truth(operand)
            return Scalar(not truth, span, operand.deps) if truth is not None else Unknown(span, "not", operand.deps)
        if isinstance(operand, Scalar) and isinstance(operand.value, _NUMBER):
            if isinstance(node.op, ast.USub):
                return Scalar(-operand.value, span, operand.deps)
            if isinstance(node.op, ast.UAdd):
                return Scalar(+operand.value, span, operand.deps)
            if isinstance(node.op, ast.Invert) and isinstance(operand.value, int):
                return Scalar(~operand.value, span, operand.deps)
        return Unknown(span, "unary operation", operand.deps)

    def expr_BinOp(self, node: ast.BinOp) -> Node:
        return self.binop(type(node.op), self.expr(node.left), self.expr(node.right), self.span(node))

    def binop(self, op: type[ast.operator], left: Node, right: Node, span: Span) -> Node:
        deps = _joined(left.deps, right.deps)
        if isinstance(left, Sequence) and isinstance(right, Sequence) and op is ast.Add:
            if len(left.items) + len(right.items) <= MAX_LENGTH:
                self.charge(len(left.items) + len(right.items))
                sequence = Sequence(items=left.items + right.items, span=left.span, deps=deps)
                self.built(sequence, sequence.items)
                return sequence
        if isinstance(left, Scalar) and isinstance(right, Scalar) and op in _BINOPS:
            result = _arith(op, left.value, right.value)
            if not isinstance(result, _Refused):
                return _result(result, span, deps)
            if result.why:
                return Unknown(span, result.why, deps)
        return Unknown(span, "operation on values that are not known", deps)

    def expr_BoolOp(self, node: ast.BoolOp) -> Node:
        deps: frozenset = frozenset()
        last: Optional[Node] = None
        for index, value_node in enumerate(node.values):
            last = self.expr(value_node)
            deps = _joined(deps, last.deps)
            truth = _truth(last)
            if truth is None:  # the values not evaluated yet still count (those evaluated did: no second walk)
                rest = (self.deps_of(rest) for rest in node.values[index + 1:])
                return Unknown(self.span(node), "boolean operation", _joined(deps, *rest))
            if truth is isinstance(node.op, ast.Or):
                break
        assert last is not None
        return _copy(last, deps=deps) if isinstance(last, Scalar) else last

    def expr_Compare(self, node: ast.Compare) -> Node:
        left = self.expr(node.left)
        deps = left.deps
        result = True
        for index, (op, right_node) in enumerate(zip(node.ops, node.comparators)):
            right = self.expr(right_node)
            deps = _joined(deps, right.deps)
            a, b = self.plain(left), self.plain(right)
            if a is _UNKNOWN or b is _UNKNOWN:
                rest = (self.deps_of(rest) for rest in node.comparators[index + 1:])
                return Unknown(self.span(node), "comparison", _joined(deps, *rest))
            self.charge(_cost(a) + _cost(b))  # comparing two long tuples or strings
            try:
                if not _COMPARE[type(op)](a, b):
                    result = False
            except TypeError:
                return Unknown(self.span(node), "comparison", deps)
            left = right
        return Scalar(result, self.span(node), deps)

    def expr_IfExp(self, node: ast.IfExp) -> Node:
        test = self.expr(node.test)
        truth = _truth(test)
        if truth is None:
            deps = _joined(test.deps, self.expr(node.body).deps, self.expr(node.orelse).deps)
            return Unknown(self.span(node), "condition that cannot be evaluated", deps)
        chosen = self.expr(node.body if truth else node.orelse)
        if isinstance(chosen, (Scalar, Unknown)):
            return _copy(chosen, deps=_joined(chosen.deps, test.deps))
        return chosen

    def expr_Dict(self, node: ast.Dict) -> Node:
        mapping = Mapping(span=self.span(node))
        for key_node, value_node in zip(node.keys, node.values):
            value = self.expr(value_node)
            if key_node is None:  # {**other}
                if not isinstance(value, Mapping):
                    return Unknown(self.span(node), "unpacking of an unknown mapping", value.deps)
                self.charge(len(value.items))
                mapping.items.update(value.items)
                mapping.key_spans.update(value.key_spans)
                continue
            key = self.expr(key_node)
            if not (isinstance(key, Scalar) and isinstance(key.value, (str, int, float, bool))):
                return Unknown(self.span(node), "a key that cannot be evaluated", key.deps)
            mapping.items[key.value] = value
            mapping.key_spans[key.value] = self.span(key_node)
        self.built(mapping, mapping.items.values())
        return mapping

    def expr_List(self, node: ast.List) -> Node:
        items: list[Node] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                inner = self.expr(element.value)
                if not isinstance(inner, Sequence):
                    return Unknown(self.span(node), "unpacking of an unknown sequence", inner.deps)
                if len(items) + len(inner.items) > MAX_LENGTH:
                    return Unknown(self.span(node), f"a list of more than {MAX_LENGTH:,} items", inner.deps)
                self.charge(len(inner.items))
                items.extend(inner.items)
            else:
                items.append(self.expr(element))
        sequence = Sequence(items=items, span=self.span(node))
        self.built(sequence, items)
        return sequence

    expr_Tuple = expr_List
    expr_Set = expr_List

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Node:
        parts = []
        length = 0
        deps: frozenset = frozenset()
        for value in node.values:
            if isinstance(value, ast.Constant):
                part = str(value.value)
            elif isinstance(value, ast.FormattedValue):  # Python writes nothing else in an f-string
                inner = self.expr(value.value)
                deps = _joined(deps, inner.deps)
                if not isinstance(inner, Scalar) or value.format_spec is not None or value.conversion != -1:
                    return Unknown(self.span(node), "f-string", deps)
                part = str(inner.value)
            else:
                return Unknown(self.span(node), "f-string", deps)
            length += len(part)
            if length > MAX_LENGTH:  # before joining: `f'{a}{a}{a}...'` over a long `a` doubles on every line
                return Unknown(self.span(node), f"a string of more than {MAX_LENGTH:,} characters", deps)
            parts.append(part)
        return Scalar("".join(parts), self.span(node), deps)

    def expr_Call(self, node: ast.Call) -> Node:
        function = node.func
        if type(function) is ast.Name and function.id == "dict" and "dict" not in self.names and self.depth < MAX_DEPTH:
            # `dict(...)`, most calls of a config: the builtin read as `expr` would read it
            # (a step, a read), without a value made for it.
            self.reads.add("dict")
            self.charge(1)
            return self.call_dict(node, self.span(node))
        func = self.expr(function)
        span = self.span(node)
        symbol = func.value if isinstance(func, Scalar) and isinstance(func.value, Symbol) else None
        callee = symbol.qualname if symbol is not None else None
        if callee == "builtins.dict":
            return self.call_dict(node, span)
        args = [self.expr(arg) for arg in node.args if not isinstance(arg, ast.Starred)]
        kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
        deps = _joined(func.deps, *(a.deps for a in args), *(v.deps for v in kwargs.values()))
        if callee and callee.startswith("builtins.") and callee[9:] in _PURE_BUILTINS and not kwargs:
            values = [self.plain(a) for a in args]
            if len(args) == len(node.args) and _UNKNOWN not in values:
                result = _call_builtin(callee[9:], values)
                if result is not _UNKNOWN:
                    return _result(result, span, deps)
        imported = callee is not None and "." in callee and not callee.startswith("builtins.")
        if symbol is not None and imported and not node.args and all(kw.arg for kw in node.keywords):
            # `Config(a=1)` with keywords only reads as mmengine's `dict(type=Config, a=1)`
            # (XTuner v1 builds its configs this way); positional arguments would need the signature.
            mapping = Mapping(span=span, deps=deps)
            mapping.items["type"] = Scalar(symbol, self.span(node.func), func.deps)
            for keyword in node.keywords:
                mapping.items[keyword.arg] = kwargs[keyword.arg]
                mapping.key_spans[keyword.arg] = self.span(keyword)  # keywords carry positions since Python 3.9
            self.built(mapping, mapping.items.values())
            return mapping
        return Unknown(span, f"call to {callee or 'an unknown function'}", deps)

    def call_dict(self, node: ast.Call, span: Span) -> Node:
        items: dict = {}
        key_spans: dict = {}
        for arg in node.args:
            base = self.expr(arg)
            if not isinstance(base, Mapping):
                return Unknown(span, "dict() of an unknown value", base.deps)
            self.charge(len(base.items))
            items.update(base.items)
            key_spans.update(base.key_spans)
        for keyword in node.keywords:
            value = self.expr(keyword.value)
            key = keyword.arg
            if key is None:
                if not isinstance(value, Mapping):
                    return Unknown(span, "unpacking of an unknown mapping", value.deps)
                self.charge(len(value.items))
                items.update(value.items)
                key_spans.update(value.key_spans)
            else:
                items[key] = value
                key_spans[key] = self.span(keyword)  # keywords carry positions since Python 3.9
        mapping = Mapping(items, key_spans, span)
        self.built(mapping, items.values())
        return mapping

    def plain(self, node: Node):
        """A Python value to compute with, or _UNKNOWN; a sequence of more than
        MAX_LENGTH items in all, or nested past MAX_DEPTH, is not made one."""
        if isinstance(node, Scalar):
            return node.value
        if not isinstance(node, Sequence):
            return _UNKNOWN
        budget = [MAX_LENGTH]
        value = _plain_sequence(node, budget, 0)
        self.charge(MAX_LENGTH - budget[0])
        return value


# ast node type -> evaluator method, built once instead of a getattr per node.
_EXPRESSIONS = {
    getattr(ast, name[5:]): method
    for name, method in vars(_Evaluator).items()
    if name.startswith("expr_") and hasattr(ast, name[5:])
}


def _update(target: Mapping, pairs: list, depth: int) -> None:
    """dict.update of (key, value, span of the key) pairs. A mapping a base config wrote (its span
    names that file) is an mmengine ConfigDict, whose update merges a dict into a dict key by key
    rather than replacing it (ConfigDict.update: mmengine/config/config.py:167-185 @ v0.8.0,
    186-204 @ v0.10.7); `with read_base()` hands a config its bases' values as ConfigDicts."""
    merges = target.span.path is not None and depth < MAX_DEPTH
    for key, value, span in pairs:
        before = target.items.get(key)
        if merges and type(before) is Mapping and type(value) is Mapping:
            _update(before, [(k, v, value.key_spans.get(k, value.span)) for k, v in value.items.items()], depth + 1)
            continue
        target.items[key] = value
        target.key_spans[key] = span


class _Missing:
    pass


_UNKNOWN = _Missing()


def _plain_sequence(node: Sequence, budget: list, depth: int):
    """The tuple of a sequence's plain values, spending one of `budget[0]` per
    item (shared parts paid at every use), or _UNKNOWN."""
    budget[0] -= len(node.items)
    if budget[0] < 0 or depth > MAX_DEPTH:
        return _UNKNOWN
    values = []
    for item in node.items:
        value = item.value if isinstance(item, Scalar) else (
            _plain_sequence(item, budget, depth + 1) if isinstance(item, Sequence) else _UNKNOWN)
        if value is _UNKNOWN:
            return _UNKNOWN
        values.append(value)
    return tuple(values)


def _joined(*parts: frozenset) -> frozenset:
    """The union of dependency sets, at most MAX_DEPS names: a part that would
    take it past is left out (unions of ever growing sets along a chain of
    ten thousand assignments would be quadratic)."""
    result: frozenset = frozenset()
    for part in parts:
        if not part or part is result:
            continue
        if not result:
            result = part
        elif len(result) + len(part) <= MAX_DEPS:
            result = result | part
    return result


def _cost(value) -> int:
    """Steps a comparison over `value` may take."""
    return len(value) if isinstance(value, (str, tuple)) else 1


def _wide_lines(text: str) -> dict[int, str]:
    """Line number -> text of each line with a non-ASCII character, lines broken as
    Python's tokenizer breaks them."""
    if "\r" in text:  # lines end at "\r" too (`str.isascii` is a flag lookup: no line is scanned)
        return {i + 1: line for i, line in enumerate(split_lines(text, "python")) if not line.isascii()}
    # Only "\n" ends a line. Configs have a few such lines (a prompt, a comment): find them in the
    # UTF-8 bytes, where every non-ASCII byte becomes 0x80 in one C pass, instead of a string per line.
    raw = text.encode("utf-8", "surrogatepass")
    marked = raw.translate(_MARK_NON_ASCII)
    wide: dict = {}
    found = marked.find(0x80)
    while found >= 0:
        start = raw.rfind(b"\n", 0, found) + 1
        end = raw.find(b"\n", found)
        end = len(raw) if end < 0 else end
        wide[raw.count(b"\n", 0, start) + 1] = raw[start:end].decode("utf-8", "surrogatepass")
        found = marked.find(0x80, end)
    return wide


def _wide_characters(line: str) -> tuple:
    """Byte offsets of a line's non-ASCII characters, and the bytes beyond one
    each of them and those before it take."""
    starts, extras = [], []
    extra = 0
    for found in _NON_ASCII.finditer(line):
        starts.append(found.start() + extra)
        extra += len(found.group().encode("utf-8")) - 1
        extras.append(extra)
    return starts, extras


def _truth(node: Node) -> Optional[bool]:
    if isinstance(node, Scalar):
        if isinstance(node.value, Symbol):
            return True
        return bool(node.value)
    if isinstance(node, (Mapping, Sequence)):
        return bool(node.items)
    return None


_SINGLES: dict = {}
_SYMBOLS: dict = {}


def _symbol(qualname: str) -> Symbol:
    """Symbol(qualname), one per name (Symbols are immutable): configs import the same names."""
    found = _SYMBOLS.get(qualname)
    if found is None:
        found = Symbol(qualname)
        if len(_SYMBOLS) < 8192:
            _SYMBOLS[qualname] = found
    return found


def _single(name: str) -> frozenset:
    """frozenset((name,)), one per name: a name read a thousand times is one set."""
    found = _SINGLES.get(name)
    if found is None:
        found = frozenset((name,))
        if len(_SINGLES) < 4096:
            _SINGLES[name] = found
    return found


def _copy(node: Union[Scalar, Unknown], span=None, deps=None, origin=None) -> Node:
    span = span or node.span
    deps = node.deps if deps is None else deps
    origin = origin or node.origin
    if isinstance(node, Scalar):
        return Scalar(node.value, span, deps, origin, node.quoted)
    return Unknown(span, node.why, deps, origin)


def _result(value, span: Span, deps: frozenset) -> Node:
    """A computed value, or Unknown when it is not a plain scalar or is too long to keep."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return Scalar(value, span, deps)
    if isinstance(value, int):
        too_long = long_int(value)
        return Unknown(span, too_long, deps) if too_long else Scalar(value, span, deps)
    if isinstance(value, str):
        if len(value) > MAX_LENGTH:
            return Unknown(span, f"a string of more than {MAX_LENGTH:,} characters", deps)
        return Scalar(value, span, deps)
    return Unknown(span, f"a {type(value).__name__} value", deps)  # `(-8) ** 0.5` is complex


def _call_builtin(name: str, values: list):
    """A pure builtin's result, or _UNKNOWN when it fails or could cost more
    than its arguments' size (`round(1, -10**9)` computes 10 ** 10 ** 9)."""
    if name == "round" and len(values) == 2 and isinstance(values[1], int) and abs(values[1]) > _INT_BITS:
        return _UNKNOWN
    try:
        return _PURE_BUILTINS[name](*values)
    except (TypeError, ValueError, OverflowError):
        return _UNKNOWN


def _refusal(op: type[ast.operator], a, b) -> Optional[str]:
    """Why `a op b` is not computed, checked before anything long is made;
    None when it is computed. An empty why: an operation not followed."""
    numbers = isinstance(a, _NUMBER) and isinstance(b, _NUMBER)
    if op is ast.Pow:
        if not numbers:
            return ""
        # A float power is one machine operation (or an OverflowError); an integer one is as long as its result.
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and a.bit_length() * b > 2 * _INT_BITS:
            return f"a number with about {int((a.bit_length() - 1) * b * 0.30103) + 1:,} digits"
        return None
    if op is ast.Mult and not numbers:
        count = b if isinstance(b, int) else a if isinstance(a, int) else None
        other = a if count is b else b
        if count is None or not isinstance(other, str):
            return ""
        return None if len(other) * max(count, 0) <= MAX_LENGTH else f"a string of more than {MAX_LENGTH:,} characters"
    if op is ast.Add and not numbers:
        if not (isinstance(a, str) and isinstance(b, str)):
            return ""
        return None if len(a) + len(b) <= MAX_LENGTH else f"a string of more than {MAX_LENGTH:,} characters"
    return None if numbers else ""  # `%` on strings is formatting: not followed


def _arith(op: type[ast.operator], a, b):
    """Compute a binary operation on plain values, refusing anything costly:
    the result, or the refusal's why as a _Refused."""
    if isinstance(a, Symbol) or isinstance(b, Symbol):
        return _Refused("")
    why = _refusal(op, a, b)
    if why is not None:
        return _Refused(why)
    try:
        return _BINOPS[op](a, b)
    except (ArithmeticError, TypeError, ValueError):
        return _Refused("")


class _Refused:
    def __init__(self, why: str):
        self.why = why


# The evaluator of statements, public for readers that evaluate more than a module's top level
# (lint/frameworks/torchtitan_registry.py: the bodies of config functions).
Evaluator = _Evaluator
