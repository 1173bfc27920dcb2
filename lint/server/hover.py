"""Hover over a batch key: the rows of `batchlint explain` that the key feeds.

A row is fed by the key when its source cites the key's line (the explain table
says where each number comes from, `per_device_train_batch_size, line 3`), or when
it is computed from a fed row (the global batch from the micro batch, tokens per
step from the global batch, dp from W and the degrees that divide it).
"""

from __future__ import annotations

import os
import re

from ..lean_dataclass import fields, lean_dataclass
from ..plan import Fact, TrainingPlan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


@lean_dataclass
class Table:
    title: str
    framework: str
    rows: list  # explain.Row, only those the key feeds


def tables_at(path: str, line: int, settings) -> list:
    """The explain rows that the values written on `line` of `path` feed, one Table per plan
    the file gives (a launch script may run several configs); empty when the line holds none."""
    from .. import explain, per_run, project

    per_run.forget()  # the files in view may have changed since the last hover
    here = os.path.realpath(path)
    tables = []
    with project.using(project.find_project([path], settings)):  # as `batchlint explain` reads it
        plans = explain.plans_of(path, settings)  # as the launch lines in view run it, each with its W
    for launch, plan in plans:
        facts = [f for f in _facts(plan) if _on_line(f, plan, here, line)]
        if not facts:
            continue
        columns = explain._Columns([plan], (), settings)
        rows = explain._rows([plan], (), settings)
        fed = _fed(rows, [columns.where(f) for f in facts], [f.key for f in facts])
        if fed:
            tables.append(Table(explain._launched_title(plan, launch), plan.framework, fed))
    return tables


def _facts(plan: TrainingPlan) -> list:
    """Every fact of the plan: its fields, the degrees and RL's, and the accumulation it derives."""
    found = []

    def add(value) -> None:
        if isinstance(value, Fact):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                add(item)

    for holder in (plan, plan.rl):
        if holder is not None:
            for f in fields(holder):
                add(getattr(holder, f.name))
    add(plan.accumulation())
    return found


def _on_line(fact: Fact, plan: TrainingPlan, here: str, line: int) -> bool:
    span = fact.span
    if span is None:
        return False
    return os.path.realpath(span.path or plan.document.path) == here and span.line <= line <= span.end_line


def _fed(rows: list, citations: list, keys: list) -> list:
    """The rows whose source cites one of `citations` (explain's own words for the hovered
    values), then, round after round, those computed from a fed row or a hovered key."""
    fed = [row for row in rows if any(_cites(source, c) for source in row.sources for c in citations)]
    while True:
        names = {term for row in fed for term in _terms(row.name)} | set(keys)
        more = [row for row in rows if row not in fed and (any(_computed_from(s, names) for s in row.sources)
                                                           or _unstated(row, rows) & names)]
        if not more:
            return [row for row in rows if row in fed]  # in explain's order
        fed += more


# What explain computes the global batch and dp from, which their rows say only when they are
# known (`= micro batch x accumulation x dp`); unknown, they say what is missing (`unknown: needs dp`).
_GLOBAL_ROWS = ("global batch (sequences/step)", "tokens per optimizer step")  # sequences; tokens (TrainingPlan.unit)
_GLOBAL_INPUTS = {"micro batch", "tokens per micro-step", "accumulation", "dp", "declared global batch",
                  "declared tokens per optimizer step"}


def _unstated(row, rows: list) -> set:
    """The rows `row` is computed from when its source cannot say (its value is unknown)."""
    if not any(s.startswith(("unknown", "fails:")) for s in row.sources):
        return set()
    if row.name in _GLOBAL_ROWS:
        return _GLOBAL_INPUTS
    if row.name == "data parallel dp":
        return {"W"} | {r.name for r in rows if r.name.endswith(" degree")}
    return set()


def _cites(source: str, citation: str) -> bool:
    """`citation` is in `source` as a whole (`line 3` does not cite line 30)."""
    start = source.find(citation)
    while start >= 0:
        before, after = source[start - 1:start], source[start + len(citation):start + len(citation) + 1]
        if not (before.isalnum() or before == "_") and not after.isdigit():
            return True
        start = source.find(citation, start + 1)
    return False


def _terms(name: str) -> set:
    """How explain's formulas name a row: `micro batch (per GPU)` is `micro batch`, `data parallel
    dp` is `dp`, `world size W` is `W`, `gradient accumulation` is `accumulation`."""
    base = re.sub(r"\s*\(.*\)$", "", name)
    terms = {base, base.split()[-1] if base.split()[-1] in ("dp", "W") else base}
    if base.endswith("accumulation"):
        terms.add("accumulation")
    return terms


def _computed_from(source: str, names: set) -> bool:
    """A formula (`= micro batch x accumulation x dp`), a derivation (`dp: derived: W (32) /
    sp (4)`), or why a value cannot be computed (`unknown: needs dp`, `fails: ...`) that names
    one of `names`."""
    if not (source.startswith(("=", "unknown: needs", "fails:")) or "derived:" in source):
        return False
    return any(re.search(rf"(?<![\w-])(?<!declared ){re.escape(name)}(?![\w-])", source) for name in names)


def markdown(tables: list) -> str:
    """The tables as Markdown, as a hover shows them."""
    from ..explain import _show

    out = []
    for table in tables:
        out.append(f"**batchlint explain** `{_cell(table.title)}` [{table.framework}]\n")
        out.append("| | value | source |\n|:--|--:|:--|")
        for row in table.rows:
            values = ", ".join(_show(v) + (f" {row.unit}" if row.unit and v != "?" else "") for v in row.values)
            out.append(f"| {_cell(row.name)} | {_cell(values)} | {_cell(row.source)} |")
        out.append("")
    return "\n".join(out)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def hover_text(path: str, line: int, settings) -> Optional[str]:
    tables = tables_at(path, line, settings)
    return markdown(tables) if tables else None
