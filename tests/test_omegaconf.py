"""OmegaConf interpolation in the YAML adapters whose frameworks read their configs through
OmegaConf (verl, NeMo, torchtune, llm-foundry): what each form resolves to, as OmegaConf 2.3
resolves it, both sides each time; what cannot be known stays unknown, never an error."""

import pytest

from batchlint.document import Mapping, Scalar, Unknown
from batchlint.sources.omegaconf import Interpolated, resolve
from batchlint.sources.yaml import read_yaml

from conftest import run, write


def resolved(text: str, *path: str):
    """The node at `path` of `text` read and resolved."""
    return resolve(read_yaml("config.yaml", text)).root.get(*path)


BASE = """\
data:
  train_batch_size: 256
  max_prompt_length: 512
"""


# -- the forms, one by one -----------------------------------------------------------------------


def test_an_absolute_interpolation_keeps_the_target_type_and_where_it_is_written():
    node = resolved(BASE + "mini: ${data.train_batch_size}\n", "mini")
    assert isinstance(node, Interpolated) and node.value == 256
    assert (node.span.line, node.span.column) == (2, 21)  # the value, where data.train_batch_size writes it
    assert node.origin == "data.train_batch_size"
    assert [(hop.key, hop.span.line, hop.text) for hop in node.route] == [("mini", 4, "${data.train_batch_size}")]


def test_text_around_an_interpolation_makes_a_string():
    node = resolved(BASE + "name: run_${data.train_batch_size}\nflag: ${data.train_batch_size}x\n", "name")
    assert node.value == "run_256" and node.span.line == 4 and node.origin is None
    assert resolved(BASE + "flag: ${data.train_batch_size}x\n", "flag").value == "256x"


def test_relative_interpolations_start_from_the_value_s_own_container():
    text = BASE + "actor:\n  mini: 64\n  micro: ${.mini}\n  inner:\n    up: ${..mini}\n    same: ${.up}\n"
    assert resolved(text, "actor", "micro").value == 64
    assert resolved(text, "actor", "inner", "up").value == 64
    assert resolved(text, "actor", "inner", "same").value == 64  # a chain, each hop relative to its own place
    assert [hop.key for hop in resolved(text, "actor", "inner", "same").route] == ["actor.inner.same", "actor.inner.up"]
    # `${.mini}` one level down is a key that is not there: unknown, not the outer one.
    assert isinstance(resolved(text + "  deep:\n    x: ${.mini}\n", "actor", "deep", "x"), Unknown)
    assert isinstance(resolved(BASE + "x: ${...data}\n", "x"), Unknown)  # above the root


def test_oc_select_reads_the_key_else_its_default():
    text = BASE + "a:\n  found: ${oc.select:data.train_batch_size,16}\n  absent: ${oc.select:data.nothing,16}\n" \
        "  none: ${oc.select:data.nothing}\n  near: ${oc.select:.found, 2}\n"
    assert resolved(text, "a", "found").value == 256 and resolved(text, "a", "found").origin == "data.train_batch_size"
    absent = resolved(text, "a", "absent")
    assert absent.value == 16 and absent.origin is None
    assert (absent.span.line, absent.span.column, absent.span.end_column) == (6, 36, 38)  # on the default's characters
    assert resolved(text, "a", "none").value is None
    assert resolved(text, "a", "near").value == 256


def test_oc_select_of_a_key_a_composed_file_leaves_out_is_unknown():
    """With a Hydra defaults list the key may come from the configs it composes: the default is no fact."""
    text = "defaults:\n  - ppo_trainer\n  - _self_\n" + BASE + "a: ${oc.select:data.nothing,16}\nb: ${data.train_batch_size}\n"
    assert isinstance(resolved(text, "a"), Unknown) and "composed" in resolved(text, "a").why
    assert resolved(text, "b").value == 256  # a key the file writes wins over the composed ones


def test_oc_env_is_unknown_unless_a_default_is_given(monkeypatch):
    monkeypatch.setenv("NGPUS", "2")  # the machine that lints is not the one that trains: never read
    text = "a: ${oc.env:NGPUS}\nb: ${oc.env:NGPUS,8}\nc: ${oc.decode:${oc.env:NGPUS,4}}\nd: ${oc.env:NGPUS,null}\n"
    assert isinstance(resolved(text, "a"), Unknown) and "when the job starts" in resolved(text, "a").why
    default = resolved(text, "b")
    assert default.value == 8 and "assumed from the default" in default.assumed
    assert resolved(text, "c").value == 4 and resolved(text, "c").assumed
    assert resolved(text, "d").value is None


def test_escaped_interpolations_are_text():
    assert resolved(BASE + "a: \\${data.train_batch_size}\n", "a").value == "${data.train_batch_size}"
    assert resolved(BASE + "a: \\\\${data.train_batch_size}\n", "a").value == "\\256"  # \\ before one: halved
    assert resolved(BASE + "a: 'cost: $5'\n", "a").value == "cost: $5"  # no `${`: not an interpolation


@pytest.mark.parametrize("value, why", [
    ("${b}\nb: ${a}", "cycle"),
    ("${a}", "cycle"),
    ("${multiply:${data.train_batch_size},2}", "resolver multiply"),
    ("${hydra:runtime.cwd}", "resolver hydra"),
    ("${data.nothing}", "not in the config"),
    ("${data.train_batch_size", "closing brace"),
    ("${oc.select:data.x,~/path}", "not allowed unquoted"),
    ("${data}", None),  # a whole mapping: it stays one
])
def test_what_cannot_be_known_is_unknown_never_an_error(value, why):
    node = resolved(BASE + f"a: {value}\n", "a")
    if why is None:
        assert isinstance(node, Mapping) and node.get("train_batch_size").value == 256
    else:
        assert isinstance(node, Unknown) and why in node.why


def test_an_interpolation_to_its_own_container_is_unknown():
    assert isinstance(resolved("a:\n  b: ${a}\n", "a", "b"), Unknown)
    assert isinstance(resolved("a:\n  b: ${oc.select:a,1}\n", "a", "b"), Unknown)


def test_nested_interpolations_name_keys_and_resolvers_take_typed_arguments():
    text = BASE + "which: train_batch_size\na: ${data.${which}}\nb: ${data[train_batch_size]}\n" \
        "c: ${oc.select:data.nothing,[1, 2]}\nd: ${oc.select:data.nothing,'x y'}\ne: ${oc.select:data.nothing, true}\n"
    assert resolved(text, "a").value == 256 and resolved(text, "b").value == 256
    assert resolved(text, "c").value == [1, 2]
    assert resolved(text, "d").value == "x y" and resolved(text, "e").value is True


def test_a_document_without_interpolations_is_the_same_document():
    doc = read_yaml("config.yaml", BASE + "name: 'plain $text {braces}'\n")
    assert resolve(doc) is doc


def test_bounds_keep_a_blowup_unknown():
    lines = ["v0: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]
    lines += [f"v{i}: ${{v{i - 1}}}${{v{i - 1}}}${{v{i - 1}}}${{v{i - 1}}}" for i in range(1, 40)]
    node = resolved("\n".join(lines) + "\n", "v39")
    assert isinstance(node, Unknown) and "characters" in node.why
    # A chain written from its far end is followed to a bound (each step takes stack), then unknown.
    deep = "".join(f"a{i}: ${{a{i - 1}}}\n" for i in range(199, 0, -1)) + "a0: 1\n"
    assert isinstance(resolved(deep, "a199"), Unknown) and "deep" in resolved(deep, "a199").why
    assert resolved(deep, "a20").value == 1
    nested = "a: " + "${oc.decode:" * 300 + "1" + "}" * 300 + "\n"
    assert isinstance(resolved(nested, "a"), Unknown)


# -- the adapters: findings through interpolations -----------------------------------------------

VERL = """\
defaults:
  - ppo_trainer
  - _self_
batch:
  prompts: {prompts}
  mini: 128
data:
  train_batch_size: ${{batch.prompts}}
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: ${{batch.mini}}
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
  nnodes: 1
"""


def test_verl_batch_sizes_kept_in_one_block_are_checked(lint):
    """verl refuses a mini-batch larger than the train batch (BL141): through both interpolations."""
    result = lint("grpo.yaml", VERL.format(prompts=64))
    [finding] = result.diagnostics
    assert (finding.code, finding.span.line) == ("BL141", 6)  # batch.mini: 128, the value to edit
    assert finding.message == "train_batch_size 64 is smaller than the actor's mini-batch 128"
    assert "batch.prompts (64) prompts per step, batch.mini (128) for the actor." in finding.notes
    notes = [(r.message, r.span.line) for r in finding.related]
    assert ("`actor_rollout_ref.actor.ppo_mini_batch_size: ${batch.mini}` reads this value", 11) in notes
    assert ("`data.train_batch_size: ${batch.prompts}` reads this value", 8) in notes
    assert lint("grpo.yaml", VERL.format(prompts=256)).diagnostics == []


def test_verl_critic_values_inherited_through_oc_select_are_not_reported_twice(lint):
    """critic/critic.yaml takes the actor's mini batch through `${oc.select:...}`: one mistake, one finding."""
    text = VERL.replace("defaults:\n  - ppo_trainer\n  - _self_\n", "").format(prompts=64) + (
        "critic:\n  enable: true\n  strategy: fsdp\n"
        "  ppo_mini_batch_size: ${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}\n"
        "  ppo_micro_batch_size: null\n  ppo_micro_batch_size_per_gpu: ${oc.select:.ppo_micro_batch_size,null}\n"
        "  rollout_n: ${oc.select:actor_rollout_ref.rollout.n,1}\n")
    assert [d.code for d in lint("grpo.yaml", text).diagnostics] == ["BL141"]


NEMO = """\
name: megatron_gpt
trainer:
  devices: {devices}
  num_nodes: 1
model:
  micro_batch_size: 4
  global_batch_size: {gbs}
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
"""


def test_nemo_w_from_an_environment_default_is_said_to_be_assumed(lint):
    result = lint("megatron_gpt_config.yaml", NEMO.format(devices="${oc.env:NGPUS,8}", gbs=100))
    [finding] = result.diagnostics
    assert finding.code == "BL103" and "dp 8" in finding.message
    assert any("assumed from the default of `${oc.env:NGPUS,8}`" in r.message and r.span.line == 3
               for r in finding.related)
    assert lint("megatron_gpt_config.yaml", NEMO.format(devices="${oc.env:NGPUS,8}", gbs=128)).diagnostics == []
    # Without a default W is not known: no verdict that needs it.
    assert lint("megatron_gpt_config.yaml", NEMO.format(devices="${oc.env:NGPUS}", gbs=100)).diagnostics == []


def test_nemo_values_through_interpolation_are_explained(tmp_path):
    text = NEMO.format(devices="${.gpus}\n  gpus: 8", gbs="${.micro_batch_size}")
    result = run("explain", write(tmp_path, "megatron_gpt_config.yaml", text))
    assert "world size W                  8" in result.stdout.replace("  ", "  ") or "8  trainer.devices" in result.stdout
    assert "declared global batch" in result.stdout and "model.micro_batch_size, line 7" in result.stdout


# -- launch lines: overrides flow through the interpolations that read them ----------------------

FOUNDRY = """\
variables:
  global_train_batch_size: 256
  max_seq_len: 2048
max_seq_len: ${variables.max_seq_len}
global_train_batch_size: ${variables.global_train_batch_size}
device_train_microbatch_size: 8
model:
  name: mpt_causal_lm
train_loader:
  name: text
"""


@pytest.mark.parametrize("override, flagged", [("250", True), ("256", False)])
def test_a_launch_override_changes_every_value_interpolating_it(tmp_path, override, flagged):
    write(tmp_path, "yamls/mpt-125m.yaml", FOUNDRY)
    script = write(tmp_path, "launch.sh", "#!/bin/bash\ncomposer -n 8 train.py yamls/mpt-125m.yaml "
                   f"variables.global_train_batch_size={override}\n")
    result = run("check", "--format", "json", script)
    import json

    found = [(d["code"], d["path"].rsplit("/", 1)[-1], d["line"]) for d in json.loads(result.stdout)]
    if flagged:
        # 250 % 8: the value at fault is the override on the launch line, read through the interpolation.
        assert found == [("BL103", "launch.sh", 2)]
        notes = json.loads(result.stdout)[0]["related"]
        assert any("`global_train_batch_size: ${variables.global_train_batch_size}` reads this value" in n["message"]
                   and n["path"].endswith("mpt-125m.yaml") and n["line"] == 5 for n in notes)
    else:
        assert found == []


def test_a_template_placeholder_and_an_interpolation_do_not_fight(lint):
    """A YAML that parses keeps `${...}` for OmegaConf; the template reading is only for one that does not."""
    result = lint("megatron_gpt_config.yaml", NEMO.format(devices="${oc.env:NGPUS,8}", gbs="{{ gbs }}"))
    assert result.diagnostics == [] and result.framework == "nemo"


def test_a_value_that_is_no_interpolation_is_untouched():
    node = resolved("a: 8\nb: '8'\n", "b")
    assert type(node) is Scalar and node.value == "8" and node.quoted
