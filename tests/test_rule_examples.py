"""Every rule's own examples: flagged ones report exactly the lines they name, with the message and
the help they pin (and, where the rule edits the file, the file `--fix` makes); clean twins report
nothing for that rule. Examples are literal files, as a user writes them."""

import ast
import importlib
import inspect
import statistics

import pytest

from batchlint.rules import RULES

from conftest import committed, lint_text, run, write

CASES = [(rule, example) for rule in RULES for example in rule.examples]
FLAGGED = [(rule, example) for rule, example in CASES if example.flagged]
LONGEST_MESSAGE = 120  # characters: one clause ("about 100"), the arithmetic in the notes


def _lint(tmp_path, example):
    if example.before:  # a change: the files as they were, committed; then the example as it is now
        committed(tmp_path, dict(example.files + example.before).items())
    for name, text in example.files:
        write(tmp_path, name, text)
    return lint_text(tmp_path, example.filename, example.text, example.world_size, example.global_batch,
                     since="HEAD" if example.before else None)


@pytest.mark.parametrize("rule,example", CASES, ids=[f"{r.code}-{e.filename}" for r, e in CASES])
def test_example(tmp_path, rule, example):
    result = _lint(tmp_path, example)
    assert result.framework is not None, "the example is not recognised as a training config"
    found = sorted((d for d in result.diagnostics if d.code == rule.code), key=lambda d: (d.span.line, d.span.column))
    assert sorted(d.span.line for d in found) == sorted(example.flagged), [d.text for d in result.diagnostics]
    for d in found:
        assert d.severity in ("error", "warning", "info")
        assert example.severity is None or d.severity == example.severity, d.text
        if d.code[:3] in ("BL1", "BL2", "BL4"):  # batch, layout and length arithmetic
            assert any(ch.isdigit() for ch in d.message), "a finding states the numbers behind it"
        assert d.fix, "a finding says what to change"
    if found and example.message:
        first = next(d for d in found if d.span.line == example.flagged[0])
        assert (first.message, first.fix) == (example.message, example.fix)


@pytest.mark.parametrize("rule,example", FLAGGED, ids=[f"{r.code}-{e.filename}" for r, e in FLAGGED])
def test_a_flagged_example_pins_its_message_help_and_fixed_file(tmp_path, rule, example):
    assert example.message and example.fix, "pin the first finding's message= and fix="
    assert len(example.message) <= LONGEST_MESSAGE, f"{len(example.message)} characters: one clause, notes below"
    result = _lint(tmp_path, example)
    edits = any(d.edits for d in result.diagnostics if d.code == rule.code)
    if not edits:
        assert example.fixed is None, "fixed= pins an edit the rule does not offer"
        return
    assert example.fixed is not None, "the rule edits the file: pin the file --fix makes (fixed=)"
    if example.before:
        return  # the fix of a change is checked on the working tree in tests/test_fix.py
    flags = ["--fix", "--select", rule.code] + (["--unsafe-fixes"] if rule.unsafe_fix else [])
    flags += ["-w", example.world_size] if example.world_size is not None else []
    flags += ["--global-batch", example.global_batch] if example.global_batch is not None else []
    run("check", *flags, "--no-cache", tmp_path / example.filename)
    assert (tmp_path / example.filename).read_text(encoding="utf-8") == example.fixed


def test_messages_are_one_short_clause():
    pinned = [example.message for _, example in FLAGGED if example.message]
    assert pinned and statistics.median(len(m) for m in pinned) <= 100


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_every_rule_has_flagged_and_clean_examples(rule):
    assert any(e.flagged for e in rule.examples), "no example the rule must flag"
    assert any(not e.flagged for e in rule.examples), "no nearly-identical example it must not flag"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_examples_are_literal_files(rule):
    """Each Example's text is a string literal, or a module constant bound to one: no template filled in."""
    module = importlib.import_module(rule.check.__module__)
    tree = ast.parse(inspect.getsource(module))
    constants = {target.id for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Example":
            texts = call.args[1:2] + [k.value for k in call.keywords if k.arg in ("text", "fixed")]
            for text in texts:
                literal = isinstance(text, ast.Constant) or (isinstance(text, ast.Name) and text.id in constants)
                assert literal, f"line {text.lineno}: write the example's file as a literal"


def test_the_degrees_a_fix_suggests_divide_every_count_and_stay_bounded():
    """splitting_degrees (lint/rule.py), which BL216 and BL217 name in their fixes."""
    from batchlint.rule import splitting_degrees

    assert splitting_degrees((12,), 8) == (6, 4, 3, 2)
    assert splitting_degrees((8, 32), 16) == (8, 4, 2)
    assert splitting_degrees((7,), 4) == ()
    huge = 10 ** 30
    # A count of 30 digits: only the candidates near the top are tried, at once (no hang).
    assert splitting_degrees((huge,), huge, budget=1000) == (huge,)
