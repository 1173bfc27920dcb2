"""What the server knows between requests, without any LSP: the open buffers, each one's
lint (through the run layer, as `--stdin-filename` lints a buffer: the same findings, the
nearest project config of the file, the same project boundary), which files each lint
read, and so which open documents to lint again when a file changes.

Every open buffer is an overlay while any document is linted: a launch script open
beside the config it runs is linted with the config as the editor shows it, saved or not.
"""

from __future__ import annotations

import os

from .. import run as runs
from ..config import ConfigError
from ..engine import Options
from ..lean_dataclass import field, lean_dataclass
from ..project import keeping, overlaid, read_bytes
from ..sources import format_of
from .positions import Text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# A change to one of these can change the settings of every file below it.
PROJECT_CONFIGS = ("batchlint.toml", "pyproject.toml")
# Bytes of the project's files kept from one lint to the next while their stamps hold (project.keeping):
# each keystroke's lint reads the same scripts, install files and configs again.
KEPT_BYTES = 64 << 20


def key(path: str) -> str:
    """One name per file, whatever way it was reached (a symlink, `..`)."""
    return os.path.realpath(path)


@lean_dataclass
class Document:
    path: str  # as the editor names it (its URI's path)
    uri: str
    text: str
    version: Optional[int] = None


@lean_dataclass
class Linted:
    """One open document's last lint."""

    version: Optional[int]
    diagnostics: list = field(default_factory=list)  # every finding, in this file or another it read
    reads: frozenset = frozenset()  # key() of every file the lint read or looked for
    errors: list = field(default_factory=list)  # why the file could not be linted
    notices: list = field(default_factory=list)


class Session:
    def __init__(self, encoding: str = "utf-16"):
        self.encoding = encoding
        self.open: dict = {}  # key -> Document
        self.linted: dict = {}  # key -> Linted

    # Documents

    def put(self, document: Document) -> None:
        self.open[key(document.path)] = document

    def close(self, path: str) -> None:
        self.open.pop(key(path), None)
        self.linted.pop(key(path), None)

    def overlay(self) -> dict:
        return {doc.path: doc.text.encode("utf-8", "surrogatepass") for doc in self.open.values()}

    def dependants(self, path: str) -> list:
        """The open documents whose last lint read `path` (a DeepSpeed JSON a config links, the
        config a launch script runs), or every one when `path` is a project config."""
        changed = key(path)
        if os.path.basename(changed) in PROJECT_CONFIGS:
            return [k for k in self.open if k != changed]
        return [k for k, linted in self.linted.items() if changed in linted.reads and k != changed and k in self.open]

    # Linting

    def settings(self, path: str):
        """The settings of `path` as the CLI gives them without options: its nearest project config."""
        return runs.settings_for(None).for_path(path)

    def lint(self, name: str) -> Linted:
        """Lint the open document `name` (a key) from its buffer; remembered until the next lint."""
        doc = self.open[name]
        linted = Linted(doc.version)
        try:
            settings = runs.settings_for(None)
            if settings.for_path(doc.path).excludes(doc.path):  # as --force-exclude: an editor names every file
                self.linted[name] = linted
                return linted
            request = runs.Request((), settings, Options(digests=False),
                                   stdin=(doc.path, doc.text.encode("utf-8", "surrogatepass")))
            with overlaid(self.overlay()), keeping(KEPT_BYTES):
                run = runs.lint(request)
        except ConfigError as exc:
            linted.errors.append(str(exc))
            self.linted[name] = linted
            return linted
        linted.diagnostics = list(run.diagnostics)
        linted.reads = frozenset(key(p) for r in run.results for p in r.reads) | {name}
        linted.errors, linted.notices = list(run.errors), list(run.notices)
        self.linted[name] = linted
        return linted

    def fresh(self, name: str) -> Optional[Linted]:
        """The lint of the document as its buffer is now (linted again if it changed since)."""
        doc = self.open.get(name)
        if doc is None:
            return None
        linted = self.linted.get(name)
        return linted if linted is not None and linted.version == doc.version else self.lint(name)

    def findings(self) -> dict:
        """key of a file -> the findings in it, from every open document's lint, each once (the
        run layer's order and merge: a config's finding seen again through its launch script is one)."""
        found: dict = {}
        for linted in self.linted.values():
            for d in linted.diagnostics:
                found.setdefault(key(d.path), []).append(d)
        return {path: runs.unique(items) for path, items in found.items()}

    # Text

    def text(self, path: str) -> Optional[Text]:
        """The text of the file at `path` as the editor has it (its buffer, else the file), to place
        a finding in it; None when it cannot be read."""
        doc = self.open.get(key(path))
        if doc is not None:
            return Text(doc.text, format_of(doc.path), self.encoding)
        try:
            raw = read_bytes(path)  # a regular file within the read bound, or nothing
        except OSError:
            return None
        return Text(raw.decode("utf-8-sig", "replace"), format_of(path), self.encoding)
