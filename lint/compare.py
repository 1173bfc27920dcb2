"""`batchlint explain --compare REV`: how a change moves the batch arithmetic.

For each config and launch script changed since git revision REV, or reading a
file that changed (a YAML whose linked DeepSpeed JSON changed, a launch script
whose config changed), the `explain` table at REV and now, and the rows whose
value moved. The REV side is computed over the project as it was at REV: the
engine reads through a `project.View` in which each changed file has its REV
content and each file added since does not exist; every other file is the
disk's (unchanged, ignored or in a submodule: the same on both sides).

The revision's files are read as lint/revision.py gives them; the project config
(batchlint.toml) is today's on both sides.
"""

from __future__ import annotations

import os
import re

from . import project, reads, revision
from .discover import display_path
from .explain import _show
from .lazy_pattern import LazyPattern
from .lean_dataclass import field, lean_dataclass
from .revision import CompareError  # noqa: F401 (what compare raises)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


@lean_dataclass
class Moved:
    """One row whose value differs (old None: not a row at REV; new None: not a row now)."""

    name: str
    old: object
    new: object
    source: str  # where the value comes from now (at REV for a deleted config)
    old_source: str = ""
    unit: str = ""
    because: list = field(default_factory=list)  # for a row computed from others: the inputs that moved


@lean_dataclass
class Change:
    path: str  # the file explained
    title: str  # the config, and the launch that applied to it
    framework: str
    status: str  # "changed", "new" or "deleted"
    rows: list
    was: str = ""  # the config the launch ran at REV, when it was another


def compare(rev: str, paths: tuple, settings, world_sizes: tuple = (), global_batch: Optional[int] = None) -> tuple:
    """(commit, [Change]) for the configs under `paths` (default: the working folder) whose
    numbers moved since `rev`. Raises CompareError."""
    folder = os.path.abspath(paths[0] if paths else ".")
    at = revision.at(rev, folder)
    assert at is not None  # only a first commit's HEAD gives None, when asked to
    commit, changed = at.commit, at.changed
    if not changed:
        return commit, []
    scope = [os.path.realpath(p) for p in (paths or (".",))]
    inside = {p: s for p, s in changed.items() if any(p == r or p.startswith(r.rstrip(os.sep) + os.sep) for r in scope)}

    def explain(path: str) -> list:
        from .run import explain as explaining

        try:
            return explaining(path, settings, world_sizes, global_batch, as_run=False)  # each script says its jobs
        except OSError:
            return []

    from .discover import discover
    from .run import base_settings

    boundary = project.find_project(list(paths) or ["."], base_settings(settings))
    now: dict = {}
    for path in discover(list(paths) or ["."], settings, project=boundary).files:
        with reads.tracking(digests=False) as touched:
            explanations = explain(path)
        read = {os.path.realpath(p) for p in touched.paths} | {os.path.realpath(path)}
        if not read.isdisjoint(changed):
            now[path] = explanations
    for real, status in sorted(inside.items()):
        if status == "D":
            now.setdefault(display_path(real), [])
    changes = []
    with at.reading():
        for path in sorted(now, key=display_path):
            before = [] if os.path.realpath(path) in at.view.absent else explain(path)
            changes += _differences(display_path(path), before, now[path])
    # A config a launch line in view runs is shown once: as that job, whose rows hold the config's own.
    jobs = {change.title.split(_LAUNCHED)[0] for change in changes if _LAUNCHED in change.title}
    return commit, [change for change in changes if _LAUNCHED in change.title or change.title not in jobs]


_LAUNCHED = ", as launched "


# -- what moved ---------------------------------------------------------------------------------

def _key(title: str) -> str:
    """An explanation's identity across the two sides: the launch that applied to it, else the
    config; without the launch line's number and W (both may be what moved), nor, for a launch,
    the config it runs (a launch that now runs a renamed config is the same launch)."""
    launch = title.find(", as launched ")
    return re.sub(r":\d+$", "", re.sub(r" with W=\S+", "", title[launch:] if launch >= 0 else title))


def _keyed(explanations: list) -> dict:
    keyed: dict = {}
    seen: dict = {}
    for e in explanations:
        key = _key(e.title)
        seen[key] = seen.get(key, 0) + 1
        keyed[(key, seen[key])] = e
    return keyed


def _differences(path: str, before: list, after: list) -> list:
    old, new = _keyed(before), _keyed(after)
    changes = []
    for key in list(new) + [k for k in old if k not in new]:
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            e = a if a is not None else b
            assert e is not None  # a key of one side at least
            rows = [Moved(r.name, _first(r) if a else None, None if a else _first(r), r.sources[0] if r.sources else r.source,
                          unit=r.unit) for r in e.rows if _first(r) != "?"]
            changes.append(Change(path, e.title, e.framework, "deleted" if a else "new", rows))
            continue
        rows = _moved(a.rows, b.rows)
        ran = a.title.split(", as launched ")[0]
        was = ran if ran != b.title.split(", as launched ")[0] else ""
        if rows or was:
            changes.append(Change(path, b.title, b.framework, "changed", rows, was))
    return changes


def _first(row):
    return row.values[0] if row.values else "?"


def _moved(before: list, after: list) -> list:
    old = {r.name: r for r in before}
    new = {r.name: r for r in after}
    names = [r.name for r in after] + [r.name for r in before if r.name not in new]
    moved = []
    for name in names:
        a, b = old.get(name), new.get(name)
        va, vb = (_first(a) if a else None), (_first(b) if b else None)
        if va == vb and type(va) is type(vb):
            continue
        shown = b if b is not None else a
        assert shown is not None  # a name of one side at least
        source = _source(shown)
        was = _source(a) if a and b and not _derived(source) and not _derived(_source(a)) else ""
        moved.append(Moved(name, va, vb, source, was if _place(was) != _place(source) else "", unit=shown.unit))
    for m in moved:
        if m.source.startswith("="):  # a formula: what moved in its inputs says why
            m.because = [_cause(i) for i in _inputs(m, moved, {m.name})]
    return moved


def _inputs(row: Moved, moved: list, seen: set) -> list:
    """The moved rows, written somewhere rather than computed, that `row`'s formula or derivation
    names, through the computed rows it names (`dp: derived: W (8) / sequence_parallel_size (4)`)."""
    found = []
    for other in moved:
        if other.name in seen or not _named(other, row.source):
            continue
        seen.add(other.name)
        found += _inputs(other, moved, seen) if _derived(other.source) else [other]
    return found


def _named(row: Moved, text: str) -> bool:
    """Whether `text` names `row`: by its name (`micro batch`), its symbol (`dp`, `W`), the last word
    a formula uses (`accumulation`), or the key it is read from (`sequence_parallel_size`)."""
    short = row.name.split(" (")[0]
    last = short.rsplit(" ", 1)[-1]
    names = {short} | ({last} if len(last) <= 2 or last == "accumulation" else set())
    key = row.source.split(",")[0].split(":")[0]
    if key and not _derived(row.source) and re.fullmatch(r"[\w.\-]+", key):
        names.add(key)
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) for name in names)


def _source(row) -> str:
    return row.sources[0] if row.sources else row.source


def _place(source: str) -> str:
    """A source without its numbers: a value that moved, or a line that moved, is not a new source."""
    return re.sub(r"\d+", "#", source)


def _derived(source: str) -> bool:
    """A row computed from other rows: a formula (`= micro batch x accumulation x dp`), or a
    derivation that names its inputs (`dp: derived: W (8) / sequence_parallel_size (4)`)."""
    return source.startswith("=") or ": derived:" in source


_PLACE = LazyPattern(r"^[^,:()]+, (line \d+|\S+:\d+)")  # `key, line 12`, `key, ds.json:3`


def _cause(m: Moved) -> str:
    """An input that moved, by the place it is written when it has one: `sequence_parallel_size, line 12: 1 -> 4`."""
    place = _PLACE.match(m.source)
    return f"{place.group(0) if place else m.name}: {_value(m.old)} -> {_value(m.new)}"


def _value(value, unit: str = "") -> str:
    if value is None:
        return "none"
    return _show(value) + (f" {unit}" if unit and value != "?" else "")


# -- output ---------------------------------------------------------------------------------------

def as_text(changes: list) -> str:
    out = []
    for change in changes:
        status = f"  (ran {change.was})" if change.was else "" if change.status == "changed" else f"  {change.status}"
        out.append(f"{change.title}  [{change.framework}]{status}")
        cells = [(m.name, _cell(change, m), _why(m)) for m in change.rows]
        name_width = max((len(c[0]) for c in cells), default=0)
        value_width = max((len(c[1]) for c in cells), default=0)
        out += [f"  {name.ljust(name_width)}  {value.rjust(value_width)}   ({why})" for name, value, why in cells]
        if not cells:
            out.append("  the same numbers")
        out.append("")
    from .report import printable

    return "\n".join(printable(line) for line in out)


def _cell(change: Change, m: Moved) -> str:
    if change.status == "new":
        return _value(m.new, m.unit)
    if change.status == "deleted":
        return _value(m.old, m.unit)
    return f"{_value(m.old, m.unit)} -> {_value(m.new, m.unit)}"


def _why(m: Moved) -> str:
    if m.because:
        return "; ".join(m.because)
    return m.source + (f"; was {m.old_source}" if m.old_source else "")


def as_json(changes: list) -> list:
    return [{"path": c.path, "config": c.title, **({"was": c.was} if c.was else {}), "framework": c.framework,
             "status": c.status,
             "rows": [{"name": m.name, "old": m.old, "new": m.new, "source": m.source,
                       **({"old_source": m.old_source} if m.old_source else {}),
                       **({"unit": m.unit} if m.unit else {}),
                       **({"because": m.because} if m.because else {})} for m in c.rows]}
            for c in changes]


def as_markdown(changes: list, commit: str) -> str:
    """A table for a job summary; empty when nothing moved. Cells are escaped: a config's
    text must not become markup (a `|` a new column, `<` a tag)."""
    if not changes:
        return ""
    lines = [f"### batchlint: batch arithmetic moved since `{commit[:12]}`", "",
             "| config | | before | after | from |", "| --- | --- | ---: | ---: | --- |"]
    for change in changes:
        status = f", ran `{_md(change.was, code=True)}`" if change.was else \
            "" if change.status == "changed" else f", **{change.status}**"
        head = f"`{_md(change.title, code=True)}` ({_md(change.framework)}{status})"
        if not change.rows:
            lines.append(f"| {head} | | | | the same numbers |")
        for index, m in enumerate(change.rows):
            old = "" if m.old is None else _md(_value(m.old, m.unit))
            new = "" if m.new is None else _md(_value(m.new, m.unit))
            lines.append(f"| {head if index == 0 else ''} | {_md(m.name)} | {old} | {new} | "
                         f"{_md(_why(m)).replace(' -&gt; ', ' → ')} |")
    return "\n".join(lines) + "\n"


def _md(text: str, code: bool = False) -> str:
    from .report import printable

    text = printable(str(text)).replace("\n", " ").replace("|", "\\|")
    if code:
        return text.replace("`", "'")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*").replace("_", "\\_") \
        .replace("`", "\\`").replace("[", "\\[")
