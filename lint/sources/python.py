"""Read a Python config by evaluating its top-level statements statically.

The file is parsed with `ast` and never executed: only literals, names,
arithmetic, comparisons, conditional expressions, `dict(...)`/`{...}`,
lists/tuples, a few pure builtins and imports (resolved to qualified names)
are understood. Anything else - a call, a loop, a function - makes the values
it touches `Unknown`. Each value records the top-level names it was computed
from, so `accumulative_counts *= sequence_parallel_size` leaves a trace.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Optional

from ..document import Document, Mapping, Node, ParseError, Scalar, Sequence, Span, Symbol, Unknown

# Bounds that keep a hostile file from costing time or memory.
MAX_INT_BITS = 4096
MAX_LENGTH = 10_000
# Deeper expressions become Unknown rather than exhausting the interpreter's stack.
MAX_DEPTH = 200
# The line breaks of Python's tokenizer. str.splitlines() also breaks at \f,
# \x1c, \u2028... in comments and strings, which would shift every later line.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

_BINOPS = {
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
_PURE_BUILTINS = {
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
_NUMBER = (int, float)


def read_python(path: str, text: str) -> Document:
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise ParseError(f"Python syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1) from None
    except (ValueError, MemoryError) as exc:  # a NUL byte; a bare MemoryError: nested too deeply
        raise ParseError(f"Python source cannot be parsed: {str(exc) or 'it is nested too deeply'}") from None
    evaluator = _Evaluator(text)
    evaluator.run(tree.body)
    names = evaluator.names
    root = Mapping(items=dict(names), key_spans=dict(evaluator.assigned_at), span=Span(1, 1, 1, 1))
    unused = {name for name in evaluator.assigned_at if name not in evaluator.reads}
    return Document(path=path, format="python", root=root, text=text, namespace=names, unused=unused)


class _Evaluator:
    def __init__(self, text: str):
        self.lines = _LINE_BREAK.split(text)
        # Lines where UTF-8 bytes and characters differ; elsewhere ast's byte
        # columns are already character columns.
        self.wide_lines = set() if text.isascii() else {i + 1 for i, t in enumerate(self.lines) if not t.isascii()}
        self.names: dict[str, Node] = {}
        self.assigned_at: dict[str, Span] = {}  # top-level name -> span of its target
        self.reads: set[str] = set()
        self.depth = 0  # of the expression being evaluated
        # Deps of the undecidable `if` tests around the running statement; None outside them.
        self.condition: Optional[frozenset] = None

    # -- positions -------------------------------------------------------
    def _column(self, line: int, byte_offset: int) -> int:
        """ast columns count UTF-8 bytes; users count characters."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "ignore")) + 1

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno or node.lineno
        column, end_column = node.col_offset + 1, (node.end_col_offset or 0) + 1
        wide = self.wide_lines
        if wide and line in wide:
            column = self._column(line, column - 1)
        if wide and end_line in wide:
            end_column = self._column(end_line, end_column - 1)
        return Span(line, column, end_line, end_column)

    # -- statements ------------------------------------------------------
    def run(self, body: list) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.bind(alias.asname, Scalar(Symbol(alias.name), self.span(stmt)), stmt, declare=False)
                else:
                    top = alias.name.split(".", 1)[0]
                    self.bind(top, Scalar(Symbol(top), self.span(stmt)), stmt, declare=False)
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                # `from . import x` is `.x`, not `..x`: no dot after the leading dots alone.
                qualname = f"{module}.{alias.name}" if stmt.module else module + alias.name
                self.bind(alias.asname or alias.name, Scalar(Symbol(qualname), self.span(stmt)), stmt, declare=False)
        elif isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value, stmt)
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
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reads.add(node.id)

    def bind(self, name: str, value: Node, stmt: ast.stmt, declare: bool = True) -> None:
        self.names[name] = value
        if declare:
            self.assigned_at[name] = self.span(stmt)

    def assign(self, target: ast.expr, value: Node, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, (Scalar, Unknown)):
                value = _copy(value, origin=target.id)
            elif value.origin is None:
                value.origin = target.id
            self.bind(target.id, value, stmt)
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

    def assign_into(self, target: ast.expr, value: Node, stmt: ast.stmt) -> None:
        """`cfg['key'] = v` and `cfg.key = v` update a known mapping in place."""
        container, key = self.item_of(target)
        if isinstance(container, Mapping) and isinstance(key, str):
            if self.condition is not None:
                # The mapping is shared with the other branch: the key may or may not have changed.
                before = container.items.get(key)
                deps = value.deps | self.condition | (before.deps if before else frozenset())
                value = Unknown(self.span(stmt), "assigned under a condition that cannot be evaluated", deps)
            container.items[key] = value
            container.key_spans[key] = self.span(target)
        else:
            self.forget_base(target, stmt, "modified in a way not followed")

    def delete_from(self, target: ast.expr, stmt: ast.stmt) -> None:
        """`del cfg['key']` removes a key that is known to go; anything else is not followed."""
        container, key = self.item_of(target)
        if isinstance(container, Mapping) and isinstance(key, str) and self.condition is None:
            container.items.pop(key, None)
            container.key_spans.pop(key, None)
        else:
            self.assign_into(target, Unknown(self.span(stmt), "deleted in a way not followed"), stmt)

    def item_of(self, target: ast.expr) -> tuple:
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
        before, outer = dict(self.names), self.condition
        self.condition = (outer or frozenset()) | test.deps
        self.run(stmt.body)
        after_body = self.names
        self.names = dict(before)
        self.run(stmt.orelse)
        after_else = self.names
        self.condition = outer
        merged = dict(before)
        for name in set(after_body) | set(after_else):
            a, b = after_body.get(name), after_else.get(name)
            if a is not None and a is b:
                merged[name] = a
            else:
                deps = (a.deps if a else frozenset()) | (b.deps if b else frozenset()) | test.deps
                merged[name] = Unknown(self.span(stmt), "assigned under a condition that cannot be evaluated", deps)
        self.names = merged

    def expression_statement(self, stmt: ast.Expr) -> None:
        """`hooks.append(x)` or `cfg.update(...)` changes a value in ways not followed."""
        self.forget_called(stmt.value, stmt)

    def forget_called(self, call: ast.AST, stmt: ast.stmt) -> None:
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            base = call.func.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and isinstance(self.names.get(base.id), (Mapping, Sequence)):
                self.names[base.id] = Unknown(self.span(stmt), f"changed by {call.func.attr}()")

    def forget_assigned(self, stmt: ast.stmt) -> None:
        """A block not evaluated may have run any number of times: what it changes is unknown."""
        nodes = list(ast.walk(stmt))
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
        method = _EXPRESSIONS.get(type(node))
        if method is None or self.depth >= MAX_DEPTH:
            why = f"{type(node).__name__} is not evaluated" if method is None else "expression nested too deeply"
            return Unknown(self.span(node), why, self.deps_of(node))
        self.depth += 1
        try:
            return method(self, node)
        finally:
            self.depth -= 1

    def deps_of(self, node: ast.AST) -> frozenset:
        """Names an unevaluated expression reads, so derivations stay visible."""
        found = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in self.names:
                self.reads.add(sub.id)
                found.add(sub.id)
                found |= self.names[sub.id].deps
        return frozenset(found)

    def name(self, name: str, node: ast.expr) -> Node:
        self.reads.add(name)
        value = self.names.get(name)
        if value is None:
            if name in _BUILTIN_NAMES:
                return Scalar(Symbol("builtins." + name), self.span(node))
            return Unknown(self.span(node), f"{name} is not defined in this file")
        deps = value.deps | {name}
        if isinstance(value, Scalar) and isinstance(value.value, Symbol):
            return _copy(value, deps=deps, span=self.span(node))  # a class is best shown where it is used
        if isinstance(value, (Scalar, Unknown)):
            return _copy(value, deps=deps)
        return value  # containers stay shared, as in Python

    def expr_Name(self, node: ast.Name) -> Node:
        return self.name(node.id, node)

    def expr_Constant(self, node: ast.Constant) -> Node:
        return Scalar(node.value, self.span(node))

    def expr_Attribute(self, node: ast.Attribute) -> Node:
        base = self.expr(node.value)
        if isinstance(base, Scalar) and isinstance(base.value, Symbol):
            return Scalar(Symbol(f"{base.value.qualname}.{node.attr}"), self.span(node), base.deps)
        if isinstance(base, Mapping) and node.attr in base.items:  # mmengine ConfigDict access
            return base.items[node.attr]
        return Unknown(self.span(node), f"attribute {node.attr}", base.deps)

    def expr_Subscript(self, node: ast.Subscript) -> Node:
        base = self.expr(node.value)
        key = self.expr(node.slice)
        deps = base.deps | key.deps
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

    def binop(self, op: type, left: Node, right: Node, span: Span) -> Node:
        deps = left.deps | right.deps
        if isinstance(left, Sequence) and isinstance(right, Sequence) and op is ast.Add:
            if len(left.items) + len(right.items) <= MAX_LENGTH:
                return Sequence(items=left.items + right.items, span=left.span, deps=deps)
        if isinstance(left, Scalar) and isinstance(right, Scalar) and op in _BINOPS:
            result = _arith(op, left.value, right.value)
            if result is not None:
                return Scalar(result, span, deps)
        return Unknown(span, "operation on values that are not known", deps)

    def expr_BoolOp(self, node: ast.BoolOp) -> Node:
        deps: frozenset = frozenset()
        last: Optional[Node] = None
        for value_node in node.values:
            last = self.expr(value_node)
            deps |= last.deps
            truth = _truth(last)
            if truth is None:
                return Unknown(self.span(node), "boolean operation", deps | self.deps_of(node))
            if truth is isinstance(node.op, ast.Or):
                break
        assert last is not None
        return _copy(last, deps=deps) if isinstance(last, Scalar) else last

    def expr_Compare(self, node: ast.Compare) -> Node:
        left = self.expr(node.left)
        deps = left.deps
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            deps |= right.deps
            a, b = _plain(left), _plain(right)
            if a is _UNKNOWN or b is _UNKNOWN:
                return Unknown(self.span(node), "comparison", deps | self.deps_of(node))
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
            deps = test.deps | self.expr(node.body).deps | self.expr(node.orelse).deps
            return Unknown(self.span(node), "condition that cannot be evaluated", deps)
        chosen = self.expr(node.body if truth else node.orelse)
        if isinstance(chosen, (Scalar, Unknown)):
            return _copy(chosen, deps=chosen.deps | test.deps)
        return chosen

    def expr_Dict(self, node: ast.Dict) -> Node:
        mapping = Mapping(span=self.span(node))
        for key_node, value_node in zip(node.keys, node.values):
            value = self.expr(value_node)
            if key_node is None:  # {**other}
                if not isinstance(value, Mapping):
                    return Unknown(self.span(node), "unpacking of an unknown mapping", value.deps)
                mapping.items.update(value.items)
                mapping.key_spans.update(value.key_spans)
                continue
            key = self.expr(key_node)
            if not (isinstance(key, Scalar) and isinstance(key.value, (str, int, float, bool))):
                return Unknown(self.span(node), "a key that cannot be evaluated", key.deps)
            mapping.items[key.value] = value
            mapping.key_spans[key.value] = self.span(key_node)
        return mapping

    def expr_List(self, node: ast.List) -> Node:
        items = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                inner = self.expr(element.value)
                if not isinstance(inner, Sequence):
                    return Unknown(self.span(node), "unpacking of an unknown sequence", inner.deps)
                items.extend(inner.items)
            else:
                items.append(self.expr(element))
        return Sequence(items=items, span=self.span(node))

    expr_Tuple = expr_List
    expr_Set = expr_List

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Node:
        parts = []
        deps: frozenset = frozenset()
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            inner = self.expr(value.value) if isinstance(value, ast.FormattedValue) else self.expr(value)
            deps |= inner.deps
            if not isinstance(inner, Scalar) or value.format_spec is not None or value.conversion != -1:
                return Unknown(self.span(node), "f-string", deps)
            parts.append(str(inner.value))
        return Scalar("".join(parts), self.span(node), deps)

    def expr_Call(self, node: ast.Call) -> Node:
        func = self.expr(node.func)
        span = self.span(node)
        callee = func.value.qualname if isinstance(func, Scalar) and isinstance(func.value, Symbol) else None
        if callee == "builtins.dict":
            return self.call_dict(node, span)
        args = [self.expr(arg) for arg in node.args if not isinstance(arg, ast.Starred)]
        kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
        deps = func.deps | frozenset().union(*(a.deps for a in args), *(v.deps for v in kwargs.values()))
        if callee and callee.startswith("builtins.") and callee[9:] in _PURE_BUILTINS and not kwargs:
            values = [_plain(a) for a in args]
            if len(args) == len(node.args) and _UNKNOWN not in values:
                try:
                    result = _PURE_BUILTINS[callee[9:]](*values)
                except (TypeError, ValueError, OverflowError):
                    result = _UNKNOWN
                if _safe_scalar(result):
                    return Scalar(result, span, deps)
        imported = callee is not None and "." in callee and not callee.startswith("builtins.")
        if imported and not node.args and all(kw.arg for kw in node.keywords):
            # `Config(a=1)` with keywords only reads as mmengine's `dict(type=Config, a=1)`
            # (XTuner v1 builds its configs this way); positional arguments would need the signature.
            mapping = Mapping(span=span, deps=deps)
            mapping.items["type"] = Scalar(func.value, self.span(node.func), func.deps)
            for keyword in node.keywords:
                mapping.items[keyword.arg] = kwargs[keyword.arg]
                mapping.key_spans[keyword.arg] = self._keyword_span(keyword)
            return mapping
        return Unknown(span, f"call to {callee or 'an unknown function'}", deps)

    def call_dict(self, node: ast.Call, span: Span) -> Node:
        mapping = Mapping(span=span)
        for arg in node.args:
            base = self.expr(arg)
            if not isinstance(base, Mapping):
                return Unknown(span, "dict() of an unknown value", base.deps)
            mapping.items.update(base.items)
            mapping.key_spans.update(base.key_spans)
        for keyword in node.keywords:
            value = self.expr(keyword.value)
            if keyword.arg is None:
                if not isinstance(value, Mapping):
                    return Unknown(span, "unpacking of an unknown mapping", value.deps)
                mapping.items.update(value.items)
                mapping.key_spans.update(value.key_spans)
            else:
                mapping.items[keyword.arg] = value
                mapping.key_spans[keyword.arg] = self._keyword_span(keyword)
        return mapping

    def _keyword_span(self, keyword: ast.keyword) -> Span:
        return self.span(keyword)  # keywords carry positions since Python 3.9


# ast node type -> evaluator method, built once instead of a getattr per node.
_EXPRESSIONS = {
    getattr(ast, name[5:]): method
    for name, method in vars(_Evaluator).items()
    if name.startswith("expr_") and hasattr(ast, name[5:])
}


class _Missing:
    pass


_UNKNOWN = _Missing()


def _plain(node: Node):
    """A Python value to compute with, or _UNKNOWN."""
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Sequence):
        values = [_plain(item) for item in node.items]
        return _UNKNOWN if _UNKNOWN in values else tuple(values)
    return _UNKNOWN


def _truth(node: Node) -> Optional[bool]:
    if isinstance(node, Scalar):
        if isinstance(node.value, Symbol):
            return True
        return bool(node.value)
    if isinstance(node, (Mapping, Sequence)):
        return bool(node.items)
    return None


def _copy(node: Node, span=None, deps=None, origin=None) -> Node:
    span = span or node.span
    deps = node.deps if deps is None else deps
    origin = origin or node.origin
    if isinstance(node, Scalar):
        return Scalar(node.value, span, deps, origin, node.quoted)
    return Unknown(span, node.why, deps, origin)


def _safe_scalar(value) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return value.bit_length() <= MAX_INT_BITS
    if isinstance(value, float):
        return True
    if isinstance(value, str):
        return len(value) <= MAX_LENGTH
    return False


def _arith(op: type, a, b):
    """Compute a binary operation on plain values, refusing anything costly."""
    if isinstance(a, Symbol) or isinstance(b, Symbol):
        return None
    numbers = isinstance(a, _NUMBER) and isinstance(b, _NUMBER)
    if op is ast.Pow:
        if not numbers or abs(b) > 256 or (isinstance(a, int) and a.bit_length() * abs(b) > MAX_INT_BITS):
            return None
    elif op is ast.Mult and not numbers:
        count = b if isinstance(b, int) else a if isinstance(a, int) else None
        other = a if count is b else b
        if count is None or not isinstance(other, str) or len(other) * max(count, 0) > MAX_LENGTH:
            return None
    elif op is ast.Add and not numbers:
        if not (isinstance(a, str) and isinstance(b, str)):
            return None
    elif op is ast.Mod and not numbers:
        return None
    elif not numbers:
        return None
    try:
        result = _BINOPS[op](a, b)
    except (ArithmeticError, TypeError, ValueError):
        return None
    return result if _safe_scalar(result) else None
