"""The DeepSpeed config a TrainingArguments config names: `deepspeed: ds_z3.json`.

The name is resolved as a launch from the project would find it: next to the
config, then from the project root (the nearest folder upward holding a
pyproject.toml or .git), then from the working directory, through the project view
the adapter was handed (facts.Outside.project). It is read by batchlint's own JSON
reader, once per file. Anything that is not a readable
JSON file (ms-swift's built-in `zero2`, a missing or broken file) gives None:
no cross-file finding, never a crash. A `deepspeed:` mapping written inline
is the DeepSpeed config itself.
"""

from __future__ import annotations

import os

from .. import per_run, reads
from ..discover import display_path
from ..document import Document, Mapping, Node, ParseError, Scalar
from ..lean_dataclass import lean_dataclass
from ..plan import Fact, Origin
from ..project import ProjectView
from ..sources import format_of, read
from .deepspeed import DeepSpeedSettings, read_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_ROOT_MARKERS = ("pyproject.toml", ".git")


@lean_dataclass(frozen=True)
class LinkedConfig:
    root: Mapping  # the DeepSpeed config
    path: Optional[str]  # its display path; None when written inline in this file
    reference: Node  # the `deepspeed:` value that names it
    settings: DeepSpeedSettings  # the DeepSpeed adapter's typed facts of `root`
    # Set when a launcher built it from its own config and handed it to the program (BuiltDeepSpeed).
    # Its facts' spans then carry the file each is written in.
    built_by: Optional[BuiltBy] = None


def accumulation_added(named: str, span=None) -> Fact:
    """The `gradient_accumulation_steps` of 1 accelerate's DeepSpeedPlugin adds to a DeepSpeed config that
    writes none (utils/dataclasses.py:531-532 @ accelerate 0.20.3, :1237-1238 @ 1.11.0), whether the config
    comes from `accelerate launch --config_file` or from TrainingArguments (transformers 4.30 on)."""
    return Fact(1, f"gradient_accumulation_steps (added by accelerate: {named} writes none)", span, Origin.DEFAULT,
                detail="accelerate utils/dataclasses.py:1237-1238 @ 1.11.0")


@lean_dataclass(frozen=True)
class BuiltBy:
    """How a DeepSpeed config a launcher built is named to the user."""

    name: str  # "the DeepSpeed config accelerate builds from acc.yaml"
    versions: str  # the releases a finding about it assumes
    auto: str  # how to let the Trainer fill a value in (formatted with the DeepSpeed key), at the value


@lean_dataclass(frozen=True)
class BuiltDeepSpeed:
    """The DeepSpeed config a launcher builds from its own config and hands the program
    (facts.Outside.deepspeed), for a program that names none: read already, so `config()`,
    as DeepSpeedLink's, gives it."""

    linked: LinkedConfig
    # What the launcher's plugin refuses when the program names a DeepSpeed config of its own, which
    # then replaces this one (accelerate's `_deepspeed_config_checks`): facts of the launcher's config.
    refused: tuple = ()

    def config(self) -> LinkedConfig:
        return self.linked


@lean_dataclass(frozen=True)
class DeepSpeedLink:
    """A `deepspeed:` value (a name or an inline mapping) and the config that writes it.
    It is resolved only when a rule asks: resolving reads files and may print a notice."""

    reference: Mapping | Scalar  # a string names a file
    config_path: str  # the path of the TrainingArguments config, as linted
    view: ProjectView  # the project as the lint that made the link reads it

    def config(self) -> Optional[LinkedConfig]:
        """The DeepSpeed config the reference names, or None."""
        reference = self.reference
        if isinstance(reference, Mapping):
            return LinkedConfig(reference, None, reference, read_settings(reference))
        path = resolve(reference.value.strip(), os.path.abspath(self.config_path), self.view)
        if path and not self.view.may_read(path):
            reads.notice(f"{self.config_path}:{reference.span.line}: `deepspeed: {reference.value.strip()}` resolves "
                         "outside the project; not read (widen it with `reference-paths` in the project config)")
            return None
        linked = _read(path, self.view) if path else None
        if linked is None:
            return None
        return LinkedConfig(linked.root, linked.path, reference, read_settings(linked.root))


def deepspeed_link(doc: Document, view: ProjectView) -> Optional[DeepSpeedLink]:
    """`doc`'s `deepspeed:` value when it can name a config (a mapping or a string), else None."""
    reference = doc.root.get("deepspeed")
    if isinstance(reference, Mapping) or (isinstance(reference, Scalar) and isinstance(reference.value, str)):
        return DeepSpeedLink(reference, doc.path, view)
    return None


def deepspeed_config(doc: Document, view: ProjectView) -> Optional[LinkedConfig]:
    """The DeepSpeed config `doc`'s `deepspeed:` key names, or None."""
    link = deepspeed_link(doc, view)
    return None if link is None else link.config()


def resolve(name: str, config_path: str, view: ProjectView) -> Optional[str]:
    """The JSON file `name` refers to, seen from the config at `config_path`."""
    if not name or format_of(name) != "json":
        return None
    if os.path.isabs(name):
        return name if view.is_file(name) else None
    folder = os.path.dirname(config_path)
    for base in (folder, project_root(folder), os.getcwd()):
        if base:
            candidate = os.path.join(base, name)
            if view.is_file(candidate):
                return candidate
            reads.record(candidate)  # missing: creating it changes the result
    return None


def project_root(folder: str) -> Optional[str]:
    """The nearest folder from `folder` upward that holds a pyproject.toml or .git."""
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in _ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


_cache: per_run.Cache = per_run.cache()  # (real path, digest) -> the JSON read


def _read(path: str, view: ProjectView) -> Optional[Document]:
    """The file as a Document, memoised per content; None if unreadable."""
    try:
        raw = view.read_bytes(path)
    except OSError:
        reads.record(path)
        return None
    key = (os.path.realpath(path), reads.digest(raw))
    if key not in _cache:
        if len(_cache) >= 256:
            _cache.clear()
        _cache[key] = _load(path, raw)
    return _cache[key]


def _load(path: str, raw: bytes) -> Optional[Document]:
    try:
        return read(display_path(path), raw.decode("utf-8-sig"), "json", from_utf8=True)
    except (UnicodeDecodeError, ParseError):
        return None
