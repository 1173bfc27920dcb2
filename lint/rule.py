"""What a rule is, what it yields, and the examples that test it.

A rule is one module in rules/ that defines `RULE = Rule(...)`. Its docstring
holds the documentation (ruff's sections); its examples are run by the suite.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .document import Span
from .lean_dataclass import field, lean_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from .plan import Subject, TrainingPlan


SEVERITIES = ("error", "warning", "info")


@lean_dataclass(frozen=True)
class Related:
    """A second place a finding depends on (another key, another file)."""

    message: str
    span: Optional[Span]  # None (a default's place): the finding leaves it out
    path: Optional[str] = None  # None: the same file


# How the note naming the launch line a finding was reached through begins ("launched here by
# torchrun with W=8"): the job a finding belongs to (run.unique reports a problem once across jobs).
LAUNCH_NOTE = "launched here"


@lean_dataclass(frozen=True)
class Edit:
    """Replace the text under `span` with `replacement` (an empty span inserts).
    `--fix` applies it; a rule offers one only when the fix is unambiguous."""

    span: Span
    replacement: str
    path: Optional[str] = None  # None: the file of the finding (or span.path)


@lean_dataclass(frozen=True)
class Finding:
    """What a rule's check yields; the engine adds code, path and framework.

    `message` is one clause of at most about 100 characters, the verdict with its decisive numbers
    ("global batch 32, was 128 at sp = 1"); the arithmetic and where each number came from go in
    `notes`, one short sentence each; `fix` is the `help:` line, the change that fixes it."""

    span: Optional[Span]  # None: no written value to point at (then line 1)
    message: str  # the verdict with the numbers that made it
    fix: str  # the change that fixes it
    severity: Optional[str] = None  # overrides the rule's default
    related: tuple[Related, ...] = ()  # notes at other places
    edits: tuple[Edit, ...] = ()  # the fix, mechanically
    premise: str = ""  # the name of the rule's Premise this verdict rests on, when it has several
    notes: tuple[str, ...] = ()  # the arithmetic and the sources of its numbers, without a place

    def __post_init__(self) -> None:
        # A finding about values no file writes (framework defaults, a W from the
        # command line) has no span of its own: it is reported at the top of the
        # file rather than lost. Rules should point at a written value when there is one.
        if self.span is None:
            object.__setattr__(self, "span", Span.point(1))
        # Related places without a span (a default) cannot be shown: they are left out.
        if any(r is None or r.span is None for r in self.related):
            object.__setattr__(self, "related", tuple(r for r in self.related if r is not None and r.span is not None))


@lean_dataclass(frozen=True)
class Example:
    """A config the suite lints: `flagged` lists the lines the rule must report
    (empty for a clean twin). A flagged example pins what its first finding says (`message`,
    `fix`) and, where the rule offers edits, the file `--fix` makes of it (`fixed`)."""

    filename: str
    text: str
    flagged: tuple[int, ...] = ()
    message: str = ""  # the first finding's message, exactly
    fix: str = ""  # the first finding's help, exactly
    fixed: Optional[str] = None  # the file after `--fix` (`--unsafe-fixes` for an unsafe rule)
    world_size: Optional[int] = None
    global_batch: Optional[int] = None
    # Files written beside it, ((name, text), ...): what it names (a launch script's launcher config),
    # or what pins the framework's release (a requirements.txt: lint/premise.py).
    files: tuple = ()
    severity: Optional[str] = None  # the severity every flagged line must have, where it is pinned
    # The files as they were at the commit before, ((name, text), ...): the example is then linted with
    # `--since` that commit, as a change (the pre-commit hook's staged files against HEAD).
    before: tuple = ()


@lean_dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: str
    check: Callable[..., Iterable[Finding]]  # check(plan), or check(plan, subject) with a subject
    # The typed part of a plan the rule judges (a framework's settings: lint/plan.py Subject): the
    # engine runs the rule only where `subject.of(plan)` finds it, and passes it to `check`.
    subject: Optional[type[Subject]] = None
    # Kept only by rules whose subject is one framework's document; a rule about
    # facts says what it reads in `needs` instead.
    frameworks: Optional[tuple] = None
    examples: tuple = ()
    doc: str = field(default="", repr=False)
    # The plan facts the check reads (TrainingPlan fields, "parallel.tp",
    # "rl.samples_per_prompt"): the engine runs the rule on a plan only when
    # every one is present (see TrainingPlan.has), and "applies to" is computed
    # from which adapters fill them (lint/applies.py).
    needs: tuple = ()
    # Its edits may change what a working config trains (a hyperparameter it guesses from a
    # comment), so `--fix` applies them only with `--unsafe-fixes` (ruff's fix safety).
    unsafe_fix: bool = False
    # When the verdict holds (lint/premise.py): the releases of the framework that refuse as the rule
    # says, each with its sources; or, in `every_release`, why the arithmetic is the same in every
    # release. Every rule declares one of the two (tests/test_premises.py).
    premises: tuple = ()
    every_release: str = ""
    # Judges the names a config may hold (unknown, removed or moved keys): silent on a config a
    # program of the project's own reads (lint/own_loader.py), whose names are that program's.
    judges_keys: bool = False

    @property
    def applies(self) -> Optional[tuple[str, ...]]:
        """The frameworks whose plans the rule may judge (None: any whose plans hold its needs): its
        subject's, else those it names."""
        return self.subject.FRAMEWORKS if self.subject is not None else self.frameworks

    def applies_to(self, framework: str) -> bool:
        applies = self.applies
        return applies is None or framework in applies

    def runs_on(self, plan: TrainingPlan) -> bool:
        """Whether the engine runs this rule on `plan` (its subject aside: `findings` asks for that)."""
        return self.applies_to(plan.framework) and all(plan.has(fact) for fact in self.needs)

    def findings(self, plan: TrainingPlan) -> Iterable[Finding]:
        """What the check finds in `plan`: nothing where the plan holds no subject of the rule."""
        if self.subject is None:
            return self.check(plan)
        subject = self.subject.of(plan)
        return () if subject is None else self.check(plan, subject)

    @property
    def documentation(self) -> str:
        import inspect  # here: only the rule pages read it, and `inspect` is a third of a lint's standard imports

        return inspect.cleandoc(self.doc or "")


def closest(word: str, candidates: Iterable[str], cutoff: float) -> Optional[str]:
    """The candidate most like `word` (difflib's ratio at least `cutoff`), for a "did you mean". difflib is
    imported here, when a near miss is looked for: most lints look for none, and it is not cheap to import."""
    import difflib

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return found[0] if found else None


def splitting_degrees(counts: tuple, limit: int, shown: int = 4, budget: int = 10_000) -> tuple:
    """The degrees above 1 and at most `limit` that divide every one of `counts` (heads, groups), largest
    first, at most `shown` of them, for a fix to suggest; the search looks at most `budget` candidates down
    from the top, so a value of 30 digits costs no more than a small one."""
    top = min((limit, *counts))
    found: list = []
    for degree in range(top, max(top - budget, 1), -1):
        if all(count % degree == 0 for count in counts):
            found.append(degree)
            if len(found) == shown:
                break
    return tuple(found)


def largest_divisor(value: int, limit: int, budget: int = 10_000) -> int:
    """The largest divisor of `value` (> 0) that is at most `limit`, for a fix to
    suggest. The search takes at most about 2 x `budget` steps, so a value of 30
    digits costs no more than a small one: past the budget it returns the best
    divisor found (at worst 1, which divides everything)."""
    top = min(value, limit)
    if top < 1:
        return 1
    for candidate in range(top, max(top - budget, 0), -1):
        if value % candidate == 0:
            return candidate
    # Below that window: small divisors q, and their co-divisors value // q.
    best = 1
    for q in range(1, min(budget, top) + 1):
        if value % q == 0:
            partner = value // q
            best = max(best, q, partner if partner <= top else 1)
    return best
