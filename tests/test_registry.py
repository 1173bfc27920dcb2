"""The rule registry stays honest: unique codes and names, every module
registered, every rule documented in the sections users rely on, and listed
in the README."""

import os
import pkgutil
import re

import batchlint.rules as rules_package
from batchlint.rule import SEVERITIES
from batchlint.rules import ENGINE_RULES, RULES, all_rules

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


def test_codes_and_names_are_unique_and_well_formed():
    codes = [r.code for r in all_rules()]
    names = [r.name for r in all_rules()]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    for rule in all_rules():
        assert re.fullmatch(r"BL\d{3}", rule.code), rule.code
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", rule.name), rule.name
        assert rule.severity in SEVERITIES


def test_every_rule_module_defines_one_rule_with_its_own_check():
    modules = {m.name for m in pkgutil.iter_modules(rules_package.__path__)}
    assert modules == {r.check.__module__.rsplit(".", 1)[-1] for r in RULES}
    assert len(RULES) == len(modules)


def test_every_rule_is_documented():
    for rule in all_rules():
        for section in SECTIONS:
            assert section in rule.documentation, f"{rule.code} lacks {section}"
    for rule in RULES:
        assert "## Source" in rule.documentation, f"{rule.code} does not name the source it mirrors"


def test_engine_codes_are_bl0xx_and_rule_codes_are_not():
    assert all(r.code.startswith("BL0") for r in ENGINE_RULES)
    assert not any(r.code.startswith("BL0") for r in RULES)


def test_readme_lists_the_core_rules_and_links_the_rest():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert "docs/rules.md" in readme
    for rule in all_rules():
        if rule.code in ("BL001", "BL101", "BL102", "BL103", "BL301"):
            assert f"| {rule.code} | {rule.name} |" in readme, f"README's rules table lacks {rule.code}"
