"""Diagnostic: one finding, located and complete, as reporters print it."""

from __future__ import annotations

from .document import Span, without_surrogates
from .lazy_pattern import LazyPattern
from .lean_dataclass import field, lean_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@lean_dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: str
    message: str
    path: str
    span: Span
    framework: Optional[str] = None
    fix: Optional[str] = None
    related: tuple = field(default=())  # Related, with path filled in
    edits: tuple = field(default=(), compare=False)  # Edit, with path filled in: what --fix applies
    unsafe_fix: bool = field(default=False, compare=False)  # the edits need --unsafe-fixes (Rule.unsafe_fix)
    notes: tuple = ()  # str: the arithmetic, the sources of the numbers, the releases assumed (Finding.notes)

    @property
    def text(self) -> str:
        """Message and fix as one line (formats of one line a finding)."""
        return f"{self.message}; fix: {self.fix}" if self.fix else self.message

    @property
    def detail(self) -> tuple:
        """The lines below the message, as `full` output prints them: `note: ...` each, then `help: ...`."""
        return tuple(f"note: {note}" for note in self.notes) + ((f"help: {self.fix}",) if self.fix else ())

    def sort_key(self) -> tuple:
        # The message last: two findings of one rule at one place come out in one order on every run
        # (the engine sorts a set), so an example can pin the first.
        return (self.path, self.span.line, self.span.column, self.code, self.message)


_LONG_NUMBER = LazyPattern(r"\d{41,}")
MAX_MESSAGE = 2_000


def clean_text(text: str) -> str:
    """A message fit for any output: long digit runs abbreviated (a config may hold a
    number with thousands of digits), lone surrogates replaced, the length bounded."""
    text = _LONG_NUMBER.sub(lambda m: f"{m.group()[:6]}...({len(m.group())} digits)", text)
    text = without_surrogates(text)
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "..."
