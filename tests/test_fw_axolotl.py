"""axolotl: the adapter's facts, and the upstream configs linted with the world
size they were written for. Behaviour checked against axolotl @ 067b021
(validate_config + normalize_config run on the same inputs)."""

import os

import pytest

from conftest import CORPUS


def codes(result):
    return sorted(d.code for d in result.diagnostics)


def read(path):
    with open(os.path.join(CORPUS, path), encoding="utf-8") as handle:
        return handle.read()


needs_corpus = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is not present")

BASE = "base_model: NousResearch/Llama-3.2-1B\n"


# -- batch arithmetic ------------------------------------------------------------------------

def test_batch_size_leaves_accumulation_at_its_default(lint):
    # micro 1 + batch_size 4: axolotl trains with GA 1 (the schema default), so the global batch on
    # 4 GPUs is 1 x 1 x 4 = 4, not 16.
    result = lint("bs.yaml", BASE + "micro_batch_size: 1\nbatch_size: 4\n", world_size=4, global_batch=16)
    assert codes(result) == ["BL102", "BL151"]
    target = next(d for d in result.diagnostics if d.code == "BL102")
    assert "the global batch is 4" in target.message
    assert "gradient_accumulation_steps (default 1)" in " ".join((target.message,) + target.notes)
    ignored = next(d for d in result.diagnostics if d.code == "BL151")
    assert ignored.span.line == 3 and "gradient_accumulation_steps: 4" in ignored.fix


def test_accumulation_written_as_null_is_derived_by_floor(lint):
    result = lint("null.yaml", BASE + "micro_batch_size: 3\ngradient_accumulation_steps:\nbatch_size: 8\n")
    [finding] = result.diagnostics
    assert finding.code == "BL151" and finding.severity == "warning"
    said = " ".join((finding.message,) + finding.notes)
    assert "floor division, 8 // 3 = 2" in said and "6 x dp" in finding.message
    zero = lint("zero.yaml", BASE + "micro_batch_size: 4\ngradient_accumulation_steps:\nbatch_size: 2\n")
    assert [(d.code, d.severity) for d in zero.diagnostics] == [("BL151", "error")]


def test_batch_keys_the_validator_refuses(lint):
    both = lint("both.yaml", BASE + "gradient_accumulation_steps: 2\nbatch_size: 8\n")
    assert codes(both) == ["BL150"] and both.diagnostics[0].span.line == 3
    assert [(d.code, d.severity) for d in lint("alone.yaml", BASE + "batch_size: 8\n").diagnostics] == [("BL150", "error")]
    assert codes(lint("ok.yaml", BASE + "micro_batch_size: 2\ngradient_accumulation_steps: 2\n")) == []


@pytest.mark.parametrize("pin,flagged", [("axolotl==0.18.0", True), ("axolotl==0.19.0", False), (None, False)])
def test_one_batch_key_is_refused_up_to_0_18(tmp_path, lint, pin, flagged):
    """0.19.0 takes micro_batch_size or gradient_accumulation_steps alone (or none: both default to 1);
    0.5.0-0.18.0 refuse fewer than two keys (validation.py:218-226 @ v0.18.0)."""
    if pin:
        (tmp_path / "requirements.txt").write_text(pin + "\n")
    for name, text in (("one.yaml", BASE + "micro_batch_size: 2\n"), ("none.yaml", BASE + "sequence_len: 2048\n")):
        assert codes(lint(name, text)) == (["BL150"] if flagged else []), (pin, name)


@pytest.mark.parametrize("version,severity", [("0.12.2", "warning"), ("0.4.0", None)])
def test_a_copy_of_axolotl_says_its_release(tmp_path, lint, version, severity):
    """A copy of axolotl's package in the project (axolotl/__init__.py's __version__, 0.6.0-0.13.1) is the
    release in force; a git pin of a tag before the first PyPI release is a release too. BL151's default
    accumulation holds from 0.5.0."""
    if version == "0.4.0":
        (tmp_path / "requirements.txt").write_text("axolotl @ git+https://github.com/axolotl-ai-cloud/axolotl@v0.4.0\n")
    else:
        (tmp_path / "axolotl").mkdir()
        (tmp_path / "axolotl" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    found = [(d.code, d.severity) for d in lint("bs.yaml", BASE + "micro_batch_size: 1\nbatch_size: 4\n").diagnostics]
    assert found == ([("BL151", severity)] if severity else [])


def test_data_parallel_divides_by_context_and_tensor_parallel(lint):
    text = BASE + ("micro_batch_size: 1\ngradient_accumulation_steps: 4\ncontext_parallel_size: 2\n"
                   "tensor_parallel_size: 2\nattn_implementation: flash_attention_2\nfsdp_version: 2\n")
    # W 8 / (cp 2 x tp 2) = dp 2 -> 1 x 4 x 2 = 8.
    assert lint("dp.yaml", text, world_size=8, global_batch=8).diagnostics == []
    [finding] = lint("dp16.yaml", text, world_size=8, global_batch=16).diagnostics
    assert "x dp (2)" in " ".join((finding.message,) + finding.notes)
    # tp x cp = 4 does not divide 6: the mesh cannot be built.
    assert codes(lint("dp6.yaml", text, world_size=6)) == ["BL202"]


def test_deprecated_sequence_parallel_degree_is_context_parallel(lint):
    text = BASE + "micro_batch_size: 1\ngradient_accumulation_steps: 1\nsequence_parallel_degree: 4\nattn_implementation: sdpa\n"
    result = lint("sp.yaml", text, world_size=6)
    assert codes(result) == ["BL202", "BL250"]
    assert all(d.span.line == 4 for d in result.diagnostics)


def test_fsdp1_builds_no_mesh(lint):
    text = BASE + ("micro_batch_size: 1\ngradient_accumulation_steps: 1\ntensor_parallel_size: 2\n"
                   "fsdp_config:\n  fsdp_offload_params: true\n")
    assert lint("fsdp1.yaml", text, world_size=3).diagnostics == []
    assert codes(lint("fsdp2.yaml", text + "fsdp_version: 2\n", world_size=3)) == ["BL202"]


def test_grpo_needs_a_full_group_per_rank(lint):
    text = BASE + "rl: grpo\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\ntrl:\n  num_generations: 4\n"
    assert lint("g.yaml", text, world_size=2).diagnostics == []  # 8 >= 4 x 2
    [finding] = lint("g4.yaml", text, world_size=4).diagnostics  # 8 < 4 x 4
    assert finding.code == "BL170" and "is less than 16" in finding.message and "= 16" in " ".join(finding.notes)


def test_attention_legacy_flags_in_axolotl_order(lint):
    text = BASE + "micro_batch_size: 1\ngradient_accumulation_steps: 1\ncontext_parallel_size: 2\n"
    assert lint("fa.yaml", text + "flash_attention: true\n").diagnostics == []
    # xformers_attention wins over flash_attention (enums.py:117-124): not a flash-attn backend.
    assert codes(lint("xf.yaml", text + "flash_attention: true\nxformers_attention: true\n")) == ["BL250"]


# -- the upstream configs, at the world sizes they name ---------------------------------------

@needs_corpus
@pytest.mark.parametrize("name", ["qwen3_30ba3b_ep_fft_4gpu.yaml", "qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml",
                                  "qwen3_30ba3b_ep_lora_4gpu.yaml"])
def test_expert_parallel_examples_fit_the_4_gpus_they_name(lint, name):
    text = read(f"axolotl/examples/expert_parallel/{name}")
    assert lint(name, text, world_size=4).diagnostics == []
    # ep x dp_shard x tp x cp must be W exactly (integrations/expert_parallel/plugin.py:283-290).
    assert codes(lint(name, text, world_size=8)) == ["BL202"]


@needs_corpus
def test_long_context_examples_need_8_gpus(lint):
    for name in ("llama3-8b-deepspeed-alst.yaml", "llama3-8b-fsdp2-alst.yaml"):
        text = read(f"axolotl/examples/alst/{name}")
        assert lint(name, text, world_size=8).diagnostics == []
        assert codes(lint(name, text, world_size=4)) == ["BL202"]


@needs_corpus
def test_archived_batch_size_configs(lint):
    result = lint("config-3b.yml", read("axolotl/examples/archived/redpajama/config-3b.yml"))
    [finding] = result.diagnostics
    assert finding.code == "BL151" and finding.span.line == 32
    assert "1/4 of the planned epochs" in " ".join((finding.message,) + finding.notes)
    # batch_size equal to micro_batch_size means no accumulation: nothing lost.
    assert lint("qlora.yml", read("axolotl/examples/archived/cerebras/qlora.yml")).diagnostics == []
