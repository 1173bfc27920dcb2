"""`batchlint explain`: the batch arithmetic of one config or launch script.

Every number comes with where it came from: a file and line, a framework
default, a formula over other rows, or "unknown" and what would make it known.
A value that cannot be computed because a division the framework makes does
not come out whole says which one (the rule that checks it gives the words).
With several world sizes the table gets one column per W, and a row whose
columns come from different places names each column's source.
"""

from __future__ import annotations

from .config import Settings
from .engine import Options, plan_file
from .lean_dataclass import field, lean_dataclass, replace
from .plan import Fact, Origin, TrainingPlan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_DEGREES = {"sp": "sequence parallel", "cp": "context parallel", "tp": "tensor parallel",
            "pp": "pipeline parallel", "ep": "expert parallel", "dp_replicate": "dp replicate", "dp_shard": "dp shard"}

# The rules whose findings say why a row cannot be computed (or disagrees), in the order asked:
# a division of W by the layout (BL202), of a declared global batch (BL103), the RL mini
# batch over the GPUs and micro batches (BL140, BL142), a declared global batch that is not the product (BL102).
_LAYOUT, _DECLARED, _MISMATCH = ("BL202",), ("BL103",), ("BL102",)
_RL_SPLIT = ("BL140", "BL142")
_WHY = {
    "micro": _LAYOUT + _DECLARED,
    "accumulation": _LAYOUT + _DECLARED + _RL_SPLIT,
    "dp": _LAYOUT,
    "global": _LAYOUT + _DECLARED + _RL_SPLIT,
}
_REFUSED = _LAYOUT + _DECLARED + _MISMATCH
_ASKED = frozenset(code for codes in _WHY.values() for code in codes) | frozenset(_MISMATCH)


@lean_dataclass
class Row:
    name: str
    values: list  # one per world size asked for (a single one when none was)
    source: str  # the columns' common source, or each column's, labelled
    sources: list = field(default_factory=list)  # one per column
    unit: str = ""  # what the numbers count when it is not the row's usual unit ("tokens": a token budget)


@lean_dataclass
class Explanation:
    title: str  # the config, and the launch that applied to it
    framework: str
    rows: list
    columns: tuple = ()  # the columns' labels when they are the launch lines that run it, not W asked for
    config: str = ""  # the real path of the config explained (a folder's explanations name each once)


def explain(path: str, settings: Settings, world_sizes: tuple, global_batch: Optional[int],
            as_run: bool = True) -> list:
    """One Explanation per plan the file gives (a script may launch several configs). A config that launch
    lines in view run is explained as they run it, a column for each with its W, as `check` judges it;
    `-w` asks "what if" instead, and `as_run=False` explains the file as written (`explain --compare`,
    which explains the scripts that run it on their own)."""
    if not world_sizes and as_run:
        from .discover import display_path

        jobs = plans_of(path, settings, global_batch)
        if jobs and all(note is not None and note.path != display_path(path) for note, _ in jobs):
            return [_jobs_explained(jobs, settings)]  # the launch lines of other files run it
    runs = []
    for world in world_sizes or (None,):
        options = Options(world_size=world, global_batch=global_batch, world_size_wins=world is not None)
        runs.append(plan_file(path, settings, options))
    labels = tuple(f"W={w}" for w in world_sizes) if len(world_sizes) > 1 else ()
    explanations = []
    for index, (launch_note, plan) in enumerate(runs[0]):
        per_w = [run[index][1] for run in runs if index < len(run)]
        explanations.append(Explanation(_launched_title(plan, launch_note), plan.framework,
                                        _rows(per_w, labels, settings), config=_real(plan)))
    return explanations


def plans_of(path: str, settings: Settings, global_batch: Optional[int] = None) -> list:
    """(launch note, plan) of each job that runs the file at `path`: its own plans, or, for a config with
    one plan that launch lines in view run, that plan as each of them runs it (with its W)."""
    import os

    from .launching.callers import running

    options = Options(global_batch=global_batch, whole_project=True)
    own = plan_file(path, settings, options)
    if len(own) != 1 or own[0][0] is not None or own[0][1].framework == "launch":
        return own
    real, selected = os.path.realpath(path), own[0][1].document.selected
    jobs = []
    for caller in sorted(running(path) or ()):
        for note, plan in plan_file(caller, settings, options):
            if note is not None and os.path.realpath(plan.document.path) == real and plan.document.selected == selected:
                jobs.append((note, plan))
    return jobs or own


def _launched_title(plan: TrainingPlan, note) -> str:
    title = plan.document.path + (f", config {plan.document.selected}" if plan.document.selected else "")
    if note is not None:
        title += f", as {note.message.replace('launched here', 'launched')} at {note.path}:{note.span.line}"
    return title


def _jobs_explained(jobs: list, settings: Settings) -> Explanation:
    """One table for the jobs that run one config: a column for each launch line, labelled by its place."""
    plans = [plan for _, plan in jobs]
    if len(jobs) == 1:
        return Explanation(_launched_title(plans[0], jobs[0][0]), plans[0].framework, _rows(plans, (), settings),
                           config=_real(plans[0]))
    labels = tuple(f"{note.path}:{note.span.line}" for note, _ in jobs)
    title = f"{plans[0].document.path}, as {len(jobs)} launch lines run it: " + ", ".join(labels)
    return Explanation(title, plans[0].framework, _rows(plans, labels, settings), labels, _real(plans[0]))


def _real(plan: TrainingPlan) -> str:
    import os

    return os.path.realpath(plan.document.path) + (f"#{plan.document.selected}" if plan.document.selected else "")


class _Columns:
    """The plans of one config, one per world size, with what each column needs to say."""

    def __init__(self, plans: list, labels: tuple, settings: Optional[Settings]):
        self.plans = plans
        self.labels = labels if len(labels) == len(plans) else ()
        self.project = settings.source if settings is not None else ""
        self._findings: list = [None] * len(plans)

    def row(self, name: str, values: list, sources: list) -> Row:
        """A row; its source is the columns' one, or each column's, labelled with its W."""
        if len(set(sources)) <= 1 or not self.labels:
            return Row(name, values, sources[0] if sources else "", list(sources))
        return Row(name, values, "; ".join(f"{label}: {s}" for label, s in zip(self.labels, sources)), list(sources))

    def facts(self, name: str, facts: list, missing: str = "not set", why: tuple = ()) -> Row:
        values, sources = [], []
        for index, fact in enumerate(facts):
            known = fact is not None and fact.value is not None
            values.append(_plain(fact.value) if known else "?")
            sources.append(self.where(fact) if fact is not None else self.failure(index, why) or missing)
        return self.row(name, values, sources)

    def where(self, fact: Fact) -> str:
        if fact.span is not None and fact.origin is Origin.FILE:
            path = fact.span.path or ""
            assumed = getattr(fact.node, "assumed", "")  # an OmegaConf oc.env default
            return f"{fact.key}, {path + ':' if path else 'line '}{fact.span.line}" + (f" ({assumed})" if assumed else "")
        if fact.origin is Origin.DEFAULT:
            return f"{fact.key}: framework default"
        if fact.origin is Origin.LAUNCH:
            return fact.provenance + (f" ({fact.span.path}:{fact.span.line})" if fact.span is not None and fact.span.path else "")
        if fact.origin is Origin.DIRECTIVE and fact.span is not None:
            return f"{fact.key}: {fact.provenance} ({fact.span.path + ':' if fact.span.path else 'line '}{fact.span.line})"
        if fact.origin is Origin.PROJECT and self.project:
            return f"{fact.key}: {fact.provenance} ({self.project})"
        return f"{fact.key}: {fact.provenance}"

    def findings(self, index: int) -> dict:
        """code -> the first message of each rule `_ASKED` names that fires on the column's plan."""
        if self._findings[index] is None:
            from batchlint.rules import for_plan

            # Without the stated target: its comparison is a row of its own (`_target`).
            plan = replace(self.plans[index], target_global_batch=None)
            found: dict = {}
            for rule in for_plan(plan):
                if rule.code in _ASKED:
                    for finding in rule.findings(plan):
                        found.setdefault(rule.code, finding.message)
            self._findings[index] = found
        return self._findings[index]

    def failure(self, index: int, codes: tuple, lead: str = "fails") -> str:
        """Why a value of this column cannot be computed: the division that fails, as its rule says it."""
        found = self.findings(index) if codes else {}
        message = next((found[code] for code in codes if code in found), "")
        return f"{lead}: {message}" if message else ""


# A batch counted in tokens (TrainingPlan.unit): the rows named for what they count.
_TOKEN_ROWS = {
    "micro batch (per GPU)": "tokens per micro-step (per dp rank)",
    "declared global batch": "declared tokens per optimizer step",
    "global batch (sequences/step)": "tokens per optimizer step",
    "sequence length": "tokens per micro-batch (split by sequence/context parallelism)",
}


def _rows(plans: list, labels: tuple = (), settings: Optional[Settings] = None) -> list:
    rows = _sequence_rows(plans, labels, settings)
    if plans[0].unit != "tokens":
        return rows
    for row in rows:
        if row.name in _TOKEN_ROWS:
            row.name, row.unit = _TOKEN_ROWS[row.name], "tokens"
            row.source, row.sources = _in_tokens(row.source), [_in_tokens(s) for s in row.sources]
    # global x sequence length counts tokens only when the global batch counts sequences.
    return [row for row in rows if row.name != "tokens per optimizer step" or row.unit]


def _in_tokens(source: str) -> str:
    return source.replace("= micro batch x", "= tokens per micro-step x").replace(
        "= declared global batch", "= declared tokens per optimizer step")


def _sequence_rows(plans: list, labels: tuple = (), settings: Optional[Settings] = None) -> list:
    cols = _Columns(plans, labels, settings)
    first = plans[0]
    dynamic = first.micro_tokens is not None
    derived = "derived from the declared global batch: needs W" if first.derived_from_global == "micro_batch" else None
    rows = [_dynamic_micro(cols) if dynamic else cols.facts("micro batch (per GPU)", [p.micro() for p in plans],
                                                            missing=derived or "not set", why=_WHY["micro"])]
    if dynamic:
        rows.append(cols.row("gradient accumulation", ["dynamic"] * len(plans),
                             ["dynamic: as many micro-steps as the mini batch needs micro batches of the token budget"]
                             * len(plans)))
    else:
        rows.append(cols.facts("gradient accumulation", [p.accumulation() for p in plans], missing="unknown",
                               why=_WHY["accumulation"]))
    rows.append(cols.facts("world size W", [p.world_size for p in plans], missing="unknown: pass --world-size"))
    for short in first.parallel:
        rows.append(cols.facts(f"{_DEGREES.get(short, short)} degree", [p.parallel.get(short) for p in plans]))
    rows.append(cols.facts("data parallel dp", [p.data_parallel for p in plans], why=_WHY["dp"],
                           missing="unknown: needs W" if not _known(first.world_size) else "unknown"))
    if first.declared_global_batch is not None:
        rows.append(_declared(cols))
    # A layout or global batch the framework refuses to start with produces no global batch.
    refused = [cols.failure(i, _REFUSED) for i in range(len(plans))]
    globals_ = [None if refusal else p.effective_global_batch() for p, refusal in zip(plans, refused)]
    rows.append(_global(cols, globals_))
    if any(p.target_global_batch is not None for p in plans):
        rows.append(_target(cols, globals_))
    rows.append(cols.facts("sequence length", [p.seq_len for p in plans]))
    rows.append(_tokens(cols, globals_))
    if dynamic:
        rows.append(cols.row("micro-steps per optimizer step", ["dynamic"] * len(plans),
                             ["= gradient accumulation"] * len(plans)))
    else:
        steps = [a.value if a is not None and a.known else "?" for a in (p.accumulation() for p in plans)]
        rows.append(cols.row("micro-steps per optimizer step", steps, ["= gradient accumulation"] * len(plans)))
    if first.rl is not None:
        rows += _rl_rows(cols, globals_)
    packing = first.packing
    if packing is not None:
        rows.append(cols.row("packing", [_plain(packing.value)] * len(plans), [cols.where(packing)] * len(plans)))
    return rows


def _dynamic_micro(cols: _Columns) -> Row:
    """Dynamic batching: a micro batch is a token budget, not a number of sequences; said in the row."""
    values, sources = [], []
    for plan in cols.plans:
        budget = plan.micro_tokens
        values.append(budget.value if budget is not None and budget.known else "?")
        sources.append((cols.where(budget) if budget is not None else "not set")
                       + ": dynamic batching packs each micro batch up to this many tokens per GPU"
                       + (f" ({budget.detail})" if budget is not None and budget.detail else "")
                       + ", so its number of sequences varies")
    row = cols.row("micro batch (per GPU)", values, sources)
    row.unit = "tokens"
    return row


def _declared(cols: _Columns) -> Row:
    """The global batch the config declares; where the framework asserts it equals the
    product instead of deriving a factor from it, the rule's verdict when it does not."""
    row = cols.facts("declared global batch", [p.declared_global_batch for p in cols.plans])
    sources = list(row.sources)
    for index, plan in enumerate(cols.plans):
        if plan.derived_from_global is None:
            verdict = cols.failure(index, _MISMATCH, lead="but")
            if verdict:
                sources[index] += f"; {verdict}"
    return cols.row(row.name, row.values, sources)


def _global(cols: _Columns, globals_: list) -> Row:
    values, sources = [], []
    for index, (plan, glob) in enumerate(zip(cols.plans, globals_)):
        values.append(glob[0] if glob else "?")
        if glob:
            sources.append(_formula(plan))
        else:
            sources.append(cols.failure(index, _REFUSED + _WHY["global"]) or _missing(plan))
    return cols.row("global batch (sequences/step)", values, sources)


def _missing(plan: TrainingPlan) -> str:
    """Which factor of micro x accumulation x dp is not known."""
    accumulation = plan.accumulation()
    parts = [name for name, fact in (("micro batch", plan.micro_batch), ("gradient accumulation", accumulation),
                                     ("dp", plan.data_parallel)) if not _known(fact)]
    if "dp" in parts and not _known(plan.world_size):
        parts[parts.index("dp")] = "dp (W: pass --world-size)"
    return "unknown: needs " + (", ".join(parts) if parts else "micro batch, accumulation and dp")


def _target(cols: _Columns, globals_: list) -> Row:
    """The global batch the user states (--global-batch, a directive, the project config), beside the produced one."""
    values, sources = [], []
    for plan, glob in zip(cols.plans, globals_):
        target = plan.target_global_batch
        values.append(target.value if target is not None else "?")
        if target is None:
            sources.append("not stated")
        elif not glob:
            sources.append(f"{cols.where(target)}; the global batch is not known")
        elif glob[0] == target.value:
            sources.append(f"{cols.where(target)}; the global batch matches it")
        else:
            sources.append(f"{cols.where(target)}; the global batch is {glob[0]:,}, not this")
    return cols.row("stated target global batch", values, sources)


def _rl_rows(cols: _Columns, globals_: list) -> list:
    """RL training: what a generation round produces and how the optimizer steps consume it."""
    rls = [p.rl for p in cols.plans]
    rows = [cols.facts(name, [getattr(rl, name_) for rl in rls]) for name, name_ in (
        ("samples per prompt", "samples_per_prompt"), ("prompts per generation round", "prompts_per_step"),
        ("generation batch (sequences)", "generation_batch"), ("mini batch (per optimizer step)", "mini_batch"))
        if getattr(rls[0], name_) is not None]
    rows.append(cols.row("sequences per optimizer step", [g[0] if g else "?" for g in globals_],
                         ["= global batch (sequences/step)"] * len(rls)))
    steps, sources = [], []
    for rl, glob in zip(rls, globals_):
        batch, set_ = rl.generation_batch, rl.optimizer_steps
        if set_ is not None:  # the framework sets the number of steps, not the mini batch
            steps.append(set_.value if set_.known else "?")
            where = cols.where(set_)  # a derived fact's provenance holds its detail already
            sources.append(where + (f" ({set_.detail})" if set_.detail and set_.detail not in where else ""))
            continue
        fits = glob and batch is not None and batch.positive and glob[0] > 0 and batch.value % glob[0] == 0
        steps.append(batch.value // glob[0] if fits else "?")
        sources.append("= generation batch / sequences per optimizer step (x epochs)")
    rows.append(cols.row("mini-batches (optimizer steps) per generation round", steps, sources))
    for role in rls[0].accumulation:
        if role != "actor":
            rows.append(cols.facts(f"micro-steps per mini-batch ({role})", [rl.accumulation.get(role) for rl in rls],
                                   missing="unknown"))
    for role in rls[0].micro_batch:
        if role != "actor":
            rows.append(cols.facts(f"micro batch ({role})", [rl.micro_batch.get(role) for rl in rls]))
    return rows


def _known(fact: Optional[Fact]) -> bool:
    return fact is not None and fact.known


def _plain(value):
    """A value as the table and its JSON show it: numbers, text and booleans as they
    are; anything else a config can hold (a date, an imported name, a list) as text."""
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def _formula(plan: TrainingPlan) -> str:
    if plan.declared_global_batch is not None and plan.derived_from_global:
        return "= declared global batch (accumulation derived from it)"
    if plan.produced_global_batch() is None and plan.step_batch is not None:
        return f"= {plan.step_batch.detail or plan.step_batch.key} (fixed, whatever the micro batches hold)"
    return "= micro batch x accumulation x dp"


def _tokens(cols: _Columns, globals_: list) -> Row:
    values = []
    for plan, glob in zip(cols.plans, globals_):
        seq = plan.seq_len
        values.append(glob[0] * seq.value if glob and seq is not None and seq.known else "?")
    packed = cols.plans[0].packing is not None and cols.plans[0].packing.value is True
    how = "= global batch x sequence length" + ("" if packed else " (an upper bound: without packing sequences are shorter)")
    return cols.row("tokens per optimizer step", values, [how] * len(values))


def as_text(explanations: list, world_sizes: tuple) -> str:
    if not explanations:
        return "batchlint: no training config recognised\n"
    out = []
    for explanation in explanations:
        out.append(f"{explanation.title}  [{explanation.framework}]")
        labels = list(explanation.columns) or ([f"W={w}" for w in world_sizes] if len(world_sizes) > 1 else ["value"])
        headers = ["", *labels]
        table = [headers] + [[row.name, *(_show(v) + (f" {row.unit}" if row.unit and v != "?" else "") for v in row.values)]
                             for row in explanation.rows]
        widths = [max(len(str(line[i])) for line in table if i < len(line)) for i in range(len(headers))]
        for index, line in enumerate(table):
            cells = [str(cell).ljust(widths[i]) if i == 0 else str(cell).rjust(widths[i]) for i, cell in enumerate(line[: len(headers)])]
            text = "  " + "  ".join(cells)
            if index == 0:
                out.append(text.rstrip())
                continue
            row = explanation.rows[index - 1]
            distinct = len(set(row.sources)) > 1 and len(row.sources) == len(labels) > 1
            if not distinct:
                out.append(f"{text}  {row.source}")
                continue
            # Each column its own source, one line each, under the first.
            pad = " " * len(text)
            out += [f"{text if i == 0 else pad}  {label}: {source}" for i, (label, source) in enumerate(zip(labels, row.sources))]
        out.append("")
    return "\n".join(out)


def as_json(explanations: list, world_sizes: tuple) -> list:
    return [
        {
            "config": e.title,
            "framework": e.framework,
            "world_sizes": list(world_sizes) or [None],
            **({"columns": list(e.columns)} if e.columns else {}),
            "rows": [{"name": r.name, "values": r.values, "source": r.source, "sources": r.sources,
                      **({"unit": r.unit} if r.unit else {})} for r in e.rows],
        }
        for e in explanations
    ]


def _show(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
