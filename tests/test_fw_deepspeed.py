"""DeepSpeed JSON: how the adapter reads precision, its typed settings, and the DeepSpeed-only rules
(BL520 duplicate keys, BL521 offload the stage ignores) beyond their own examples.
tests/differential/test_deepspeed_batch.py has DeepSpeed itself judge BL1xx, BL501, BL520."""

import json

import pytest

from conftest import write


def codes(result):
    return sorted(d.code for d in result.diagnostics)


def ds(**sections):
    return json.dumps({"train_micro_batch_size_per_gpu": 2, **sections}, indent=2) + "\n"


# -- precision (BL501) as DeepSpeed reads it ---------------------------------------------------------

def test_bfloat16_is_the_old_spelling_of_bf16(lint):
    [finding] = lint("ds.json", ds(fp16={"enabled": True}, bfloat16={"enabled": True})).diagnostics
    assert finding.code == "BL501" and "bfloat16.enabled" in finding.message


def test_bf16_shadows_bfloat16_even_without_enabled(lint):
    # DeepSpeed reads `bfloat16` only when `bf16` is absent (or null): here bf16 is off.
    assert codes(lint("ds.json", ds(fp16={"enabled": True}, bf16={}, bfloat16={"enabled": True}))) == []
    assert codes(lint("ds2.json", ds(fp16={"enabled": True}, bf16=None, bfloat16={"enabled": True}))) == ["BL501"]


def test_enabled_is_a_pydantic_bool_and_auto_is_off(lint):
    assert codes(lint("a.json", ds(fp16={"enabled": "true"}, bf16={"enabled": 1}))) == ["BL501"]
    assert codes(lint("b.json", ds(fp16={"enabled": "auto"}, bf16={"enabled": True}))) == []
    assert codes(lint("c.json", ds(fp16={"enabled": "off"}, bf16={"enabled": True}))) == []


def test_a_fragment_without_batch_keys_is_still_not_flagged(lint):
    # Neither train_batch_size nor the micro batch: a fragment a wrapper completes.
    text = json.dumps({"gradient_accumulation_steps": 4, "zero_optimization": {"stage": 2}})
    result = lint("fragment.json", text)
    assert result.framework == "deepspeed" and result.diagnostics == []


# -- BL520 duplicate keys ----------------------------------------------------------------------------

def test_every_repeat_is_reported_where_it_is_written(lint):
    text = (
        '{\n  "train_batch_size": 16,\n  "steps_per_print": 1,\n  "steps_per_print": 2,\n'
        '  "optimizer": {"type": "AdamW", "params": {"lr": 1e-5, "lr": 2e-5}},\n  "steps_per_print": 3\n}\n'
    )
    found = [(d.code, d.span.line, d.span.column) for d in lint("ds.json", text).diagnostics]
    assert found == [("BL520", 4, 3), ("BL520", 5, 57), ("BL520", 6, 3)]
    first = lint("ds.json", text).diagnostics[0]
    assert '"steps_per_print" is given more than once in the object that starts on line 1' in first.message


def test_duplicates_in_objects_inside_arrays(lint):
    text = '{"train_batch_size": 8, "x": [{"a": 1}, {"b": 1, "b": 2}]}'
    assert codes(lint("ds.json", text)) == ["BL520"]


# -- BL521 offload the stage ignores -----------------------------------------------------------------

def zero(**settings):
    return ds(zero_optimization=settings)


def test_offload_param_below_stage_3(lint):
    for stage in (0, 1, 2):
        [finding] = lint(f"z{stage}.json", zero(stage=stage, offload_param={"device": "nvme"})).diagnostics
        assert finding.code == "BL521" and f"at ZeRO stage {stage}" in finding.message
        assert finding.related[0].message == f"zero_optimization.stage = {stage}"
    assert codes(lint("z3.json", zero(stage=3, offload_param={"device": "nvme"}))) == []


def test_offload_optimizer_only_at_stage_0(lint):
    assert codes(lint("z0.json", zero(stage=0, offload_optimizer={"device": "cpu"}))) == ["BL521"]
    assert codes(lint("z0_old.json", zero(stage=0, cpu_offload=True))) == ["BL521"]
    for stage in (1, 2, 3):
        assert codes(lint(f"z{stage}.json", zero(stage=stage, offload_optimizer={"device": "cpu"}))) == []


def test_offload_is_judged_only_against_a_written_numeric_stage(lint):
    # "auto" (filled by Accelerate from its own settings), a missing stage (a wrapper may set it)
    # and a device of "none" or "auto" (no offload) give nothing.
    assert codes(lint("a.json", zero(stage="auto", offload_param={"device": "cpu"}))) == []
    assert codes(lint("b.json", zero(offload_param={"device": "cpu"}))) == []
    assert codes(lint("c.json", zero(stage=2, offload_param={"device": "none"}))) == []
    assert codes(lint("d.json", zero(stage=2, offload_param={"device": "auto"}))) == []
    assert codes(lint("e.json", zero(stage=True, offload_param={"device": "cpu"}))) == []


def test_both_offloads_at_stage_0(lint):
    text = zero(stage=0, offload_param={"device": "cpu"}, offload_optimizer={"device": "cpu"})
    assert codes(lint("ds.json", text)) == ["BL521", "BL521"]


# -- the adapter's typed facts, for its own plans and for a config a TrainingArguments file names -----

def test_zero_settings_are_typed_by_the_adapter(lint):
    from batchlint.frameworks import deepspeed
    from batchlint.frameworks.facts import Outside
    from batchlint.sources import read

    text = zero(stage=2, offload_param={"device": "nvme"}, cpu_offload=True)
    settings = deepspeed.plan(read("ds.json", text, "json"), Outside()).settings
    assert (settings.zero.stage.key, settings.zero.stage.value) == ("zero_optimization.stage", 2)
    assert (settings.zero.offload_param.key, settings.zero.offload_param.value) == ("zero_optimization.offload_param.device", "nvme")
    assert (settings.zero.offload_optimizer.key, settings.zero.offload_optimizer.value) == ("zero_optimization.cpu_offload", True)
    assert deepspeed.read_settings(read("s.json", zero(stage="2"), "json").root).zero.stage is None
    assert deepspeed.read_settings(read("n.json", ds(), "json").root).zero is None


def test_a_linked_config_gives_the_adapters_facts_and_is_read_only_for_bl120(tmp_path):
    from unittest import mock

    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file
    from batchlint.frameworks import linked
    from batchlint.project import ProjectView
    from batchlint.rules import RULES
    from batchlint.sources import read

    from conftest import write

    write(tmp_path, "ds.json", ds(gradient_accumulation_steps="auto", fp16={"enabled": False}))
    config = write(tmp_path, "sft.yaml", "per_device_train_batch_size: 4\ndeepspeed: ds.json\n")
    with mock.patch.object(linked, "_read", wraps=linked._read) as reader:
        others = tuple(r for r in RULES if r.code != "BL120")
        lint_file(config, Settings(root=str(tmp_path)), Options(), others)
        assert reader.call_count == 0, "the link is resolved only when a rule asks"
        lint_file(config, Settings(root=str(tmp_path)), Options(), RULES)
        assert reader.call_count == 1
    with open(config, encoding="utf-8") as handle:
        values = linked.deepspeed_config(read(config, handle.read(), "yaml"), ProjectView()).settings.trainer_values
    assert (values.train_micro_batch_size_per_gpu.value, values.gradient_accumulation_steps.value) == (2, "auto")
    assert (values.fp16_enabled.key, values.fp16_enabled.value, values.bf16_enabled) == ("fp16.enabled", False, None)


# -- which DeepSpeed release the project runs (lint/premise.py) ------------------------------------

@pytest.mark.parametrize("version, severity", [
    ("0.6.0", "error"),  # "bf16" is read (and refused beside fp16) from 0.6.0 on
    ("0.5.10", None),  # only "bfloat16" is read: the "bf16" section is ignored
])
def test_a_copy_of_deepspeed_in_the_project_decides_bf16(lint, tmp_path, version, severity):
    (tmp_path / ".git").mkdir()  # the project's top, where DeepSpeed's repository is checked in
    write(tmp_path, "deepspeed/__init__.py", "")
    write(tmp_path, "version.txt", version + "\n")
    result = lint("configs/ds.json", ds(fp16={"enabled": True}, bf16={"enabled": True}))
    assert [d.severity for d in result.diagnostics] == ([severity] if severity else [])


def test_the_bfloat16_spelling_is_refused_from_0_5_5(lint, tmp_path):
    write(tmp_path, "requirements.txt", "deepspeed>=0.5.5,<0.6\n")
    [finding] = lint("ds.json", ds(fp16={"enabled": True}, bfloat16={"enabled": True})).diagnostics
    assert (finding.code, finding.severity) == ("BL501", "error")


@pytest.mark.parametrize("pin", ["deepspeed==0.3.1\n", "deepspeed==0.19.8\n"])
def test_duplicates_and_ignored_offload_hold_in_every_release(lint, tmp_path, pin):
    write(tmp_path, "requirements.txt", pin)
    text = '{\n  "train_batch_size": 8,\n  "train_batch_size": 8,\n' \
           '  "zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}\n}\n'
    assert [(d.code, d.severity) for d in lint("ds.json", text).diagnostics] == [
        ("BL520", "warning"), ("BL521", "warning")]
