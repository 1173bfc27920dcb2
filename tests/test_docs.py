"""docs/rules.md and docs/parity.md stay current, and the parity table keeps
its promise: every framework start-up check has a rule (with examples) or a
stated reason."""

import importlib.util
import os

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


def test_the_readme_rule_table_is_current():
    """README.md's table between its markers is what docs/generate.py writes; the rest is left as is."""
    generate = _generator()
    with open(generate.README, encoding="utf-8") as handle:
        readme = handle.read()
    assert readme == generate.readme(text=readme), "README.md's rule table is stale: run python docs/generate.py"
    table = readme[readme.index(generate.README_START):readme.index(generate.README_END)]
    assert len([line for line in table.splitlines() if line.startswith("| [BL")]) == len(all_rules())


def test_the_readme_table_replaces_only_what_is_between_its_markers():
    generate = _generator()
    text = f"intro\n{generate.README_START}\n| old | table |\n{generate.README_END}\nrest\n"
    written = generate.readme(text=text)
    assert written.startswith(f"intro\n{generate.README_START}\n| Code | Name | Severity | Applies to |")
    assert written.endswith(f"|\n{generate.README_END}\nrest\n") and "| old | table |" not in written
    assert generate.readme(text=written) == written


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
