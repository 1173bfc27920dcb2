"""What a rule is, what it yields, and the examples that test it.

A rule is one module in rules/ that defines `RULE = Rule(...)`. Its docstring
holds the documentation (ruff's sections); its examples are run by the suite.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from .document import Span

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Related:
    """A second place a finding depends on (another key, another file)."""

    message: str
    span: Span
    path: Optional[str] = None  # None: the same file


@dataclass(frozen=True)
class Edit:
    """Replace the text under `span` with `replacement` (an empty span inserts).
    `--fix` applies it; a rule offers one only when the fix is unambiguous."""

    span: Span
    replacement: str
    path: Optional[str] = None  # None: the file of the finding (or span.path)


@dataclass(frozen=True)
class Finding:
    """What a rule's check yields; the engine adds code, path and framework."""

    span: Span
    message: str  # the verdict with the numbers that made it
    fix: str  # the change that fixes it
    severity: Optional[str] = None  # overrides the rule's default
    related: tuple = ()
    edits: tuple = ()  # Edit: the fix, mechanically


@dataclass(frozen=True)
class Example:
    """A config the suite lints: `flagged` lists the lines the rule must report
    (empty for a clean twin)."""

    filename: str
    text: str
    flagged: tuple = ()
    world_size: Optional[int] = None
    global_batch: Optional[int] = None


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: str
    check: Callable[..., Iterable[Finding]]
    frameworks: Optional[tuple] = None  # None: any framework whose plan has the facts
    examples: tuple = ()
    doc: str = field(default="", repr=False)

    def applies_to(self, framework: str) -> bool:
        return self.frameworks is None or framework in self.frameworks

    @property
    def documentation(self) -> str:
        return inspect.cleandoc(self.doc or "")
