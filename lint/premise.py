"""When a rule's verdict holds: the releases of the framework that refuse (or misbehave) as it says.

A finding that says "the job refuses to start" is a statement about one program at one release.
Each rule declares it (`Rule.premises`), or declares that its arithmetic is the same in every
release (`Rule.every_release`):

    Premise(FRAMEWORK_X, since="0.3.0", until=None,
            source="v0.3.0 recipes/full_finetune_distributed.py:222; v0.6.1 ...:231")

reads "that framework refuses this from 0.3.0 through the newest release checked". The engine's gate
(`judge`) keeps an error or a warning only when every release the project may run lies inside
the window: the release in force where the project says which (lint/versions.py), else every
release users run (`Distribution.releases`, the layouts before the first release included).
Where the verdict differs inside that window the finding is not an error: an info says from which
release on the config is refused, when the window reaches the newest release; otherwise nothing.
"""

from __future__ import annotations

from .lean_dataclass import lean_dataclass
from .versions import Distribution, Release, admits, clauses, release, version_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from .project import ProjectView


HOLDS, PARTLY, NEVER = "holds", "partly", "never"


@lean_dataclass(frozen=True)
class Premise:
    """The releases of one framework in which a verdict holds, with the source at each boundary.

    distribution: the framework's (its `releases` are the ones users run, oldest first).
    since: the first release that refuses; None: every release from the first one users run
        (and the layouts before it).
    until: the last release that refuses; None: still so in the newest release checked
        (`distribution.releases[-1]`), and assumed to stay so.
    source: the file and line at each boundary, in the release's own source (tags, not main).
    runs_since: the first release that can run such a config at all (its recipe, trainer or the keys
        the rule reads are new in it): earlier releases are not weighed. None: every release.
    runs_until: the last release that can run such a config (its layout is gone after it):
        later releases, known or not, are not weighed. None: no such end.
    gaps: releases inside the window that do not refuse (their source said in `source`).
    name: which check of the rule, when the rule has several (`Finding.premise` names it).
    frameworks: the plans (by framework name) it is about; empty: every plan the rule runs on.
        A rule about several frameworks declares one premise for each whose release matters.
    """

    distribution: Distribution
    since: Optional[str] = None
    until: Optional[str] = None
    source: str = ""
    name: str = ""
    frameworks: tuple = ()
    runs_since: Optional[str] = None
    runs_until: Optional[str] = None
    # Releases inside the window that do not refuse (a check dropped for a release or two, then restored).
    gaps: tuple = ()

    def contains(self, version: str) -> bool:
        key = version_key(version)
        if key is None or any(key == _key(gap) for gap in self.gaps):
            return False
        if self.since is not None and key < _key(self.since):
            return False
        return self.until is None or key <= _key(self.until)

    @property
    def span_text(self) -> str:
        """The window in words: "X 0.3.0 and later", "X 0.8.0 to 0.19.1"."""
        title = self.distribution.shown
        first = self.since or _first(self.distribution)
        if self.until is None:
            return f"{title} {first} and later" if self.since else f"every {title} release"
        return f"{title} {first} to {self.until}"


def _key(version: str) -> tuple:
    """The sort key of a release a premise names (tests/test_premises.py: each is a release)."""
    return version_key(version) or ((),)


def _first(dist: Distribution) -> str:
    return dist.releases[0] if dist.releases else "?"


@lean_dataclass(frozen=True)
class Verdict:
    """How a premise fares for one project: HOLDS in every release it may run, NEVER in any,
    PARTLY in some; `assumes` says which releases were weighed and why, for the message."""

    outcome: str
    assumes: str


def candidates(dist: Distribution, found: Optional[Release]) -> tuple[tuple[str, ...], bool, str]:
    """(the known releases the project may run, whether a newer release than any known may run too,
    where that was read). No evidence: every release users run, and any newer one."""
    known = dist.releases
    if found is None or (found.version is None and found.spec in ("", "?", "any")):
        where = f"no {dist.shown} release pinned" if found is None else f"release unknown ({found.where})"
        return known, True, where
    if found.version is not None:
        return (found.version,), False, found.how()
    admitted = tuple(v for v in known if admits(found.spec, v))
    newest = known[-1] if known else None
    # A range with no upper bound past the newest known release admits releases not yet checked.
    later = newest is None or bool(admits(found.spec, _after(newest))) and _unbounded(found.spec)
    return admitted, later, found.how()


def _after(version: str) -> str:
    key = version_key(version)
    numbers = list(key[0]) if key else [0]
    numbers[-1] += 1
    return ".".join(map(str, numbers)) + ".9999"


def _unbounded(spec: str) -> bool:
    return not any(op in ("<", "<=", "==", "===", "~=") for op, _ in clauses(spec) or ())


def closes(premise: Premise) -> bool:
    """Whether releases after the window that can still run such a config accept it (a fix upstream)."""
    if premise.until is None:
        return False
    return premise.runs_until is None or _key(premise.until) < _key(premise.runs_until)


def premise_of(premises: tuple, name: str, framework: Optional[str]) -> Optional[Premise]:
    """The premise a finding rests on: the one it names, else the one about its plan's framework (None: the
    rule declares none for that framework, whose arithmetic is the same in every release). A name the rule
    does not declare is a defect of the rule, never a reason to report without a gate: it raises."""
    for premise in premises:
        if (premise.name == name if name else not premise.frameworks or framework in premise.frameworks):
            return premise
    if name:
        raise ValueError(f"a finding names the premise {name!r}, which its rule does not declare")
    return None


def judge(premise: Premise, path: str, view: Optional[ProjectView] = None) -> Verdict:
    """Whether `premise` holds for every release the project of `path` may run, read through `view`
    (an adapter's or a plan's; None: the view in force, for the run layer)."""
    dist = premise.distribution
    found = release(dist, path, dist.releases, view)
    versions, later, where = candidates(dist, found)
    if premise.runs_since is not None:
        floor = _key(premise.runs_since)
        versions = tuple(v for v in versions if (version_key(v) or floor) >= floor)
    if premise.runs_until is not None:
        ceiling = _key(premise.runs_until)
        versions, later = tuple(v for v in versions if (version_key(v) or ceiling) <= ceiling), False
    inside = [premise.contains(v) for v in versions]
    if later:
        inside.append(premise.until is None)
    if not inside:
        return Verdict(NEVER, where)
    if all(inside):
        if found is not None and found.version is not None:
            return Verdict(HOLDS, f"{dist.shown} {found.version}, {where}")
        return Verdict(HOLDS, f"{premise.span_text}; {where}")
    if not any(inside):
        return Verdict(NEVER, where)
    since = premise.since or _first(dist)
    span = f"from {dist.shown} {since} on" if not closes(premise) else f"{premise.span_text} only"
    return Verdict(PARTLY, f"{span}; {where}")
