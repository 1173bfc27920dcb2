"""The registries stay honest: rules/registry.py lists every rule module, each named after its rule in
its group's folder, with the rule's own needs; lint/frameworks/registry.py lists every adapter as its
module declares it; codes and names are unique; every rule is documented in the sections users rely
on, and listed in docs/rules.md."""

import importlib
import os
import pkgutil
import re

import batchlint.rules as rules_package
from batchlint.rule import SEVERITIES
from batchlint.rules import ENGINE_RULES, RULES, all_rules
from batchlint.rules.registry import REGISTRY

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


def _rule_modules() -> set:
    """group.module of every module in a group folder of rules/."""
    groups = [m.name for m in pkgutil.iter_modules(rules_package.__path__) if m.ispkg]
    return {f"{group}.{m.name}" for group in groups
            for m in pkgutil.iter_modules([os.path.join(rules_package.__path__[0], group)])}


def test_the_registry_lists_every_rule_module_and_nothing_else():
    assert sorted(module for module, _, _ in REGISTRY.values()) == sorted(_rule_modules())
    assert list(REGISTRY) == sorted(REGISTRY), "rows in code order"
    assert not [m.name for m in pkgutil.iter_modules(rules_package.__path__) if not m.ispkg and m.name != "registry"]


def test_each_row_is_its_rules_module_code_frameworks_and_needs():
    for code, (module, frameworks, needs) in REGISTRY.items():
        rule = importlib.import_module(f"batchlint.rules.{module}").RULE
        assert rule.code == code, f"rules/{module.replace('.', '/')}.py defines {rule.code}, the registry says {code}"
        assert rule.check.__module__ == f"batchlint.rules.{module}", f"{code}: its check is not its module's own"
        assert module.partition(".")[2] == rule.name.replace("-", "_"), f"{code}: name the module after {rule.name}"
        assert tuple(needs) == tuple(rule.needs), f"{code}: the registry's needs are not the rule's"
        assert frameworks == rule.applies, f"{code} judges {rule.applies}, the registry says {frameworks}"
        group = module.partition(".")[0]
        assert group in ("generic", "launch") or rule.subject is not None or rule.frameworks, \
            f"{code}: a rule of {group}/ names its subject (or the frameworks it judges)"
    assert len(RULES) == len(REGISTRY)


def test_the_adapter_registry_is_what_each_module_declares():
    from batchlint import frameworks
    from batchlint.frameworks.registry import ADAPTERS

    folder = os.path.dirname(frameworks.__file__)
    declared = {}
    for name in sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".py") and not n.startswith("_")):
        framework = getattr(importlib.import_module(f"batchlint.frameworks.{name}"), "FRAMEWORK", None)
        if framework is not None:
            launchers = tuple((tuple(launcher.commands), tuple(launcher.modules), tuple(launcher.scripts),
                               tuple(launcher.markers), tuple(launcher.requires), tuple(launcher.under))
                              for launcher in framework.launchers)
            declared[name] = (framework.name, tuple(framework.formats), framework.order, tuple(framework.markers),
                              framework.task is not None, launchers)
    assert ADAPTERS == declared, "lint/frameworks/registry.py differs from the modules' FRAMEWORK"


def test_every_rule_is_documented():
    for rule in all_rules():
        for section in SECTIONS:
            assert section in rule.documentation, f"{rule.code} lacks {section}"
    for rule in RULES:
        assert "## Source" in rule.documentation, f"{rule.code} does not name the source it mirrors"


def test_engine_codes_are_bl0xx_and_rule_codes_are_not():
    assert all(r.code.startswith("BL0") for r in ENGINE_RULES)
    assert not any(r.code.startswith("BL0") for r in RULES)


def test_the_rules_index_lists_every_rule_with_its_severity_and_page():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        assert "docs/rules.md" in handle.read()
    with open(os.path.join(REPO, "docs", "rules.md"), encoding="utf-8") as handle:
        index = handle.read()
    for rule in all_rules():
        assert f"| {rule.name} | {rule.severity} |" in index, f"docs/rules.md lacks {rule.code}: run python docs/generate.py"
        assert os.path.isfile(os.path.join(REPO, "docs", "rules", f"{rule.code}.md"))


# -- retired codes: never reused, and they keep acting on their successors ----------------------

import json  # noqa: E402

import pytest  # noqa: E402

from batchlint import baseline, codes  # noqa: E402
from batchlint.config import Settings  # noqa: E402
from batchlint.fingerprint import SourceLines  # noqa: E402
from batchlint.rules import RETIRED, known_codes  # noqa: E402


def test_retired_codes_are_not_reused_and_point_at_rules():
    current = {r.code for r in all_rules()}
    for old, new in RETIRED.items():
        assert old not in current, f"{old} is retired: no rule may take it"
        assert codes.canonical(old) in current, f"{old} redirects to {new}, which is no rule"
    assert set(RETIRED) <= known_codes()


@pytest.fixture
def retired(monkeypatch):
    """BL998 retired in favour of BL501 (fp16-with-bf16), for these tests only."""
    monkeypatch.setitem(codes.RETIRED, "BL998", "BL501")


FP16_BF16 = "output_dir: out\nper_device_train_batch_size: 2\nfp16: true\nbf16: true\n"


def test_canonical_follows_the_redirect(retired):
    assert codes.canonical("BL998") == "BL501"
    assert codes.canonical("BL501") == "BL501" and codes.canonical("BL9") == "BL9"
    assert "BL998" in known_codes()


def test_select_and_ignore_of_a_retired_code_act_on_its_successor(retired):
    assert Settings(select=("BL998",)).enabled("BL501", "a.yaml")
    assert not Settings(select=("BL998",)).enabled("BL104", "a.yaml")
    assert not Settings(ignore=("BL998",)).enabled("BL501", "a.yaml")
    assert not Settings(per_file_ignores={"*.yaml": ("BL998",)}).enabled("BL501", "a.yaml")


def test_command_line_select_of_a_retired_code(retired, tmp_path):
    from conftest import run

    path = tmp_path / "a.yaml"
    path.write_text(FP16_BF16)
    result = run("--select", "BL998", str(path))
    assert result.exit_code == 1 and "BL501" in result.stdout
    assert run("--ignore", "BL998", str(path)).exit_code == 0


def test_a_directive_disabling_a_retired_code_suppresses_its_successor(retired, tmp_path):
    from conftest import lint_text

    flagged = lint_text(tmp_path, "a.yaml", FP16_BF16)
    assert [d.code for d in flagged.diagnostics] == ["BL501"]
    quiet = lint_text(tmp_path, "b.yaml", FP16_BF16.replace("bf16: true", "bf16: true  # batchlint: disable=BL998"))
    assert quiet.diagnostics == []


def test_a_baseline_entry_of_a_retired_code_matches_its_successor(retired, tmp_path):
    from conftest import lint_text

    diagnostics = lint_text(tmp_path, "a.yaml", FP16_BF16).diagnostics
    path = tmp_path / "baseline.json"
    baseline.write(str(path), diagnostics, SourceLines())
    data = json.loads(path.read_text())
    for entry in data["findings"]:
        entry["code"] = "BL998"  # written before BL501 succeeded BL998
    path.write_text(json.dumps(data))
    assert baseline.new_findings(diagnostics, baseline.load(str(path)), SourceLines()) == []


# The real retirements: three framework copies of the generation-batch check became BL170.
GRPO_6_ON_4 = "model_name_or_path: m\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 1\nnum_generations: 6\n"


@pytest.mark.parametrize("old", ["BL121", "BL152", "BL153"])
def test_the_old_generation_batch_codes_act_on_bl170(old, tmp_path):
    from conftest import lint_text, run

    path = tmp_path / "grpo.yaml"
    path.write_text(GRPO_6_ON_4)
    # TRL's release is not pinned: an info, which fails the run only at --fail-on info.
    selected = run("--select", old, "-w", "4", "--fail-on", "info", "--format", "json", str(path))
    assert selected.exit_code == 1 and '"code": "BL170"' in selected.stdout
    assert run("--ignore", old, "-w", "4", "--fail-on", "info", str(path)).exit_code == 0
    quiet = GRPO_6_ON_4.replace("num_generations: 6", f"num_generations: 6  # batchlint: disable={old}")
    assert lint_text(tmp_path, "quiet.yaml", quiet, world_size=4).diagnostics == []
