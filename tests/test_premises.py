"""Every rule says when its verdict holds (lint/premise.py), and the gate keeps an error or a warning
only where every release the project may run refuses: a pin inside the window, outside it, a range
across it, none at all."""

import pytest

from batchlint.premise import HOLDS, NEVER, PARTLY, Premise, judge
from batchlint.rules import RULES
from batchlint.versions import Distribution, version_key

from conftest import write


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_every_rule_declares_when_it_holds(rule):
    assert rule.premises or rule.every_release, (
        f"{rule.code} declares neither the releases its verdict holds in (premises) nor why its arithmetic "
        "is the same in every release (every_release)")
    names = [p.name for p in rule.premises]
    assert len(names) == len(set(names)), "two premises of one rule share a name"


PREMISES = [(rule, premise) for rule in RULES for premise in rule.premises]


@pytest.mark.parametrize("rule,premise", PREMISES, ids=[f"{r.code}-{p.name or p.distribution.shown}" for r, p in PREMISES])
def test_a_window_is_releases_with_sources_at_both_ends(rule, premise):
    releases = premise.distribution.releases
    assert releases, f"{premise.distribution.shown} lists no releases users run"
    assert [version_key(v) for v in releases] == sorted(version_key(v) for v in releases), "releases oldest first"
    for edge in (premise.since, premise.until):
        if edge is not None:
            assert version_key(edge) is not None
            assert edge in releases, f"{edge} is no release of {premise.distribution.shown} batchlint knows"
            assert edge.replace(".dev0", "") in premise.source or edge == "0.dev0", f"no source at {edge}"
    assert premise.source, "the window names the source it rests on"
    for gap in premise.gaps:
        assert gap in releases and gap in premise.source and premise.contains(gap) is False
    assert releases[-1] in premise.source or premise.until is not None, (
        "a window open to the newest release is checked in that release's source")


DIST = Distribution(("toyframe",), "toyframe", ("toyframe/__init__.py",), title="ToyFrame",
                    releases=("0.1.0", "0.2.0", "0.3.0", "0.4.0"))


def outcome(tmp_path, premise, requirement=None) -> str:
    if requirement is not None:
        write(tmp_path, "requirements.txt", requirement + "\n")
    config = write(tmp_path, "train.yaml", "a: 1\n")
    return judge(premise, str(config)).outcome


@pytest.mark.parametrize("requirement,expected", [
    ("toyframe==0.3.0", HOLDS),  # a pin inside the window
    ("toyframe==0.2.0", NEVER),  # a pin before it
    ("toyframe>=0.3", HOLDS),  # every release the range admits is inside, and so are later ones
    ("toyframe>=0.2", PARTLY),  # 0.2.0 is not
    ("toyframe<0.3", NEVER),
    ("toyframe", PARTLY),  # named, no release: every release
    (None, PARTLY),  # nothing said: every release users run
])
def test_a_window_from_a_release_on(tmp_path, requirement, expected):
    assert outcome(tmp_path, Premise(DIST, since="0.3.0", source="v0.3.0 x.py:1; v0.4.0 x.py:2"), requirement) == expected


@pytest.mark.parametrize("requirement,expected", [
    ("toyframe==0.2.0", HOLDS),
    ("toyframe==0.4.0", NEVER),  # fixed in 0.4.0
    ("toyframe>=0.1,<0.3", HOLDS),
    ("toyframe>=0.2", PARTLY),  # later releases do not refuse
    (None, PARTLY),
])
def test_a_window_that_closes(tmp_path, requirement, expected):
    assert outcome(tmp_path, Premise(DIST, until="0.3.0", source="v0.1.0 x.py:1; v0.3.0 x.py:2"), requirement) == expected


def test_every_release_holds_without_a_pin(tmp_path):
    assert outcome(tmp_path, Premise(DIST, source="v0.1.0 x.py:1; v0.4.0 x.py:2")) == HOLDS


@pytest.mark.parametrize("requirement,expected", [
    (None, HOLDS),  # the releases before the recipe cannot run the config at all
    ("toyframe==0.2.0", NEVER),
    ("toyframe==0.4.0", HOLDS),
])
def test_releases_that_cannot_run_the_config_are_not_weighed(tmp_path, requirement, expected):
    premise = Premise(DIST, since="0.3.0", runs_since="0.3.0", source="v0.3.0 x.py:1; v0.4.0 x.py:2")
    assert outcome(tmp_path, premise, requirement) == expected


@pytest.mark.parametrize("requirement,expected", [
    (None, HOLDS),  # the releases after 0.3.0 cannot run the config's layout at all
    ("toyframe==0.4.0", NEVER),
    ("toyframe>=0.2", HOLDS),
])
def test_releases_after_the_layout_is_gone_are_not_weighed(tmp_path, requirement, expected):
    premise = Premise(DIST, until="0.3.0", runs_until="0.3.0", source="v0.1.0 x.py:1; v0.3.0 x.py:2")
    assert outcome(tmp_path, premise, requirement) == expected


def test_a_finding_naming_a_premise_its_rule_lacks_is_a_defect_not_an_ungated_finding():
    from batchlint.premise import premise_of

    declared = Premise(DIST, since="0.3.0", name="refused", source="v0.3.0 x.py:1; v0.4.0 x.py:2")
    assert premise_of((declared,), "refused", "toyframe") is declared
    assert premise_of((declared,), "", "toyframe") is declared
    with pytest.raises(ValueError):
        premise_of((declared,), "refusd", "toyframe")


@pytest.mark.parametrize("requirement,expected", [
    ("toyframe==0.3.0", NEVER),  # the release that dropped the check
    ("toyframe==0.4.0", HOLDS),
    ("toyframe>=0.2", PARTLY),
    (None, PARTLY),
])
def test_a_release_inside_the_window_that_does_not_refuse(tmp_path, requirement, expected):
    premise = Premise(DIST, since="0.2.0", gaps=("0.3.0",), source="v0.2.0 x.py:1; v0.3.0 none; v0.4.0 x.py:2")
    assert outcome(tmp_path, premise, requirement) == expected
