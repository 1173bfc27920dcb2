"""The fuzzer (fuzz/fuzz.py) as a test: a deterministic slice of mutated
configs and every entry of the hostile catalogue (fuzz/hostile.py) must lint
without a crash (an exception, or an "internal error" result), within 2 s,
and within 500 MB.

Inputs run in one worker process (fuzz.run_all): a bomb that a bound misses
then fails its test after a timeout instead of hanging or exhausting the
test run. `python fuzz/fuzz.py --count 20000 --seed 1 --jobs 2` is the long run.
"""

import importlib.util
import os
import sys

import pytest

FUZZ_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz")
if FUZZ_DIR not in sys.path:
    sys.path.insert(0, FUZZ_DIR)
_spec = importlib.util.spec_from_file_location("batchlint_fuzz", os.path.join(FUZZ_DIR, "fuzz.py"))
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz  # dataclasses and pickling (to the worker) look the module up
_spec.loader.exec_module(fuzz)
hostile = fuzz.hostile

SLICE_SEED = 1
SLICE_COUNT = 4000


def _failures(summary_items):
    return [f"{item.name} [{item.origin}] -> {outcome.crash or outcome.hang_site} "
            f"({outcome.seconds:.1f} s, {outcome.rss_mb:.0f} MB {outcome.killed})".rstrip()
            for item, outcome in summary_items]


@pytest.fixture(scope="module")
def fuzz_slice():
    """The slice's inputs and outcomes, run once for the tests below."""
    seeds = fuzz.corpus.load()
    inputs = fuzz.generate(SLICE_SEED, SLICE_COUNT, seeds)
    outcomes = fuzz.run_all(inputs, jobs=1)
    return [(item, outcomes[item.index]) for item in inputs]


def test_the_slice_is_deterministic():
    seeds = fuzz.corpus.load()
    first = fuzz.generate(SLICE_SEED, 50, seeds)
    again = fuzz.generate(SLICE_SEED, 50, seeds)
    assert [(i.name, i.data, i.runs) for i in first] == [(i.name, i.data, i.runs) for i in again]
    assert len({i.data for i in first}) > 40  # and actually varied


def test_no_crash_in_launch_frameworks_or_rules(fuzz_slice):
    crashes = [(i, o) for i, o in fuzz_slice if o.crash and fuzz.layer(o.crash) != "reader"]
    assert not crashes, "\n".join(_failures(crashes[:10]) + [crashes[0][1].detail])


def test_no_crash_in_the_readers(fuzz_slice):
    crashes = [(i, o) for i, o in fuzz_slice if o.crash and fuzz.layer(o.crash) == "reader"]
    assert not crashes, "\n".join(_failures(crashes[:10]) + [crashes[0][1].detail])


def test_no_input_takes_over_2_s_or_500_mb(fuzz_slice):
    slow = [(i, o) for i, o in fuzz_slice if o.hang or o.memory]
    assert not slow, "\n".join(_failures(slow[:10]))


@pytest.mark.parametrize("entry", hostile.CATALOGUE, ids=[e.key for e in hostile.CATALOGUE])
def test_hostile_input(entry):
    item = fuzz.Input(-1, entry.name, entry.data, f"hostile:{entry.key}", runs=entry.runs)
    outcome = fuzz.run_isolated(item, timeout=10)
    assert outcome.crash is None, f"{entry.why}: {outcome.crash}\n{outcome.detail}"
    assert not outcome.hang, f"{entry.why}: {outcome.seconds:.1f} s at {outcome.hang_site}"
    assert not outcome.memory, f"{entry.why}: {outcome.rss_mb:.0f} MB {outcome.killed} at {outcome.hang_site}"


def test_a_finding_without_a_span_is_reported_at_the_top_of_the_file():
    """A rule that reports a default (no span of its own) used to crash the engine when it
    read the finding's span: the finding now points at line 1, its span-less notes dropped."""
    from batchlint.document import Span
    from batchlint.rule import Finding, Related

    finding = Finding(span=None, message="m", fix="f", related=(Related("default", None), Related("x", Span.point(3))))
    assert finding.span == Span.point(1)
    assert [r.message for r in finding.related] == ["x"]
