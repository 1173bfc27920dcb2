"""The keys a framework's config accepts, release by release, and which set a rule judges by.

A generated `<framework>_keys.py` holds one table for all the releases it embeds:
each dotted key with the releases that have it (`"*"` all, `"0.2..0.4.1"` a run,
`"0.5.0.."` from there on, comma-separated runs), so releases share their keys.
`in_force` picks the set for the file being linted (lint/versions.py finds the
release): a copy of the framework inside the project is read from its own source;
a known release embedded here gives its set; a known release not embedded gives
none (rules stay silent); an unknown one gives the union of every embedded
release, so a key that any release had is never reported then.

The readers below (dotted keys of YAML mappings, fields of nested dataclasses) are
what the generators in tools/ and a project's copy of a framework share.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from . import versions
from .lean_dataclass import lean_dataclass
from .project import ProjectView

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Optional


class KeySets:
    """releases: ((release, what it was read from), ...) oldest first; table: key -> releases."""

    def __init__(self, releases: tuple, table: dict):
        self.releases = releases
        self.names = tuple(name for name, _ in releases)
        self.table = table
        self._sets: dict = {}

    def has(self, release: str) -> Optional[str]:
        """The embedded release equal to `release` (`0.2` is `0.2.0`), or None."""
        key = versions.version_key(release)
        return next((name for name in self.names if key is not None and versions.version_key(name) == key), None)

    def keys(self, release: str) -> frozenset:
        """Every key of an embedded release, in table order."""
        if release not in self._sets:
            self._sets[release] = frozenset(k for k, spans in self.table.items() if release in self._expand(spans))
        return self._sets[release]

    @property
    def union(self) -> frozenset:
        return frozenset(self.table)

    def ordered(self, release: str) -> list:
        have = self.keys(release)
        return [k for k in self.table if k in have]

    def _expand(self, spans: str) -> set:
        found: set = set()
        for span in spans.split(","):
            span = span.strip()
            if span == "*":
                return set(self.names)
            if ".." in span:
                first, _, last = span.partition("..")
                lo = self.names.index(first) if first else 0
                hi = self.names.index(last) if last else len(self.names) - 1
                found.update(self.names[lo:hi + 1])
            else:
                found.add(span)
        return found


def spans(present: list, names: tuple) -> str:
    """The table notation of the releases in `present` (a generator's inverse of _expand)."""
    if len(present) == len(names):
        return "*"
    marks = [name in present for name in names]
    runs, i = [], 0
    while i < len(names):
        if not marks[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(names) and marks[j + 1]:
            j += 1
        first = "" if i == 0 else names[i]
        last = "" if j == len(names) - 1 else names[j]
        runs.append(names[i] if i == j else f"{first}..{last}")
        i = j + 1
    return ",".join(runs)


@lean_dataclass(frozen=True)
class InForce:
    """The keys a rule judges by, and how its message names them.

    named: "<title> 0.3.1 (pinned in requirements.txt:4)", or when the release is
    unknown (`known` False, `keys` every embedded release's) "no <title> release
    from 0.1 to 0.8 (which one this project runs is unknown)", to start a sentence
    about a key none of them has; release: the embedded release judged by."""

    keys: frozenset
    named: str
    known: bool
    release: Optional[str] = None
    copy: Optional[str] = None  # the folder of the framework's copy the keys were read from

    def holds(self, module: Optional[str], view: Optional[ProjectView] = None) -> bool:
        """Whether a launch line's module (`pkg.trainer.main`) is one the keys are of: any,
        unless they come from a copy in the project that lacks that module (the line then runs
        another release of the framework than the copy in view). Read through `view` (None: the view in force)."""
        if self.copy is None or not module or "/" in module or module.endswith(".py"):
            return True
        relative = module.replace(".", os.sep)
        view = view if view is not None else ProjectView.now()
        return any(view.is_file(os.path.join(self.copy, relative + tail)) for tail in (".py", os.sep + "__init__.py"))


def in_force(dist: versions.Distribution, sets: KeySets, path: str,
             read_copy: Optional[Callable] = None, view: Optional[ProjectView] = None) -> Optional[InForce]:
    """The key set for the file at `path`, None when the release in force is known but
    neither embedded nor readable from a copy (rules are then silent).
    `read_copy(reader) -> frozenset | None` reads a copy's key set from its source: None when the copy
    holds no file to read it from (its keys are then not known: a fork's need not be its release's),
    empty when the file is there but gives none (judged by the copy's release, where it is known)."""
    found = versions.release(dist, path, sets.names, view)
    keys = None
    if found is not None and found.copy is not None and read_copy is not None:
        keys = read_copy(versions.copy_reader(found.copy, view))
        if keys:
            version = f" {found.version}" if found.version else ""
            return InForce(frozenset(keys), f"{dist.shown}{version} (the copy in {found.where.split(':')[0]})",
                           True, found.version, found.copy)
    if found is not None and found.copy is not None and read_copy is not None and keys is None:
        return None  # a copy whose own config is out of view: a fork's keys need not be its release's
    if found is not None and found.version is not None:
        embedded = sets.has(found.version)
        if embedded is None:
            return None
        return InForce(sets.keys(embedded), f"{dist.shown} {found.version} ({found.how()})", True, embedded)
    if found is not None and found.copy is not None:
        return None  # a copy whose release and keys are both unknown: its keys may be any
    why = found.how() if found is not None else "no pin found"
    return InForce(sets.union, f"no {dist.shown} release from {sets.names[0]} to {sets.names[-1]} "
                               f"(which one this project runs is unknown: {why})", False)


# -- readers a generator and a project's copy share ------------------------------------------

def dotted_keys(node, prefix: str = "") -> set:
    """Every dotted key path of nested mappings (batchlint documents or plain dicts)."""
    items = node if isinstance(node, dict) else getattr(node, "items", None)
    found: set = set()
    if isinstance(items, dict):
        for key, value in items.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            found.add(dotted)
            found |= dotted_keys(value, dotted)
    return found


def _is_dataclass(node: ast.ClassDef) -> bool:
    import ast

    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Name) and target.id == "dataclass") or (
                isinstance(target, ast.Attribute) and target.attr == "dataclass"):
            return True
    return False


def _is_pseudo_field(annotation: ast.expr) -> bool:
    """ClassVar and InitVar annotations are no dataclass fields."""
    import ast

    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = head.id if isinstance(head, ast.Name) else head.attr if isinstance(head, ast.Attribute) else ""
    return name in ("ClassVar", "InitVar")


def dataclass_fields(source: str) -> dict:
    """class name -> [(field, the annotation's bare name or None)] for each
    top-level @dataclass of a module, a base dataclass's fields first. (`ast` is imported here: only a
    project's copy of a framework is read so, and a lint of a data config or a script needs no parser.)"""
    import ast

    classes = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and _is_dataclass(n)]
    found: dict = {}
    for node in classes:
        fields: dict = {}
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in found:
                fields.update(found[base.id])
        for statement in node.body:
            if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                    and not _is_pseudo_field(statement.annotation)):
                annotation = statement.annotation
                fields[statement.target.id] = annotation.id if isinstance(annotation, ast.Name) else None
        found[node.name] = fields
    return {name: list(fields.items()) for name, fields in found.items()}


def nested_fields(source: str, root: str) -> Optional[dict]:
    """The nested key table of dataclass `root`: field -> None, or the table of its dataclass."""
    classes = dataclass_fields(source)
    if root not in classes:
        return None

    def table(name: str, seen: tuple) -> dict:
        return {field: table(kind, seen + (kind,)) if kind in classes and kind not in seen else None
                for field, kind in classes[name]}

    return table(root, (root,))


def flatten(table: dict, prefix: str = "") -> list:
    """A nested key table as dotted paths in order; a nested table's path ends with "."."""
    out = []
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.append(path + ".")
            out += flatten(value, path + ".")
        else:
            out.append(path)
    return out


def nest(paths) -> dict:
    """The inverse of `flatten`."""
    table: dict = {}
    for path in paths:
        parts = path.rstrip(".").split(".")
        node = table
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node.setdefault(parts[-1], {} if path.endswith(".") else None)
    return table
