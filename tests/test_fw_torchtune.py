"""torchtune: which YAML files the adapter takes, the recipe traits and facts
it reads, and the shipped configs' own traps (turning on what their comments
suggest), linted with the world sizes they were written for."""

import os

import pytest

from batchlint.frameworks import torchtune
from batchlint.frameworks.facts import Outside
from batchlint.plan import Fact
from batchlint.sources.yaml import read_yaml

from conftest import CORPUS, lint_text

CONFIGS = os.path.join(CORPUS, "torchtune", "recipes", "configs")
needs_corpus = pytest.mark.skipif(not os.path.isdir(CONFIGS), reason="../shared/corpus is not present")


def corpus_text(name):
    with open(os.path.join(CONFIGS, name), encoding="utf-8") as handle:
        return handle.read()


def codes(result):
    return sorted(d.code for d in result.diagnostics)


def plan_of(name, text, world_size=None):
    world = Fact(world_size, "world size", None, "--world-size") if world_size else None
    return torchtune.plan(read_yaml(name, text), Outside(world_size=world))


# -- which files are torchtune's ---------------------------------------------------------

def test_yaml_without_component_mappings_is_not_torchtune(lint):
    # `_component_` only in a comment or a value: not a torchtune builder mapping.
    text = "# set _component_ to your model\nbatch_size: 2\nmodel: _component_\n"
    assert lint("plain.yaml", text).framework is None


def test_axolotl_and_hf_configs_keep_their_adapters(lint):
    axolotl = "base_model: NousResearch/Llama-3.2-1B\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
    hf = "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n"
    assert lint("axolotl.yaml", axolotl).framework == "axolotl"
    assert lint("sft.yaml", hf).framework not in (None, "torchtune")


@needs_corpus
def test_recipe_traits_of_shipped_configs():
    expected = {
        "llama3_1/8B_full.yaml": {"training", "parallel_dims"},
        "llama3_1/8B_lora_single_device.yaml": {"training", "lora", "single_device"},
        "llama3_1/8B_full_dpo.yaml": {"training", "dpo"},
        "mistral/7B_full_ppo_low_memory.yaml": {"training", "ppo", "single_device"},  # header: ppo_..._single_device.py
        "llama3_1/8B_qat_lora.yaml": {"training", "lora", "quantizer"},
        "generation.yaml": set(),  # no optimizer: not a training config
    }
    for name, traits in expected.items():
        assert torchtune.traits(read_yaml(name, corpus_text(name))) == traits, name


# -- facts -------------------------------------------------------------------------------------

@needs_corpus
def test_layout_and_dp_of_the_70b_multinode_config():
    """tensor_parallel_dim 8 with data_parallel_shard_dim -1 (2 nodes x 8 H100 in its header)."""
    text = corpus_text("llama3_3/70B_full_multinode.yaml")
    plan = plan_of("70B_full_multinode.yaml", text, world_size=16)
    assert [f.value for f in plan.layout] == [1, -1, 8, 1]
    assert plan.data_parallel.value == 2  # dp_shard = 16 // 8
    assert plan.micro_batch.value == 4 and plan.grad_accum.value == 1
    assert plan_of("70B_full_multinode.yaml", text).data_parallel is None  # W unknown


@needs_corpus
def test_multinode_config_on_one_node_of_four_gpus(tmp_path):
    text = corpus_text("llama3_3/70B_full_multinode.yaml")
    found = lint_text(tmp_path, "70B_full_multinode.yaml", text, world_size=4).diagnostics
    assert [(d.code, d.span.line) for d in found] == [("BL202", 51)]
    assert codes(lint_text(tmp_path, "70B_full_multinode.yaml", text, world_size=16)) == []


@needs_corpus
def test_global_batch_against_a_target(tmp_path):
    text = corpus_text("llama3_3/70B_full_multinode.yaml")
    # 4 x GA 1 x dp 2 = 8 sequences per step, not the 64 the user means.
    found = lint_text(tmp_path, "70B_full_multinode.yaml", text, world_size=16, global_batch=64).diagnostics
    assert [d.code for d in found] == ["BL102"] and "8" in found[0].message
    assert codes(lint_text(tmp_path, "70B_full_multinode.yaml", text, world_size=16, global_batch=8)) == []


# -- the shipped configs' own suggestions -------------------------------------------------------

@needs_corpus
def test_packing_as_the_comment_suggests_needs_a_max_seq_len(tmp_path):
    """`packed: False  # True increases speed` next to `max_seq_len: null`: following the
    comment alone makes alpaca_cleaned_dataset raise at start-up."""
    text = corpus_text("llama3_1/8B_full.yaml")
    assert codes(lint_text(tmp_path, "8B_full.yaml", text)) == []
    packed = text.replace("packed: False  # True increases speed", "packed: True")
    found = lint_text(tmp_path, "8B_full.yaml", packed).diagnostics
    assert [(d.code, d.span.line) for d in found] == [("BL310", 32)]
    fixed = packed.replace("max_seq_len: null", "max_seq_len: 4096")
    assert codes(lint_text(tmp_path, "8B_full.yaml", fixed)) == []


@needs_corpus
def test_optimizer_in_bwd_config_with_accumulation(tmp_path):
    """8B_full_single_device.yaml: `optimizer_in_bwd: True  # ... Requires gradient_accumulation_steps=1`."""
    text = corpus_text("llama3_1/8B_full_single_device.yaml")
    assert codes(lint_text(tmp_path, "8B_full_single_device.yaml", text)) == []
    raised = text.replace("gradient_accumulation_steps: 1", "gradient_accumulation_steps: 8")
    assert codes(lint_text(tmp_path, "8B_full_single_device.yaml", raised)) == ["BL512"]
    # The LoRA config's recipe never reads optimizer_in_bwd.
    lora = corpus_text("llama3_1/8B_lora_single_device.yaml")
    lora = lora.replace("gradient_accumulation_steps: 8", "gradient_accumulation_steps: 8\noptimizer_in_bwd: True")
    assert "BL512" not in codes(lint_text(tmp_path, "8B_lora_single_device.yaml", lora))


@pytest.mark.parametrize("dims", [
    "data_parallel_replicate_dim: -1\ntensor_parallel_dim: -1\ndata_parallel_shard_dim: 2\ncontext_parallel_dim: 4\n",
    "data_parallel_replicate_dim: 0\ndata_parallel_shard_dim: -1\n",
    "data_parallel_replicate_dim: 1\ndata_parallel_shard_dim: -2\ntensor_parallel_dim: -4\n",
])
def test_degrees_below_one_give_no_data_parallel_size(dims):
    """-1 x 2 x -1 x 4 multiplies to W 8, but a negative degree is no layout: dp used to come
    out as -2. Degrees below 1 are BL211's finding; dp stays unknown."""
    text = ("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\noptimizer:\n  _component_: torch.optim.AdamW\n"
            "batch_size: 2\ngradient_accumulation_steps: 1\n" + dims)
    assert plan_of("8B_full.yaml", text, world_size=8).data_parallel is None


# -- which torchtune release refuses: the rules' windows (lint/premise.py) -----------------------------

def test_every_pypi_release_is_known_oldest_first():
    releases = torchtune.FRAMEWORK.distribution.releases
    assert releases == ("0.0.1", "0.1.0", "0.1.1", "0.2.0", "0.2.1", "0.3.0", "0.3.1", "0.4.0", "0.5.0", "0.6.0", "0.6.1")


def test_a_checkout_of_torchtune_is_judged_by_its_version_txt(tmp_path):
    """torchtune's repository writes its release in version.txt (torchtune/__init__.py has
    `__version__ = ""`): a fork checked in beside the configs is that release."""
    from batchlint import versions

    os.makedirs(tmp_path / ".git")
    for name, text in (("torchtune/__init__.py", '__version__ = ""\n'), ("version.txt", "0.3.1\n"),
                       ("recipes/configs/full.yaml", "batch_size: 2\n")):
        path = tmp_path / name
        os.makedirs(path.parent, exist_ok=True)
        path.write_text(text)
    versions._cache.clear()
    found = versions.release(torchtune.FRAMEWORK.distribution, str(tmp_path / "recipes/configs/full.yaml"))
    versions._cache.clear()
    assert found.version == "0.3.1" and found.where.startswith("version.txt")


_IN_BWD = """\
{header}model:
  _component_: torchtune.models.llama3_2.llama3_2_1b
optimizer:
  _component_: torch.optim.AdamW
batch_size: 4
optimizer_in_bwd: True
gradient_accumulation_steps: 8
{extra}"""
_SINGLE_HEADER = "# Config for single device full finetuning in full_finetune_single_device.py\n"


def _pinned(tmp_path, name, text, pin=None):
    os.makedirs(tmp_path, exist_ok=True)
    if pin is not None:
        (tmp_path / "requirements.txt").write_text(f"torchtune=={pin}\n" if pin[0].isdigit() else pin + "\n")
    return [(d.code, d.severity) for d in lint_text(tmp_path, name, text).diagnostics if d.code == "BL512"]


@pytest.mark.parametrize("header, extra, refused, allowed, unpinned", [
    (_SINGLE_HEADER, "", "0.1.0", "0.0.1", "info"),  # full_finetune_single_device: accumulation from its first release
    ("", "", "0.4.0", "0.3.1", "info"),  # full_finetune_distributed read no optimizer_in_bwd before 0.4.0
    ("", "quantizer:\n  _component_: torchtune.training.quantization.Int8DynActInt4WeightQATQuantizer\n",
     "0.5.0", "0.4.0", "info"),  # qat_distributed
    ("", "early_exit_params:\n  scale: 1.0\n", "0.5.0", "0.4.0", "info"),
    # full_dpo_distributed and PPO refuse from their recipe's first release: no release that runs them accepts it
    ("", "loss:\n  _component_: torchtune.rlhf.loss.DPOLoss\n", "0.6.0", "0.5.0", "error"),
    (_SINGLE_HEADER.replace("full_finetune_single_device", "ppo_full_finetune_single_device"),
     "ppo_batch_size: 32\nforward_batch_size: 16\n", "0.3.0", "0.2.1", "error"),
], ids=["full-single-device", "full-distributed", "qat-distributed", "early-exit", "full-dpo", "ppo"])
def test_optimizer_in_bwd_with_accumulation_by_recipe_and_release(tmp_path, header, extra, refused, allowed, unpinned):
    text = _IN_BWD.format(header=header, extra=extra)
    assert _pinned(tmp_path / "in", "full.yaml", text, refused) == [("BL512", "error")]
    assert _pinned(tmp_path / "before", "full.yaml", text, allowed) == []
    assert _pinned(tmp_path / "unpinned", "full.yaml", text) == [("BL512", unpinned)]


def test_qat_single_device_exists_on_main_only(tmp_path):
    text = _IN_BWD.format(header=_SINGLE_HEADER.replace("full_finetune", "qat"),
                          extra="quantizer:\n  _component_: torchtune.training.quantization.Int8DynActInt4WeightQATQuantizer\n")
    assert _pinned(tmp_path, "qat.yaml", text, "0.6.1") == []


@pytest.mark.parametrize("pin", ["torchtune", "torchtune @ git+https://github.com/pytorch/torchtune.git@bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1",
                                 "0.6.1"], ids=["unpinned", "commit", "latest"])
def test_a_compiled_optimizer_step_beside_it_is_not_flagged(tmp_path, pin):
    """The refusal of `compile: True` with optimizer_in_bwd is on torchtune's main branch only
    (May 2025, after 0.6.1): the latest release and a project pinning a commit ran it."""
    text = _IN_BWD.format(header="", extra="compile: True\n").replace("gradient_accumulation_steps: 8", "gradient_accumulation_steps: 1")
    assert _pinned(tmp_path, "full.yaml", text, pin) == []


def test_tensor_parallel_in_lora_and_qat_is_ignored_by_every_release(tmp_path):
    base = ("model:\n  _component_: torchtune.models.llama3_3.{model}\noptimizer:\n  _component_: torch.optim.AdamW\n"
            "batch_size: 2\ngradient_accumulation_steps: 1\ntensor_parallel_dim: 8\n")
    qat = "quantizer:\n  _component_: torchtune.training.quantization.Int8DynActInt4WeightQATQuantizer\n"
    (tmp_path / "requirements.txt").write_text("torchtune==0.6.1\n")
    for name, text in (("lora.yaml", base.format(model="lora_llama3_3_70b")), ("qat.yaml", base.format(model="llama3_3_70b") + qat)):
        assert "BL215" not in codes(lint_text(tmp_path, name, text)), name
    assert [(d.code, d.severity) for d in lint_text(tmp_path, "full.yaml", base.format(model="llama3_3_70b")).diagnostics
            if d.code == "BL215"] == [("BL215", "error")]


@pytest.mark.parametrize("builder, refused, allowed", [
    ("stack_exchange_paired_dataset", "0.5.0", "0.4.0"),
    ("multimodal.the_cauldron_dataset", "0.3.1", "0.3.0"),
    ("multimodal.llava_instruct_dataset", "0.3.1", "0.3.0"),
    ("multimodal.multimodal_chat_dataset", "0.5.0", "0.4.0"),
])
def test_packing_an_unpackable_dataset_by_release(tmp_path, builder, refused, allowed):
    text = (f"model:\n  _component_: torchtune.models.llama2.lora_llama2_7b\n"
            f"dataset:\n  _component_: torchtune.datasets.{builder}\n  packed: True\n")
    for pin, expected in ((refused, [("BL311", "error")]), (allowed, [])):
        (tmp_path / pin).mkdir()
        (tmp_path / pin / "requirements.txt").write_text(f"torchtune=={pin}\n")
        assert [(d.code, d.severity) for d in lint_text(tmp_path / pin, "dpo.yaml", text).diagnostics] == expected, pin
