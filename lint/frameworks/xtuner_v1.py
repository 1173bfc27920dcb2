"""XTuner v1 Python configs (`from xtuner.v1 ...`), as `xtuner/v1/train/cli/sft.py`
loads them: the top-level `trainer` (`Config.fromfile(config)["trainer"]`).

A v1 config builds pydantic objects by calling their classes,
`trainer = TrainerConfig(global_batch_size=64, sp_size=4, ...)`. The Python
reader leaves calls Unknown, so this adapter reads the keyword arguments of
the top-level calls itself, with `ast`: a keyword is known when it is a
literal, or a name the reader resolved and the file assigns only once.

Facts (xtuner main @ b934f46): dp = W / (fsdp_cfg.tp_size x sp_size), and W
must be a multiple of tp x sp (trainer.py:1105-1128). Each rank takes
global_batch_size / dp packed samples per step, which must be whole
(trainer.py:1024-1040), and feeds them intra_layer_micro_batch at a time,
which must divide them (engine/train_engine.py:195-210): global_batch_size
must divide by intra_layer_micro_batch x dp. Left as None it is dp x
intra_layer_micro_batch (trainer.py:674-676). Length grouping is meant to go
with packing in v1, so the v0.1 packing facts are not filled.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Iterator, Optional

from ..document import Document, Mapping, Node, Scalar, Span, Symbol, Unknown
from ..plan import Fact, TrainingPlan
from .facts import Outside, divide, number
from .xtuner import is_v1

NAME = "xtuner-v1"
FORMATS = ("python",)
MARKERS = (b"xtuner.v1",)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # Python's line breaks, as the reader counts lines


def plan(doc: Document, outside: Outside):
    if doc.format != "python" or "trainer" not in doc.namespace or not is_v1(doc):
        return None
    plan = TrainingPlan(
        framework=NAME, document=doc, world_size=outside.world_size, target_global_batch=outside.target_global_batch
    )
    trainer = next((c for c in calls(doc, "TrainerConfig") if c.origin == "trainer"), None)
    if trainer is not None:
        _batch_facts(plan, trainer, outside)
    return plan


def _batch_facts(plan: TrainingPlan, trainer: Mapping, outside: Outside) -> None:
    fsdp = trainer.get("fsdp_cfg")
    if isinstance(fsdp, Scalar) and fsdp.value is None:
        fsdp = None  # the trainer then uses FSDPConfig() (trainer.py:617-618)
    tp = number(fsdp.get("tp_size") if isinstance(fsdp, Mapping) else fsdp, "fsdp_cfg.tp_size", default=1)
    sp = number(trainer.get("sp_size"), "sp_size", default=1)
    plan.parallel = {"tp": tp, "sp": sp}
    plan.layout, plan.layout_exact = (tp, sp), False
    plan.data_parallel = divide(outside.world_size, [tp, sp])
    plan.micro_batch = number(trainer.get("intra_layer_micro_batch"), "intra_layer_micro_batch", default=1)
    declared = trainer.get("global_batch_size")
    if isinstance(declared, Scalar) and declared.value is None:
        plan.grad_accum = Fact(1, "gradient accumulation", None, "derived: global_batch_size None")
    elif declared is not None:
        plan.declared_global_batch = number(declared, "global_batch_size")
        plan.derived_from_global = "grad_accum"


# -- reading the calls ---------------------------------------------------------------------

def calls(doc: Document, class_name: str) -> Iterator[Mapping]:
    """Every top-level call of the xtuner.v1 class `class_name` - assigned,
    or nested in another top-level call's arguments - as a Mapping of its
    keyword arguments with `type` = the class (as `dict(type=..., ...)`)."""
    reader = _CallReader(doc)
    for mapping in reader.all():
        kind = mapping.get("type")
        if isinstance(kind, Scalar) and isinstance(kind.value, Symbol) and kind.value.name == class_name:
            if kind.value.qualname.startswith("xtuner.v1"):
                yield mapping


class _CallReader:
    """Keyword arguments of the calls in a module's top-level assignments."""

    MAX_DEPTH = 50

    def __init__(self, doc: Document):
        self.doc = doc
        self.lines = _LINE_BREAK.split(doc.text)
        tree = ast.parse(doc.text)
        self.once = _assigned_once(tree)
        # name -> the call assigned to it, for names assigned once, at top level, never mutated
        self.assigned = {
            stmt.targets[0].id: stmt.value
            for stmt in tree.body
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call) and stmt.targets[0].id in self.once
        }
        self.origin = {id(call): name for name, call in self.assigned.items()}
        self.read: dict = {}  # id(call) -> Mapping, so a call named twice is read once
        self.depth = 0

    def all(self) -> list:
        for call in self.assigned.values():
            self.call(call)
        return [value for value in self.read.values() if isinstance(value, Mapping)]

    def call(self, node: ast.Call) -> Node:
        if id(node) in self.read:
            return self.read[id(node)]
        if self.depth >= self.MAX_DEPTH:
            return Unknown(self.span(node), "call nested too deeply")
        if any(keyword.arg is None for keyword in node.keywords):
            # `**options` may set any argument: a default would be a guess.
            self.read[id(node)] = Unknown(self.span(node), "call with ** arguments")
            return self.read[id(node)]
        mapping = Mapping(span=self.span(node), origin=self.origin.get(id(node)))
        self.read[id(node)] = mapping
        mapping.items["type"] = self.callee(node.func)
        self.depth += 1
        for keyword in node.keywords:
            mapping.items[keyword.arg] = self.value(keyword.value)
            mapping.key_spans[keyword.arg] = self.span(keyword)
        self.depth -= 1
        return mapping

    def callee(self, func: ast.expr) -> Node:
        path = []
        while isinstance(func, ast.Attribute):
            path.insert(0, func.attr)
            func = func.value
        base = self.doc.namespace.get(func.id) if isinstance(func, ast.Name) else None
        if isinstance(base, Scalar) and isinstance(base.value, Symbol):
            return Scalar(Symbol(".".join([base.value.qualname] + path)), self.span(func))
        return Unknown(self.span(func), "not an imported callable")

    def value(self, node: ast.expr) -> Node:
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Constant):
            return Scalar(node.value, self.span(node))
        if isinstance(node, ast.Name) and node.id in self.once:
            if node.id in self.assigned:
                return self.call(self.assigned[node.id])
            return self.doc.namespace.get(node.id) or Unknown(self.span(node), f"{node.id} is not defined")
        return Unknown(self.span(node), f"{type(node).__name__} is not evaluated")

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno or node.lineno
        return Span(line, self._column(line, node.col_offset), end_line, self._column(end_line, node.end_col_offset or 0))

    def _column(self, line: int, offset: int) -> int:
        """ast counts UTF-8 bytes; users count characters."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", "ignore")) + 1


def _assigned_once(tree: ast.Module) -> set:
    """Names stored exactly once in the module and never changed through an
    attribute, an item or a method call (`fsdp_cfg.tp_size = 2`,
    `cfg.update(...)`): only their one value is certain."""
    stores: Counter = Counter()
    changed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] += 1
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            changed.add(_base_name(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            changed.add(_base_name(node.func))
    return {name for name, count in stores.items() if count == 1 and name not in changed}


def _base_name(node: ast.expr) -> Optional[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def dataloader_configs(doc: Document) -> Iterator[Mapping]:
    """The v1 DataloaderConfig calls of a config (for the v1 rules)."""
    return calls(doc, "DataloaderConfig")
