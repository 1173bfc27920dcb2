"""The change as evidence (`check --since REV`): each job a change touches, planned again as the
project was at REV, so a rule can judge what the change did (lint/plan.py `TrainingPlan.change`).

A job is one plan of the file linted: a config, or a config as one launch line runs it. Its plan at
REV is the plan the same lint makes in the project as it was then (lint/revision.py), found by the
same identity: the config, the launch script and the order among that script's launches of it.
Where neither side knows W, both are planned again at one W both layouts can run on: the batch
arithmetic is linear in W, so what the change does to the global batch is the same at every W.
"""

from __future__ import annotations

import math
import os

from . import reads
from .lean_dataclass import lean_dataclass, replace
from .plan import Subject
from .revision import Revision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from .plan import TrainingPlan


@lean_dataclass(frozen=True)
class Change(Subject):
    """One job before and after the change, both planned at the same W where none was known: the
    subject of the rules about what a change did."""

    before: TrainingPlan
    after: TrainingPlan  # the plan judged, or the same job planned again at `world`
    world: Optional[int] = None  # the W both were planned at when neither side had one
    since: str = ""  # the commit, as a message names it

    @classmethod
    def of(cls, plan: TrainingPlan) -> Optional[Change]:
        return plan.change


class Since:
    """What `check --since REV` compares each job with. One per run; the plans at REV are made once
    per file linted and W."""

    def __init__(self, revision: Revision):
        self.revision = revision
        self._plans: dict = {}  # (file linted, W) -> {job: plan} at REV, or now when W is an assumed one
        # Each side's own record of which scripts launch what (lint/launching/jobs.py): what a script launched at
        # REV is not what it launches now, and a side planned at an assumed W is a third.
        self._jobs: dict = {}  # (W, at REV) -> ProjectJobs

    def __repr__(self) -> str:  # the cache's salt: results hold for one commit compared with
        return f"Since({self.revision.commit})"

    @property
    def commit(self) -> str:
        return self.revision.commit

    def of(self, plan: TrainingPlan, note, ordinal: int, top: str, settings, options) -> Optional[Change]:
        """The change to the job `plan` (the `ordinal`-th plan of its config and launch in the lint of
        `top`), when the change touches a file the lint has read; None otherwise, or where the job is
        new, or its W is known on one side only."""
        read = tuple(path for path, _ in reads.snapshot()[0]) + (plan.document.path,)
        read += (note.path,) if note is not None and note.path else ()
        if not self.revision.touches(read):
            return None
        identity = (*job(plan, note), ordinal)
        before = self._planned(top, settings, options, None, then=True).get(identity)
        if before is None:
            return None
        if _knows_world(plan) and _knows_world(before):
            return Change(before, plan, since=self.commit[:12])
        if _knows_world(plan) or _knows_world(before):
            return None  # W came or went with the change: a launch added or removed, not a layout moved
        world = _common_world(before, plan)
        if world is None:
            return None
        then = self._planned(top, settings, options, world, then=True).get(identity)
        now = self._planned(top, settings, options, world, then=False).get(identity)
        if then is None or now is None:
            return None
        return Change(then, now, world, since=self.commit[:12])

    def _planned(self, top: str, settings, options, world: Optional[int], then: bool) -> dict:
        key = (top, world, then)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = self._plan(top, settings, options, world, then)
        return found

    def _plan(self, top: str, settings, options, world: Optional[int], then: bool) -> dict:
        from .launching.jobs import ProjectJobs

        if then and os.path.realpath(top) in self.revision.view.absent:
            return {}
        jobs = self._jobs.setdefault((world, then), ProjectJobs())
        given = replace(options, since=None, whole_project=True, digests=False, jobs=jobs)
        if world is not None:  # the same W on both sides: one both layouts run on
            given = replace(given, world_size=world, world_size_wins=True)
        with reads.tracking(digests=False):  # what the other side reads is not what this lint read
            if then:
                with self.revision.reading():
                    plans = _planned(top, settings, given)
            else:
                plans = _planned(top, settings, given)
        found: dict = {}
        counted: dict = {}
        for note, plan in plans:
            base = job(plan, note)
            counted[base] = counted.get(base, -1) + 1
            found[base + (counted[base],)] = plan
        return found


def _planned(top: str, settings, options) -> list:
    from .engine import plan_file

    try:
        return plan_file(top, settings, options)
    except OSError:  # not there then, or unreadable: no job to compare with
        return []


def job(plan: TrainingPlan, note) -> tuple:
    """A job's identity on both sides, but for its order among the same: its config (and the config it
    selects), the launch script."""
    script = os.path.realpath(note.path) if note is not None and note.path else ""
    return os.path.realpath(plan.document.path), plan.document.selected or "", script


def _knows_world(plan: TrainingPlan) -> bool:
    return plan.world_size is not None and plan.world_size.known


def _common_world(*plans: TrainingPlan) -> Optional[int]:
    """The least W every plan's layout can run on (the product of its known degrees), None where a
    degree is not a known positive number (then what moves cannot be told)."""
    world = 1
    for plan in plans:
        product = 1
        for degree in plan.layout:
            if degree is None:
                continue
            value = degree.number
            if value is None:
                return None
            if value == -1:
                continue  # the ranks left over (TorchTitan's shard degree)
            if value < 1:
                return None
            product *= value
        world = world * product // math.gcd(world, product)
    return world if world <= 1 << 20 else None
