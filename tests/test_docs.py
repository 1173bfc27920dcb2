"""docs/rules.md and docs/parity.md stay current, and the parity table keeps
its promise: every framework start-up check has a rule (with examples) or a
stated reason."""

import importlib.util
import os
import re

from batchlint.rules import RULES, all_rules

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _generator():
    spec = importlib.util.spec_from_file_location("generate_docs", os.path.join(REPO, "docs", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_docs_are_current():
    generate = _generator()
    for name, build in generate.OUTPUTS.items():
        with open(os.path.join(REPO, "docs", name), encoding="utf-8") as handle:
            assert handle.read() == build(), f"docs/{name} is stale: run python docs/generate.py"


def test_the_readme_is_short_and_links_the_docs_it_left_out():
    """The README is for users (about 15 kB at most); what it leaves out is one link away."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert len(readme.encode()) <= 15_500
    for page in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert os.path.isfile(os.path.join(REPO, page)), page


def test_every_parity_row_has_a_rule_with_examples_or_a_reason():
    codes = {r.code: r for r in all_rules()}
    for table in _generator().load_parity():
        for section in ("startup", "beyond"):
            for row in table.get(section, []):
                named = row.get("rules") or ([row["rule"]] if "rule" in row else [])
                assert named or row.get("reason"), f"{table['file']}: {row['check']!r} has neither rule nor reason"
                for code in named:
                    assert code in codes, f"{table['file']}: unknown rule {code}"
                    if code in {r.code for r in RULES}:
                        assert codes[code].examples, f"{code} has no examples"
                assert row.get("source") or section == "beyond", f"{table['file']}: {row['check']!r} names no source"
                assert row.get("why") or section == "startup", f"{table['file']}: {row['check']!r} says not why"
