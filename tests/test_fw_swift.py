"""ms-swift: TrainingArguments configs, Megatron configs (plain and Ray), the
world size a file states, and the upstream examples linted with the world size
they were written for. Behaviour checked against ms-swift @ 3602360."""

import os

import pytest

from batchlint import per_run

from conftest import CORPUS, releases_asked


def codes(result):
    return sorted(d.code for d in result.diagnostics)


def read(path):
    with open(os.path.join(CORPUS, path), encoding="utf-8") as handle:
        return handle.read()


needs_corpus = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared/corpus is not present")

MEGATRON = "model: Qwen/Qwen3-8B\ntuner_type: lora\nmicro_batch_size: 2\nglobal_batch_size: 16\n"


# -- TrainingArguments configs -----------------------------------------------------------------

def test_default_accumulation_is_kept(lint):
    # ceil(16 / micro 2 / W 4) = 2 -> 2 x 2 x 4 = 16.
    text = "model_type: qwen2\nper_device_train_batch_size: 2\n"
    assert lint("s.yaml", text, world_size=4, global_batch=16).diagnostics == []


def test_default_accumulation_follows_the_release(tmp_path, lint):
    # ms-swift 3.2.2 on fills ceil(16 / micro / W) (swift/trainers/arguments.py:84-86 @ v3.2.2); 3.0.0-3.2.1
    # keep transformers' 1: micro 1 on W 4 is then a global batch of 4, not 16.
    text = "model_type: qwen2\nper_device_train_batch_size: 1\n"
    (tmp_path / "requirements.txt").write_text("ms-swift==3.2.1\n")
    [finding] = lint("s.yaml", text, world_size=4, global_batch=16).diagnostics
    assert "the global batch is 4" in finding.message
    assert lint("s.yaml", text, world_size=4, global_batch=4).diagnostics == []
    (tmp_path / "requirements.txt").write_text("ms-swift==3.2.2\n")
    per_run.forget()  # the release is read once a run
    assert lint("s.yaml", text, world_size=4, global_batch=16).diagnostics == []


def test_the_release_is_asked_only_for_an_unwritten_accumulation(tmp_path, lint, monkeypatch):
    # Finding the release reads the requirements and, last, every script of the project for an install
    # command: a pre-commit run in a large repository pays for it only when the default is needed.
    from batchlint import premise

    asked = releases_asked(monkeypatch, premise)
    (tmp_path / "requirements.txt").write_text("ms-swift==3.2.1\n")
    written = "model_type: qwen2\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 4\n"
    assert lint("w.yaml", written, world_size=4, global_batch=16).diagnostics == [] and asked == []
    [finding] = lint("u.yaml", "model_type: qwen2\nper_device_train_batch_size: 1\n", world_size=4,
                     global_batch=16).diagnostics
    assert "the global batch is 4" in finding.message and asked == ["ms-swift"]


def test_env_block_states_the_world_size(lint):
    text = "ENV:\n  NPROC_PER_NODE: '4'\n  NNODES: 2\nmodel_type: qwen2\nper_device_train_batch_size: 3\n"
    # W = 4 x 2 = 8: ceil(16 / 3 / 8) = 1 -> 3 x 1 x 8 = 24.
    assert lint("env.yaml", text, global_batch=24).diagnostics == []
    [finding] = lint("env.yaml", text, global_batch=32).diagnostics
    assert "the global batch is 24" in finding.message and "W=8" in " ".join((finding.message,) + finding.notes)
    # The environment (here --world-size) wins over the ENV block, as in swift/cli/main.py:53-59:
    # W = 2: ceil(16 / 3 / 2) = 3 -> 3 x 3 x 2 = 18.
    assert lint("env.yaml", text, world_size=2, global_batch=18).diagnostics == []


@pytest.mark.parametrize("value", ["'\u00b2'", "\u00b9", "'" + "9" * 5000 + "'", "'0'", "-4", "4.0", "[4]", "true"])
def test_env_values_that_are_no_count_leave_the_world_size_unknown(lint, value):
    """int() refuses '²' although '²'.isdigit(), and strings of over 4300 digits: such an
    ENV: value used to crash the adapter; like any value that is no positive count, it
    now leaves W unknown (nothing is checked against it)."""
    text = f"ENV:\n  NPROC_PER_NODE: {value}\n  NNODES: {value}\nmodel_type: qwen2\nper_device_train_batch_size: 3\n"
    result = lint("env.yaml", text, global_batch=7)
    assert result.error is None and result.diagnostics == []


def test_packing_without_flash_attention(lint):
    text = "model: Qwen/Qwen2.5-7B-Instruct\ntuner_type: lora\npacking: true\nper_device_train_batch_size: 1\n"
    assert codes(lint("p.yaml", text)) == ["BL356"]
    assert lint("p.yaml", text + "attn_impl: flash_attention_2\n").diagnostics == []


@pytest.mark.parametrize("version,severity", [("4.5.2", "error"), ("3.6.4", None)])
def test_a_copy_of_ms_swift_says_its_release(tmp_path, lint, version, severity):
    """A copy of ms-swift in the project (swift/version.py) is the release in force: lazy_tokenize with
    packing is refused from 3.7.0 (BL357), silently taken by 3.6.4."""
    (tmp_path / "swift").mkdir()
    (tmp_path / "swift" / "__init__.py").write_text("")
    (tmp_path / "swift" / "version.py").write_text(f"__version__ = '{version}'\n")
    text = ("model: Qwen/Qwen2.5-VL-7B-Instruct\ntuner_type: lora\nattn_impl: flash_attn\npacking: true\n"
            "lazy_tokenize: true\nper_device_train_batch_size: 1\n")
    found = [(d.code, d.severity) for d in lint("lazy.yaml", text).diagnostics]
    assert found == ([("BL357", severity)] if severity else [])


def test_ms_swift_releases_are_pypi_s_oldest_first():
    from batchlint.frameworks.swift import FRAMEWORK, MS_SWIFT
    from batchlint.versions import version_key

    assert FRAMEWORK.distribution is MS_SWIFT and MS_SWIFT.releases[0] == "1.0.0" and MS_SWIFT.releases[-1] == "4.6.0"
    assert [version_key(v) for v in MS_SWIFT.releases] == sorted(version_key(v) for v in MS_SWIFT.releases)


# -- Megatron ----------------------------------------------------------------------------------

def test_megatron_global_batch_against_dp(lint):
    # dp = W 8 / (tp 2 x pp 1 x cp 1) = 4 -> 2 x 4 = 8 divides 16.
    text = MEGATRON + "tensor_model_parallel_size: 2\n"
    result = lint("m.yaml", text, world_size=8)
    assert result.framework == "swift-megatron" and result.diagnostics == []
    [finding] = lint("m.yaml", text.replace("global_batch_size: 16", "global_batch_size: 12"), world_size=8).diagnostics
    assert finding.code == "BL103" and finding.span.line == 4 and "= 8" in " ".join((finding.message,) + finding.notes)
    # tp 2 does not divide 3 GPUs.
    assert codes(lint("m.yaml", text, world_size=3)) == ["BL202"]


def test_megatron_length_grouping_needs_padding_free_off(lint):
    assert codes(lint("g.yaml", MEGATRON + "group_by_length: true\n")) == ["BL358"]
    assert lint("g.yaml", MEGATRON + "group_by_length: true\npadding_free: false\n").diagnostics == []


def test_ray_train_group_overrides_and_names_the_gpus(lint):
    text = MEGATRON + "sequence_parallel: true\ntrain:\n  gpus: 4\n  tensor_model_parallel_size: 2\n"
    # train.gpus 4 / tp 2 = dp 2; the train group's tp makes sequence_parallel real. --world-size does not
    # change the train group's GPUs.
    assert lint("ray.yaml", text, world_size=64).diagnostics == []
    # A directive is the user's own word for this file and wins.
    assert codes(lint("ray.yaml", "# batchlint: world-size=3\n" + text)) == ["BL202"]


@needs_corpus
def test_megatron_example_on_the_4_gpus_of_its_launcher(lint):
    # examples/yaml/megatron/sft.sh launches it with NPROC_PER_NODE=4: global 4 = micro 1 x dp 4.
    text = read("swift/examples/yaml/megatron/sft.yaml")
    [warning] = lint("sft.yaml", text, world_size=4).diagnostics
    assert warning.code == "BL203" and warning.span.line == 56
    # On 8 GPUs dp is 8 and 4 sequences cannot be split.
    assert codes(lint("sft.yaml", text, world_size=8)) == ["BL103", "BL203"]


@pytest.mark.parametrize("size", ["num_generations: 0", "micro_batch_size: 0", "global_batch_size: 0",
                                  "generation_batch_size: 0", "global_batch_size: -16"])
def test_grpo_sizes_of_zero_or_less_are_no_generation_batch(lint, size):
    """A zero num_generations or micro batch used to be divided by; such a config has no
    generation batch to check (BL104 reports batch sizes of 0 or less)."""
    text = "rlhf_type: grpo\nmodel: Qwen/Qwen2.5-VL-3B-Instruct\nmicro_batch_size: 2\nglobal_batch_size: 16\n" \
           "num_generations: 8\nuse_vllm: true\n" + size + "\n"
    result = lint("grpo.yaml", text, world_size=8)
    assert result.error is None and "BL170" not in codes(result)


@needs_corpus
@pytest.mark.parametrize("name", ["ray_grpo_colocate.yaml", "ray_grpo_separate.yaml"])
def test_ray_grpo_examples_fit_their_train_gpus(lint, name):
    text = read(f"swift/examples/ray/grpo/{name}")
    assert lint(name, text).diagnostics == []
    # On 8 train GPUs the 16 x 4 / 8 = 8 prompts give each rank 1, less than micro_batch_size 2.
    [finding] = lint(name, text.replace("gpus: 4", "gpus: 8")).diagnostics
    assert finding.code == "BL170" and "not a multiple of micro_batch_size 2" in finding.message


def test_sequence_parallel_size_must_divide_the_world(lint):
    text = "model_type: qwen2\nattn_impl: flash_attn\npadding_free: true\nsequence_parallel_size: 3\nper_device_train_batch_size: 1\n"
    assert codes(lint("sp.yaml", text, world_size=8)) == ["BL202"]
    assert lint("sp.yaml", text, world_size=6).diagnostics == []


def test_a_trl_config_with_padding_free_is_not_swift(lint):
    trl = "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 4\npadding_free: true\nmax_length: null\n"
    result = lint("trl.yaml", trl)
    assert result.framework == "trl" and result.diagnostics == []
    assert lint("s.yaml", trl.replace("model_name_or_path", "model")).framework == "swift"


# -- plain GRPO (swift rlhf --rlhf_type grpo): ms-swift's own generation-batch checks (BL170) ------------------

GRPO = """\
rlhf_type: grpo
model: Qwen/Qwen2.5-7B-Instruct
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
{extra}"""


def _bl170(lint, extra, world_size=4):
    result = lint("grpo.yaml", GRPO.format(extra=extra), world_size=world_size)
    return [(d.code, d.span.line, " ".join((d.message,) + d.notes)) for d in result.diagnostics if d.code == "BL170"]


@pytest.mark.parametrize("extra, flagged, words", [
    # 4 x W 4 x GA 2 = 32 completions per generation round.
    ("num_generations: 8\n", None, ""),
    ("num_generations: 6\n", 5, "generation batch 32 is not a multiple of num_generations 6"),
    ("", None, ""),  # num_generations defaults to 8: 32 holds 4 groups
    ("num_generations: 1\n", 5, "rlhf_type (grpo) compares"),
    ("num_generations: 1\nteacher_model: Qwen/Qwen2.5-72B-Instruct\n", None, ""),  # OPD-RL: one sample is accepted
    # generation_batch_size alone: a whole number of 4 x W 4 = 16.
    ("num_generations: 8\ngeneration_batch_size: 48\n", None, ""),
    ("num_generations: 8\ngeneration_batch_size: 40\n", 6, "generation_batch_size 40 is not a multiple of 16 "
                                                           "(per_device_train_batch_size x W) it must be a whole number "
                                                           "of per_device_train_batch_size (4) x W (4) = 16"),
    # Both keys: ms-swift accepts them when they agree (TRL refuses the pair whatever the values).
    ("num_generations: 8\ngeneration_batch_size: 48\nsteps_per_generation: 3\n", None, ""),
    ("num_generations: 8\ngeneration_batch_size: 64\nsteps_per_generation: 3\n", 6,
     "generation_batch_size 64 is not per_device_train_batch_size (4) x W (4) x steps_per_generation (3) = 48"),
    ("num_generations: 8\nsteps_per_generation: 3\n", None, ""),  # 4 x 4 x 3 = 48
    ("num_generations: 5\nsteps_per_generation: 3\n", 5, "generation batch 48 is not a multiple of num_generations 5"),
])
def test_plain_grpo_generation_batch(lint, extra, flagged, words):
    found = _bl170(lint, extra)
    if flagged is None:
        assert found == []
    else:
        [(code, line, message)] = found
        assert line == flagged and words in message and message.endswith("ms-swift refuses to start")


def test_plain_grpo_without_w_checks_what_fails_for_every_w(lint):
    # W unknown: only what fails for every W is reported. 40 is a multiple of 4 x W for W 1, 2, 5, 10;
    # 42 is no multiple of the micro batch 4, so of 4 x W for no W.
    assert _bl170(lint, "num_generations: 2\ngeneration_batch_size: 40\n", world_size=None) == []
    [(_, line, message)] = _bl170(lint, "num_generations: 2\ngeneration_batch_size: 42\n", world_size=None)
    assert line == 6 and "so no world size makes it a multiple" in message


def test_plain_grpo_on_the_swift_rlhf_launch_line(tmp_path):
    """`NPROC_PER_NODE=4 swift rlhf --rlhf_type grpo ...` in the shape of examples/train/grpo/: W 4."""
    import json

    from conftest import run

    line = ("NPROC_PER_NODE=4 \\\nswift rlhf \\\n    --rlhf_type grpo \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n"
            "    --per_device_train_batch_size 4 \\\n    --gradient_accumulation_steps 2 \\\n    --num_generations {n}\n")
    for n, flagged in ((6, True), (8, False)):
        (tmp_path / "grpo.sh").write_text(line.format(n=n))
        result = run("check", "--format", "json", str(tmp_path / "grpo.sh"))
        assert any(d["code"] == "BL170" for d in json.loads(result.stdout)) is flagged
    [explained] = json.loads(run("explain", "--format", "json", str(tmp_path / "grpo.sh")).stdout)
    rows = {row["name"]: row["values"][0] for row in explained["rows"]}
    assert (rows["generation batch (sequences)"], rows["prompts per generation round"], rows["samples per prompt"]) == (32, 4, 8)
