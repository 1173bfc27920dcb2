"""`batchlint explain`: the batch arithmetic of one config or launch script.

Every number comes with where it came from: a file and line, a framework
default, a formula over other rows, or "unknown" and what would make it known.
With several world sizes the table gets one column per W.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .config import Settings
from .engine import Options, check_file
from .plan import Fact, Origin, TrainingPlan

_DEGREES = {"sp": "sequence parallel", "cp": "context parallel", "tp": "tensor parallel",
            "pp": "pipeline parallel", "ep": "expert parallel", "dp_replicate": "dp replicate", "dp_shard": "dp shard"}


@dataclass
class Row:
    name: str
    values: list  # one per world size asked for (a single one when none was)
    source: str


@dataclass
class Explanation:
    title: str  # the config, and the launch that applied to it
    framework: str
    rows: list


def explain(path: str, settings: Settings, world_sizes: tuple, global_batch: Optional[int]) -> list:
    """One Explanation per plan the file gives (a script may launch several configs)."""
    runs = []
    for world in world_sizes or (None,):
        options = Options(world_size=world, global_batch=global_batch, world_size_wins=world is not None)
        runs.append(check_file(path, settings, options, rules=()).plans)
    explanations = []
    for index, (launch_note, plan) in enumerate(runs[0]):
        per_w = [run[index][1] for run in runs if index < len(run)]
        title = plan.document.path
        if launch_note:
            title += f", as {launch_note.message.replace('launched here', 'launched')} at {launch_note.path}:{launch_note.span.line}"
        explanations.append(Explanation(title, plan.framework, _rows(per_w)))
    return explanations


def _rows(plans: list) -> list:
    first = plans[0]
    rows = [
        _fact_row("micro batch (per GPU)", [p.micro_batch for p in plans]),
        _fact_row("gradient accumulation", [p.accumulation() for p in plans], missing="unknown"),
        _fact_row("world size W", [p.world_size for p in plans], missing="unknown: pass --world-size"),
    ]
    for short, fact in first.parallel.items():
        rows.append(_fact_row(f"{_DEGREES.get(short, short)} degree", [p.parallel.get(short) for p in plans]))
    rows.append(_fact_row("data parallel dp", [p.data_parallel for p in plans], missing="unknown: needs W"))
    if first.declared_global_batch is not None:
        rows.append(_fact_row("declared global batch", [p.declared_global_batch for p in plans]))
    globals_ = [p.effective_global_batch() for p in plans]
    rows.append(Row("global batch (sequences/step)", [g[0] if g else "?" for g in globals_],
                    _formula(first) if any(globals_) else "unknown: needs micro batch, accumulation and dp"))
    rows.append(_fact_row("sequence length", [p.seq_len for p in plans]))
    rows.append(_tokens(plans, globals_))
    steps = [a.value if a is not None and a.known else "?" for a in (p.accumulation() for p in plans)]
    rows.append(Row("micro-steps per optimizer step", steps, "= gradient accumulation"))
    if first.rl is not None:
        rows += _rl_rows(plans, globals_)
    packing = first.packing
    if packing is not None:
        rows.append(Row("packing", [_plain(packing.value)] * len(plans), _where(packing)))
    return rows


def _rl_rows(plans: list, globals_: list) -> list:
    """RL training: what a generation round produces and how the optimizer steps consume it."""
    rls = [p.rl for p in plans]
    rows = [_fact_row(name, [getattr(rl, field) for rl in rls]) for name, field in (
        ("samples per prompt", "samples_per_prompt"), ("prompts per generation round", "prompts_per_step"),
        ("generation batch (sequences)", "generation_batch"), ("mini batch (per optimizer step)", "mini_batch"))
        if getattr(rls[0], field) is not None]
    steps = []
    for rl, glob in zip(rls, globals_):
        batch = rl.generation_batch
        fits = glob and batch is not None and batch.positive and glob[0] > 0 and batch.value % glob[0] == 0
        steps.append(batch.value // glob[0] if fits else "?")
    rows.append(Row("optimizer steps per generation round", steps, "= generation batch / global batch (x epochs)"))
    for role in rls[0].micro_batch:
        if role != "actor":
            rows.append(_fact_row(f"micro batch ({role})", [rl.micro_batch.get(role) for rl in rls]))
    return rows


def _fact_row(name: str, facts: list, missing: str = "not set") -> Row:
    present = next((f for f in facts if f is not None), None)
    values = [_plain(f.value) if f is not None and f.value is not None else "?" for f in facts]
    return Row(name, values, _where(present) if present is not None else missing)


def _plain(value):
    """A value as the table and its JSON show it: numbers, text and booleans as they
    are; anything else a config can hold (a date, an imported name, a list) as text."""
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def _where(fact: Fact) -> str:
    if fact.span is not None and fact.origin is Origin.FILE:
        path = fact.span.path or ""
        return f"{fact.key}, {path + ':' if path else 'line '}{fact.span.line}"
    if fact.origin is Origin.DEFAULT:
        return f"{fact.key}: framework default"
    if fact.origin is Origin.LAUNCH:
        return fact.provenance + (f" ({fact.span.path}:{fact.span.line})" if fact.span is not None and fact.span.path else "")
    return f"{fact.key}: {fact.provenance}"


def _formula(plan: TrainingPlan) -> str:
    if plan.declared_global_batch is not None and plan.derived_from_global:
        return "= declared global batch (accumulation derived from it)"
    return "= micro batch x accumulation x dp"


def _tokens(plans: list, globals_: list) -> Row:
    values = []
    for plan, glob in zip(plans, globals_):
        seq = plan.seq_len
        values.append(glob[0] * seq.value if glob and seq is not None and seq.known else "?")
    packed = plans[0].packing is not None and plans[0].packing.value is True
    how = "= global batch x sequence length" + ("" if packed else " (an upper bound: without packing sequences are shorter)")
    return Row("tokens per optimizer step", values, how)


def as_text(explanations: list, world_sizes: tuple) -> str:
    if not explanations:
        return "batchlint: no training config recognised\n"
    out = []
    for explanation in explanations:
        out.append(f"{explanation.title}  [{explanation.framework}]")
        headers = ["", *(f"W={w}" for w in world_sizes)] if len(world_sizes) > 1 else ["", "value"]
        table = [headers] + [[row.name, *map(_show, row.values), row.source] for row in explanation.rows]
        widths = [max(len(str(line[i])) for line in table if i < len(line)) for i in range(len(headers))]
        for line in table:
            cells = [str(cell).ljust(widths[i]) if i == 0 else str(cell).rjust(widths[i]) for i, cell in enumerate(line[: len(headers)])]
            extra = f"  {line[len(headers)]}" if len(line) > len(headers) else ""
            out.append("  " + "  ".join(cells) + extra)
        out.append("")
    return "\n".join(out)


def as_json(explanations: list, world_sizes: tuple) -> list:
    return [
        {
            "config": e.title,
            "framework": e.framework,
            "world_sizes": list(world_sizes) or [None],
            "rows": [{"name": r.name, "values": r.values, "source": r.source} for r in e.rows],
        }
        for e in explanations
    ]


def _show(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
