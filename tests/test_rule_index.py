"""The registries let a lint import only the rules that run on its plans and the adapters a file may
be read by: what they pick is what importing everything would give."""

import os

from batchlint import rules
from batchlint.config import Settings
from batchlint.engine import Options, check_file
from batchlint.plan import TrainingPlan


def _plans():
    """The plans of every file under examples/, and one of a framework no rule names."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            checker = check_file(os.path.join(folder, name), Settings(root=root), Options(), rules=())
            yield from (plan for _, plan in checker.plans)
    yield TrainingPlan(framework="no-such-framework", document=None)


def test_for_plan_picks_exactly_the_rules_that_run_on_the_plan():
    plans = list(_plans())
    assert len({plan.framework for plan in plans}) > 5
    for plan in plans:
        assert {r.code for r in rules.for_plan(plan)} == {r.code for r in rules.RULES if r.runs_on(plan)}


def test_known_codes_come_from_the_registry_without_importing_rules():
    assert rules.LAZY.codes == {r.code for r in rules.RULES}


def test_a_rule_whose_needs_are_not_the_registrys_is_still_run_where_it_should(monkeypatch):
    """A row whose needs went stale (fewer than the rule's) never runs the rule where runs_on says no."""
    code = next(code for code, (_, _, needs) in rules.REGISTRY.items() if needs)
    module, frameworks, needs = rules.REGISTRY[code]
    monkeypatch.setitem(rules.REGISTRY, code, (module, frameworks, ()))
    rules._checks.cache_clear()
    try:
        for plan in _plans():
            assert {r.code for r in rules.for_plan(plan)} == {r.code for r in rules.RULES if r.runs_on(plan)}
    finally:
        rules._checks.cache_clear()


def test_for_format_imports_only_what_the_full_registry_would_give():
    from batchlint import frameworks

    for fmt in ("python", "yaml", "toml", "json", "shell"):
        assert tuple(frameworks.for_format(fmt)) == tuple(f for f in frameworks.FRAMEWORKS if fmt in f.formats)
        assert frameworks.markers_for(fmt) == tuple(m for f in frameworks.FRAMEWORKS if fmt in f.formats
                                                    for m in f.markers)


def test_the_job_files_looked_for_are_those_of_the_full_registry():
    """tasks_for asks only the frameworks the index says read job files (Framework.task)."""
    from batchlint import frameworks

    for fmt in ("python", "yaml", "toml", "json", "shell"):
        readers = [f for f in frameworks.FRAMEWORKS if fmt in f.formats and f.task is not None]
        every = b" ".join(m for f in readers for m in f.markers)
        assert tuple(frameworks.tasks_for(fmt, every)) == tuple(f.task for f in readers)
        assert tuple(frameworks.tasks_for(fmt, b"nothing of theirs")) == ()
    assert tuple(frameworks.tasks_for("yaml", b"run: |")), "skypilot's job file is read"
