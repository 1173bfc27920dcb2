"""lint/frameworks/_index.py lets a lint import only the rules that run on its plans: it must
say what each rule declares, and a stale one must never skip a rule silently."""

import os
import sys

from batchlint import rules
from batchlint.config import Settings
from batchlint.engine import Options, check_file
from batchlint.plan import TrainingPlan

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs"))

import generate  # noqa: E402


def test_the_stored_index_is_what_the_rules_declare():
    with open(generate.INDEX, encoding="utf-8") as handle:
        assert handle.read() == generate.rule_index(), "lint/frameworks/_index.py is stale: run python docs/generate.py"


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


def test_known_codes_come_from_the_index_without_importing_rules():
    assert rules.LAZY.codes == {r.code for r in rules.RULES}


def test_a_stale_entry_never_skips_a_rule(monkeypatch):
    """A module missing from the index, or edited since (another size), is a candidate
    on every plan: runs_on decides, as without the index."""
    stored = rules._stored_index()
    named = sorted(name for name, entry in stored.items() if entry[1])  # rules that name frameworks
    missing, edited = named[0], named[1]
    index = {name: entry for name, entry in stored.items() if name != missing}
    index[edited] = stored[edited][:3] + (stored[edited][3] + 1,)
    monkeypatch.setattr(rules, "_stored_index", lambda: index)
    rules._candidates.cache_clear()
    rules._checks.cache_clear()
    rules._codes.cache_clear()
    try:
        candidates = {name for name, _ in rules._candidates("no-such-framework")}
        assert {missing, edited} <= candidates
        assert rules.LAZY.codes == {r.code for r in rules.RULES}
    finally:
        rules._candidates.cache_clear()
        rules._checks.cache_clear()
        rules._codes.cache_clear()


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


def test_an_adapter_module_edited_since_the_index_is_imported(monkeypatch):
    from batchlint import frameworks

    stored = dict(frameworks._stored())
    size, name, _, order, markers, task, launchers = stored["deepspeed"]
    stored["deepspeed"] = (size + 1, name, ("toml",), order, markers, task, launchers)  # stale: it reads json
    monkeypatch.setattr(frameworks, "_stored", lambda: stored)
    frameworks._entries.cache_clear()
    frameworks._tasks.cache_clear()  # derived from _entries, cached apart (asked of every file)
    try:
        assert "deepspeed" in {f.name for f in frameworks.for_format("json")}
    finally:
        frameworks._entries.cache_clear()
        frameworks._tasks.cache_clear()
