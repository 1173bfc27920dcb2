"""Rules declare the facts they read (`Rule.needs`): the engine runs a rule only
on a plan that has every one, and "applies to" is computed from the facts each
adapter was seen to fill (lint/applies.py, stored in lint/frameworks/filled_facts.py)."""

import json

import pytest

from batchlint import applies
from batchlint.lean_dataclass import fields, replace
from batchlint.plan import RL, Fact, TrainingPlan
from batchlint.rule import Rule
from batchlint.rules import RULES, find

from conftest import lint_text, run

FIELDS = {f.name for f in fields(TrainingPlan)} - {"framework", "document"}
RL_FIELDS = {f.name for f in fields(RL)}


@pytest.mark.parametrize("rule", [r for r in RULES if r.needs], ids=lambda r: r.code)
def test_needs_name_plan_facts(rule):
    for name in rule.needs:
        head, _, member = name.partition(".")
        assert head in FIELDS, f"{rule.code} needs {name!r}, which is no TrainingPlan field"
        if head == "rl" and member:
            assert member in RL_FIELDS, f"{rule.code} needs {name!r}, which is no RL fact"


def test_the_stored_table_is_what_the_adapters_fill_today():
    """Every rule example and examples/ file through the adapters: the facts each
    framework fills must be the stored ones (`python docs/generate.py` rewrites them)."""
    assert applies.observe(RULES) == applies.stored(), "lint/frameworks/filled_facts.py is stale: run python docs/generate.py"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_a_rule_applies_to_every_framework_its_examples_flag(tmp_path, rule):
    """The computed list is not too short: a framework whose example a rule flags is in it."""
    scope = applies.frameworks_for(rule)
    for example in rule.examples:
        if not example.flagged:
            continue
        result = lint_text(tmp_path, example.filename, example.text, example.world_size, example.global_batch)
        for d in result.diagnostics:
            if d.code == rule.code:
                assert scope is None or d.framework in scope, f"{rule.code} flagged {d.framework}, not in {scope}"


def test_sequence_parallel_without_tp_names_the_adapters_that_feed_it():
    assert applies.describe(find("BL203")) == "megatron, nemo, swift-megatron"
    result = run("rule", "BL203")
    assert "Applies to: megatron, nemo, swift-megatron." in result.stdout


def test_a_rule_that_needs_nothing_applies_to_every_framework():
    assert applies.describe(find("BL001")) == "every framework"


def test_sarif_lists_the_computed_frameworks_of_the_rules_with_results(tmp_path):
    path = tmp_path / "a.yaml"  # TRL: packing with length grouping (BL301)
    path.write_text("model_name_or_path: x\npacking: true\nper_device_train_batch_size: 2\ngroup_by_length: true\n")
    log = json.loads(run("--format", "sarif", str(path)).stdout)
    descriptors = {d["id"]: d for d in log["runs"][0]["tool"]["driver"]["rules"]}
    assert list(descriptors) == ["BL301"]
    assert descriptors["BL301"]["properties"]["frameworks"] == list(applies.frameworks_for(find("BL301")))
    assert "trl" in descriptors["BL301"]["properties"]["frameworks"]


# -- the engine skips a rule whose facts are missing -------------------------------------------

def _plan(**facts):
    return TrainingPlan(framework="x", document=None, **facts)


def test_has_reads_fields_members_and_empty_tables():
    one = Fact(1, "tp")
    plan = _plan(parallel={"tp": one}, rl=RL(samples_per_prompt=Fact(8, "n")))
    assert plan.has("parallel") and plan.has("parallel.tp") and not plan.has("parallel.sp")
    assert plan.has("rl.samples_per_prompt") and not plan.has("rl.generation_batch")
    assert not plan.has("micro_batch") and not plan.has("layout")  # None, and an empty tuple
    assert not _plan().has("rl.samples_per_prompt")  # no rl at all


def test_a_rule_runs_only_when_every_needed_fact_is_present():
    rule = Rule(code="BL999", name="t", severity="info", summary="", check=lambda plan: (), needs=("fp16", "bf16"))
    assert not rule.runs_on(_plan(fp16=Fact(True, "fp16")))
    assert rule.runs_on(_plan(fp16=Fact(True, "fp16"), bf16=Fact(False, "bf16")))
    restricted = replace(rule, frameworks=("y",))
    assert not restricted.runs_on(_plan(fp16=Fact(True, "fp16"), bf16=Fact(False, "bf16")))


def test_the_engine_does_not_call_a_rule_whose_facts_are_missing(tmp_path):
    called = []
    rule = Rule(code="BL999", name="t", severity="info", summary="", check=lambda plan: called.append(plan) or (),
                needs=("seq_len_multiple",))
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file

    path = tmp_path / "a.yaml"
    path.write_text("per_device_train_batch_size: 2\n")
    lint_file(str(path), Settings(root=str(tmp_path)), Options(), (rule,))
    assert called == []


# -- the RL vocabulary, filled by the adapters that have it --------------------------------------

def _rl(tmp_path, name, text, world_size=None):
    plans = []
    rule = Rule(code="BL999", name="t", severity="info", summary="", check=lambda plan: plans.append(plan) or ())
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file

    path = tmp_path / name
    path.write_text(text)
    lint_file(str(path), Settings(root=str(tmp_path)), Options(world_size=world_size), (rule,))
    [plan] = plans
    return plan.rl


def _values(rl):
    return (rl.samples_per_prompt and rl.samples_per_prompt.value, rl.prompts_per_step and rl.prompts_per_step.value,
            rl.generation_batch and rl.generation_batch.value, rl.mini_batch and rl.mini_batch.value,
            {role: fact.value for role, fact in rl.micro_batch.items()})


def test_trl_grpo(tmp_path):
    text = "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\nnum_generations: 8\n"
    assert _values(_rl(tmp_path, "g.yaml", text, world_size=4)) == (8, 4, 32, 32, {"actor": 4})
    assert _rl(tmp_path, "s.yaml", "per_device_train_batch_size: 4\npacking: true\n") is None


def test_axolotl_grpo(tmp_path):
    text = ("base_model: Qwen/Qwen2.5-0.5B\nrl: grpo\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
            "trl:\n  num_generations: 4\n")
    assert _values(_rl(tmp_path, "a.yaml", text)) == (4, 2, 8, None, {"actor": 2})


def test_swift_megatron_grpo_with_its_defaults(tmp_path):
    text = "rlhf_type: grpo\nmodel: Qwen/Qwen3-8B\nmicro_batch_size: 2\nsteps_per_generation: 4\n"
    # global_batch_size 16 and num_generations 8 are ms-swift's defaults: 16 x 4 = 64 completions, 8 prompts.
    assert _values(_rl(tmp_path, "m.yaml", text)) == (8, 8, 64, 16, {"actor": 2})


def test_verl_ppo(tmp_path):
    text = ("data:\n  train_batch_size: 256\nactor_rollout_ref:\n  rollout:\n    n: 4\n  actor:\n"
            "    ppo_mini_batch_size: 64\n    ppo_micro_batch_size_per_gpu: 2\n")
    samples, prompts, generation, mini, micro = _values(_rl(tmp_path, "ppo_trainer.yaml", text))
    assert (samples, prompts, generation, mini, micro["actor"]) == (4, 256, 1024, 64, 2)


SETTINGS_RULES = [r for r in RULES if any(n.startswith("settings.") for n in r.needs)]


@pytest.mark.parametrize("rule", SETTINGS_RULES, ids=lambda r: r.code)
def test_a_rule_on_a_framework_s_own_settings_has_an_example_of_each_framework_it_applies_to(tmp_path, rule):
    """The computed list is not too long: typed settings are the adapter's own, so a rule that
    reads them applies only where its examples show it. (Two adapters naming a settings field
    alike would silently widen the rule: this fails instead.)"""
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file

    shown = set()
    recorder = (Rule(code="BL000", name="record", severity="info", summary="",
                     check=lambda plan: shown.add(plan.framework) or ()),)
    for index, e in enumerate(rule.examples):
        path = tmp_path / str(index) / e.filename
        path.parent.mkdir()
        path.write_text(e.text)
        lint_file(str(path), Settings(root=str(path.parent)), Options(e.world_size, e.global_batch), recorder)
    scope = applies.frameworks_for(rule)
    assert scope is not None and set(scope) <= shown, f"{rule.code} applies to {scope}, its examples show {shown}"
