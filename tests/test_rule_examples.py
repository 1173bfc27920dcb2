"""Every rule's own examples: flagged ones report exactly the lines they name,
clean twins report nothing for that rule."""

import pytest

from batchlint.rules import RULES

from conftest import committed, lint_text, write

CASES = [(rule, example) for rule in RULES for example in rule.examples]


@pytest.mark.parametrize("rule,example", CASES, ids=[f"{r.code}-{e.filename}" for r, e in CASES])
def test_example(tmp_path, rule, example):
    if example.before:  # a change: the files as they were, committed; then the example as it is now
        committed(tmp_path, dict(example.files + example.before).items())
    for name, text in example.files:
        write(tmp_path, name, text)
    result = lint_text(tmp_path, example.filename, example.text, example.world_size, example.global_batch,
                       since="HEAD" if example.before else None)
    assert result.framework is not None, "the example is not recognised as a training config"
    lines = sorted(d.span.line for d in result.diagnostics if d.code == rule.code)
    assert lines == sorted(example.flagged), [d.text for d in result.diagnostics]
    for d in result.diagnostics:
        if d.code == rule.code:
            assert d.severity in ("error", "warning", "info")
            assert example.severity is None or d.severity == example.severity, d.text
            if d.code[:3] in ("BL1", "BL2", "BL4"):  # batch, layout and length arithmetic
                assert any(ch.isdigit() for ch in d.message), "a finding states the numbers behind it"
            assert d.fix, "a finding says what to change"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_every_rule_has_flagged_and_clean_examples(rule):
    assert any(e.flagged for e in rule.examples), "no example the rule must flag"
    assert any(not e.flagged for e in rule.examples), "no nearly-identical example it must not flag"
