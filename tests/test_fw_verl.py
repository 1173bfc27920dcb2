"""verl adapter: which YAML files it reads, where W and the defaults come from,
and the real upstream mistakes, linted with the world size they run on."""

import json
import os

import pytest
from click.testing import CliRunner

from conftest import CORPUS


def codes(result):
    return sorted(d.code for d in result.diagnostics)


def lines(result, code):
    return sorted(d.span.line for d in result.diagnostics if d.code == code)


def _said(finding):
    """A finding's message and notes: where its arithmetic and releases are told."""
    return " ".join((finding.message,) + finding.notes)


# examples/rollout_correction/run_with_rollout_corr.sh @ b178a3c, its overrides over
# ppo_trainer.yaml written out as a config: 32 x n 1 // 8 GPUs = 4 per GPU, micro 8.
ROLLOUT_CORR = """\
hydra:
  searchpath:
    - file://verl/trainer/config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 128
algorithm:
  adv_estimator: rloo
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 32
    ppo_micro_batch_size_per_gpu: 8
  rollout:
    name: vllm
    log_prob_micro_batch_size_per_gpu: 8
"""


SFT = """\
data:
  train_batch_size: {batch}
  micro_batch_size_per_gpu: 4
model:
  partial_pretrain: ~/models/gemma-1.1-7b-it
ulysses_sequence_parallel_size: {sp}
use_remove_padding: true
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""


def pin(folder, release="0.7.1"):
    """A requirements.txt pinning verl: BL142's legacy-worker checks hold from 0.2 to 0.7.1 only."""
    (folder / "requirements.txt").write_text(f"verl=={release}\n")


# -- what the adapter reads ------------------------------------------------------------

def test_ppo_user_config_and_sft_config_are_verl(lint):
    assert lint("grpo.yaml", "defaults:\n  - ppo_trainer\ndata:\n  train_batch_size: 256\n"
                "actor_rollout_ref:\n  hybrid_engine: true\n").framework == "verl"
    assert lint("sft.yaml", SFT.format(batch=256, sp=1)).framework == "verl"


def test_config_group_fragments_are_not_read(lint):
    # verl/trainer/config/actor/dp_actor.yaml and critic/critic.yaml: pieces Hydra composes, no whole config.
    actor = "defaults:\n  - actor\n  - _self_\nstrategy: fsdp\nppo_mini_batch_size: 256\nulysses_sequence_parallel_size: 1\n"
    critic = ("rollout_n: ${oc.select:actor_rollout_ref.rollout.n,1}\n"
              "ppo_mini_batch_size: ${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}\n")
    assert lint("dp_actor.yaml", actor).framework is None
    assert lint("critic.yaml", critic).framework is None


def test_a_nemo_config_is_not_verl(lint):
    nemo = "trainer:\n  devices: 8\nmodel:\n  micro_batch_size: 4\n  global_batch_size: 8\n  tensor_model_parallel_size: 1\n"
    assert lint("megatron_gpt_config.yaml", nemo).framework == "nemo"


# -- world size ------------------------------------------------------------------------

def test_file_world_size_is_gpus_per_node_times_nodes(lint, tmp_path):
    pin(tmp_path)
    text = ROLLOUT_CORR + "trainer:\n  nnodes: 2\n  n_gpus_per_node: 4\n"
    [finding] = [d for d in lint("corr.yaml", text).diagnostics if d.code == "BL142"]
    assert "// W (8) = 4" in _said(finding)


def test_user_world_size_wins_over_the_files(lint, tmp_path):
    pin(tmp_path)
    text = ROLLOUT_CORR + "trainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n"
    # On 4 GPUs: 32 // 4 = 8, a multiple of 8: the launch the user states is fine.
    assert "BL142" not in codes(lint("corr.yaml", text, world_size=4))
    assert "BL142" in codes(lint("corr8.yaml", text))


def test_interpolated_world_size_is_unknown(lint):
    text = ROLLOUT_CORR + "trainer:\n  nnodes: 1\n  n_gpus_per_node: ${oc.env:GPUS}\n"
    assert codes(lint("corr.yaml", text)) == []


def test_sft_world_size_never_comes_from_the_file(lint, tmp_path):
    # fsdp_sft_trainer runs under torchrun: trainer.n_gpus_per_node is not its W.
    pin(tmp_path, "0.7.0")  # the last release with fsdp_sft_trainer.py (BL103's verl window)
    text = SFT.format(batch=100, sp=1)
    assert codes(lint("sft.yaml", text)) == []  # 100 % 4 == 0: fine for some W
    result = lint("sft8.yaml", text, world_size=8)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL103", 2)]
    assert "data.micro_batch_size_per_gpu (4) x dp (8) = 32" in _said(result.diagnostics[0])


# -- the real upstream mistake -----------------------------------------------------------

def test_rollout_correction_example_fails_on_its_8_gpus(lint, tmp_path):
    pin(tmp_path)
    result = lint("run_with_rollout_corr.yaml", ROLLOUT_CORR, world_size=8)
    [finding] = result.diagnostics
    assert (finding.code, finding.severity, finding.span.line) == ("BL142", "error", 14)
    assert finding.message == "the actor's per-GPU mini-batch 4 is not a multiple of its micro batch 8"
    assert "ppo_mini_batch_size (32) x actor_rollout_ref.rollout.n (default 1) // W (8) = 4" in _said(finding)
    assert "ppo_micro_batch_size_per_gpu (8)" in _said(finding)


def test_rollout_correction_is_silent_without_a_world_size(lint):
    assert lint("run_with_rollout_corr.yaml", ROLLOUT_CORR).diagnostics == []


# -- defaults, strategy and roles ------------------------------------------------------

def test_interpolated_values_are_unknown(lint):
    text = ROLLOUT_CORR.replace("ppo_mini_batch_size: 32", "ppo_mini_batch_size: ${data.train_batch_size}")
    assert lint("corr.yaml", text, world_size=8).diagnostics == []


def test_new_engine_workers_are_not_checked_by_the_legacy_rule(lint):
    text = ROLLOUT_CORR + "trainer:\n  use_legacy_worker_impl: disable\n"
    assert "BL142" not in codes(lint("corr.yaml", text, world_size=8))


def test_megatron_trainer_layout_must_divide_w(lint):
    text = (
        "defaults:\n  - ppo_megatron_trainer\n  - _self_\ndata:\n  train_batch_size: 64\n"
        "actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 16\n    megatron:\n"
        "      tensor_model_parallel_size: 4\n      pipeline_model_parallel_size: 2\n"
        "trainer:\n  nnodes: 1\n  n_gpus_per_node: 4\n"
    )
    result = lint("megatron.yaml", text)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL202", 10)]
    # Megatron actors have no Ulysses mesh and no per-GPU mini-batch assertion.
    assert "BL142" not in codes(lint("megatron8.yaml", text, world_size=8))


def test_ulysses_sp_must_divide_w(lint):
    text = (
        "defaults:\n  - ppo_trainer\ndata:\n  train_batch_size: 96\nactor_rollout_ref:\n  actor:\n"
        "    ppo_mini_batch_size: 24\n    ulysses_sequence_parallel_size: 4\n"
    )
    assert [(d.code, d.span.line) for d in lint("sp4.yaml", text, world_size=6).diagnostics] == [("BL202", 8)]
    assert lint("sp4_8.yaml", text, world_size=8).diagnostics == []


def test_critic_checks_only_what_the_critic_section_writes(lint):
    base = "defaults:\n  - ppo_trainer\ndata:\n  train_batch_size: 128\nactor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 256\n"
    # The critic inherits the actor's 256: one finding, at the actor.
    assert [(d.code, d.span.line) for d in lint("gae.yaml", base).diagnostics] == [("BL141", 7)]
    critic = base.replace("256", "64") + "critic:\n  ppo_mini_batch_size: 512\n"
    assert [(d.code, d.span.line) for d in lint("gae_critic.yaml", critic).diagnostics] == [("BL141", 9)]
    grpo = critic + "algorithm:\n  adv_estimator: grpo\n"
    assert lint("grpo.yaml", grpo).diagnostics == []


def test_dynamic_batch_size_skips_the_static_batch_checks(lint):
    text = ROLLOUT_CORR.replace("    ppo_mini_batch_size: 32\n", "    ppo_mini_batch_size: 512\n    use_dynamic_bsz: true\n")
    assert "BL141" not in codes(lint("dyn.yaml", text, world_size=8))


def test_sft_sequence_parallel_must_divide_w(lint, tmp_path):
    pin(tmp_path, "0.7.0")  # the last release with fsdp_sft_trainer.py (BL202's verl SFT window)
    result = lint("sft_sp.yaml", SFT.format(batch=192, sp=4), world_size=6)
    assert ("BL202", 6) in [(d.code, d.span.line) for d in result.diagnostics]


# -- the corpus files themselves -------------------------------------------------------

VERL = os.path.join(CORPUS, "verl")


@pytest.mark.skipif(not os.path.isdir(VERL), reason="../shared/corpus is not present")
def test_shipped_defaults_are_clean_on_their_own_8_gpus(tmp_path):
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file
    from batchlint.rules import RULES

    for name in ("_generated_ppo_trainer.yaml", "_generated_ppo_megatron_trainer.yaml", "ppo_trainer.yaml"):
        result = lint_file(os.path.join(VERL, "verl/trainer/config", name), Settings(root=str(tmp_path)), Options(world_size=8), RULES)
        assert result.framework == "verl" and result.diagnostics == [], name


@pytest.mark.skipif(not os.path.isdir(VERL), reason="../shared/corpus is not present")
def test_generated_defaults_floor_the_mini_batch_on_6_gpus(tmp_path):
    from batchlint.config import Settings
    from batchlint.engine import Options, lint_file
    from batchlint.rules import RULES

    path = os.path.join(VERL, "verl/trainer/config/_generated_ppo_trainer.yaml")
    # verl 0.7.1: its validate_config and its legacy workers' floor (0.8.0 removed those workers).
    result = lint_file(path, Settings(root=str(tmp_path), versions={"verl": "0.7.1"}), Options(world_size=6), RULES)
    found = {(d.code, d.severity) for d in result.diagnostics}
    assert found == {("BL140", "error"), ("BL142", "warning")}  # 1024 % 6; 256 // 6 = 42 per GPU


def test_a_huge_prime_per_gpu_batch_suggests_a_divisor_at_once(lint, tmp_path):
    """BL142 suggests the largest divisor of the per-GPU mini-batch up to the micro batch;
    it used to count down from the micro batch one by one (2**61 - 2 steps here)."""
    import signal

    pin(tmp_path)

    prime = 2**61 - 1
    text = (f"actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: {8 * prime}\n"
            f"    ppo_micro_batch_size_per_gpu: {prime - 1}\n  rollout:\n    n: 1\n"
            "trainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n")

    def expired(signum, frame):
        raise TimeoutError("over 5 s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(5)
    try:
        result = lint("ppo.yaml", text)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    [finding] = [d for d in result.diagnostics if d.code == "BL142"]
    assert f"mini-batch {prime} is not a multiple" in finding.message and "(e.g. 1)" in finding.fix


@pytest.mark.parametrize("data", ["data:\n  train_files: x.parquet\n", "data:\n  micro_batch_size_per_gpu: 2\n"])
def test_sft_target_against_the_default_train_batch_size(lint, data):
    """The SFT trainer derives accumulation from data.train_batch_size (default 256), so that is
    what to set; the fix used to name the plan's accumulation, which it has none of (a crash)."""
    result = lint("sft.yaml", data + "model:\n  partial_pretrain: Qwen/Qwen2.5-0.5B\n", world_size=8, global_batch=64)
    [finding] = [d for d in result.diagnostics if d.code == "BL102"]
    assert "the global batch is 256" in finding.message and finding.fix == "set data.train_batch_size to 64"


# -- typed settings ----------------------------------------------------------------------

def test_micro_batch_keys_pair_each_deprecated_key_with_its_replacement():
    from batchlint.frameworks import verl
    from batchlint.frameworks.facts import Outside
    from batchlint.sources import read

    text = ("actor_rollout_ref:\n  actor:\n    ppo_micro_batch_size: 64\n    ppo_micro_batch_size_per_gpu: 8.0\n"
            "  rollout:\n    log_prob_micro_batch_size_per_gpu: 4\ncritic:\n  ppo_micro_batch_size: 32\n")
    settings = verl.plan(read("ppo.yaml", text, "yaml"), Outside()).settings
    actor, rollout, critic = settings.micro_batch_keys
    assert actor.role is settings.actor and critic.role is settings.critic  # the default gae estimator trains a critic
    assert (actor.deprecated.key, actor.deprecated.value, actor.per_gpu) == ("actor_rollout_ref.actor.ppo_micro_batch_size", 64, None)
    assert (rollout.deprecated, rollout.per_gpu.value, rollout.per_gpu_name) == (None, 4, "log_prob_micro_batch_size_per_gpu")
    assert critic.deprecated.value == 32 and critic.per_gpu is None
    grpo = verl.plan(read("grpo.yaml", text + "algorithm:\n  adv_estimator: grpo\n", "yaml"), Outside()).settings
    assert len(grpo.micro_batch_keys) == 2 and grpo.critic is None


# -- explain: the arithmetic verl does statically (a GRPO launch line in the shape of examples/) --------

GRPO_LINE = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=1024 \\
    data.max_prompt_length=512 \\
    data.max_response_length=1024 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro} \\
    actor_rollout_ref.actor.use_dynamic_bsz={dynamic} \\
    actor_rollout_ref.rollout.n=5 \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1
"""


def _explain(tmp_path, text):
    import json

    from conftest import run

    (tmp_path / "run_grpo.sh").write_text(text)
    result = run("explain", "--format", "json", str(tmp_path / "run_grpo.sh"))
    assert result.exit_code == 0, result.output
    [explained] = json.loads(result.stdout)
    return {row["name"]: row["values"][0] for row in explained["rows"]}


def test_explain_shows_the_accumulation_verl_derives(tmp_path):
    # 256 prompts x 5 samples = 1280 sequences per optimizer step, 160 per rank of dp 8, in micro batches of 80.
    rows = _explain(tmp_path, GRPO_LINE.format(micro=80, dynamic="False"))
    assert rows["gradient accumulation"] == 2 and rows["global batch (sequences/step)"] == 1280
    assert rows["sequence length"] == 1536 and rows["tokens per optimizer step"] == 1280 * 1536
    assert rows["samples per prompt"] == 5 and rows["generation batch (sequences)"] == 5120
    assert rows["mini-batches (optimizer steps) per generation round"] == 4


def _explained(tmp_path, text):
    import json

    from conftest import run

    (tmp_path / "run_grpo.sh").write_text(text)
    result = run("explain", "--format", "json", str(tmp_path / "run_grpo.sh"))
    assert result.exit_code == 0, result.output
    [explained] = json.loads(result.stdout)
    return {row["name"]: (row["values"][0], row["source"]) for row in explained["rows"]}


def test_an_indivisible_micro_batch_says_which_division_fails(tmp_path):
    """160 sequences per rank is no multiple of 48 (BL142's case): no accumulation, and the row says why."""
    rows = _explained(tmp_path, GRPO_LINE.format(micro=48, dynamic="False"))
    value, source = rows["gradient accumulation"]
    assert value == "?" and rows["samples per prompt"][0] == 5
    assert source == "fails: the actor's per-GPU mini-batch 160 is not a multiple of its micro batch 48"
    assert rows["global batch (sequences/step)"][0] == "?" and "fails: " in rows["global batch (sequences/step)"][1]


def test_dynamic_batching_has_a_static_global_batch_and_a_token_micro_batch(tmp_path):
    """use_dynamic_bsz packs micro batches by tokens (ppo_max_token_len_per_gpu, default 16384): the
    micro-steps vary, but each optimizer step still takes ppo_mini_batch_size 256 x n 5 = 1280 sequences."""
    rows = _explained(tmp_path, GRPO_LINE.format(micro=80, dynamic="True"))
    assert rows["gradient accumulation"][0] == "dynamic" and rows["micro-steps per optimizer step"][0] == "dynamic"
    micro, source = rows["micro batch (per GPU)"]
    assert micro == 16384 and "framework default" in source and "number of sequences varies" in source
    from conftest import run

    [explained] = json.loads(run("explain", "--format", "json", str(tmp_path / "run_grpo.sh")).stdout)
    assert [row.get("unit") for row in explained["rows"] if row["name"] == "micro batch (per GPU)"] == ["tokens"]
    assert "16,384 tokens" in run("explain", str(tmp_path / "run_grpo.sh")).stdout
    assert rows["global batch (sequences/step)"] == (
        1280, "= actor_rollout_ref.actor.ppo_mini_batch_size (256) x actor_rollout_ref.rollout.n (5) "
              "(fixed, whatever the micro batches hold)")
    assert rows["mini-batches (optimizer steps) per generation round"][0] == 4
    assert rows["tokens per optimizer step"][0] == 1280 * 1536


def test_dynamic_batching_token_budget_as_written_with_sequence_parallel(tmp_path):
    line = GRPO_LINE.format(micro=80, dynamic="True").replace(
        "trainer.nnodes=1", "trainer.nnodes=1 \\\n    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000 \\\n"
        "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=2")
    rows = _explained(tmp_path, line)
    micro, source = rows["micro batch (per GPU)"]
    assert micro == 24000 and "packed up to 24000 x actor_rollout_ref.actor.ulysses_sequence_parallel_size 2" in source
    assert rows["global batch (sequences/step)"][0] == 1280 and rows["data parallel dp"][0] == 4


def test_dynamic_batching_over_gpus_that_do_not_split_the_mini_batch(tmp_path):
    """256 x 5 = 1280 sequences over W 24 is floored per GPU: no global batch is claimed, and BL142 says why.
    (With a micro batch written verl asserts it divides the per-GPU share even under dynamic batching.)"""
    line = GRPO_LINE.format(micro="null", dynamic="True")
    rows = _explained(tmp_path, line.replace("n_gpus_per_node=8", "n_gpus_per_node=24"))
    value, source = rows["global batch (sequences/step)"]
    assert value == "?" and source.startswith("fails: ") and "sequences is floored to" in source and "over W 24" in source
    assert _explained(tmp_path, line.replace("n_gpus_per_node=8", "n_gpus_per_node=16"))[
        "global batch (sequences/step)"][0] == 1280


@pytest.mark.parametrize("micro, gpus, shown, accumulation", [
    (16, 8, 2, 80),  # 16 // dp 8 = 2 per GPU; 256 x 5 / 8 / 2 = 80
    (4, 8, 0, "?"),  # 4 // 8 = 0, as the workers compute it: verl refuses it (BL181), no accumulation is claimed
])
def test_the_deprecated_global_micro_batch_is_split_over_dp(tmp_path, micro, gpus, shown, accumulation):
    line = GRPO_LINE.format(micro="null", dynamic="False").replace(
        "trainer.nnodes=1", f"trainer.nnodes=1 \\\\\\n    actor_rollout_ref.actor.ppo_micro_batch_size={micro}")
    rows = _explained(tmp_path, line.replace("n_gpus_per_node=8", f"n_gpus_per_node={gpus}"))
    assert rows["micro batch (per GPU)"][0] == shown and rows["gradient accumulation"][0] == accumulation
    assert rows["micro batch (per GPU)"][1] == (
        f"ppo_micro_batch_size_per_gpu: derived: actor_rollout_ref.actor.ppo_micro_batch_size {micro} // dp {gpus}")


SFT_LINE = """\
torchrun --standalone --nnodes=1 --nproc_per_node={nproc} \\
     -m verl.trainer.fsdp_sft_trainer \\
    data.train_files=$HOME/data/gsm8k/train.parquet \\
    data.train_batch_size={batch} \\
    data.micro_batch_size_per_gpu=4 \\
    model.partial_pretrain=Qwen/Qwen2.5-0.5B-Instruct \\
    ulysses_sequence_parallel_size=2 \\
    use_remove_padding=true
"""


@pytest.mark.parametrize("nproc, batch, codes", [(8, 48, []), (8, 40, ["BL103"]), (6, 48, [])])
def test_the_sft_trainer_under_torchrun_is_read(tmp_path, nproc, batch, codes):
    """`torchrun -m verl.trainer.fsdp_sft_trainer` (verl's examples/sft): W from torchrun, dp = W / sp; the
    batch per dp rank (48 / 4 = 12, 48 / 3 = 16) must be a multiple of micro_batch_size_per_gpu (4): 40 / 4 = 10 is not."""
    from conftest import run, write

    pin(tmp_path, "0.7.0")  # the last release with fsdp_sft_trainer.py (BL103's verl window)
    path = write(tmp_path, "run_sft.sh", SFT_LINE.format(nproc=nproc, batch=batch))
    findings = json.loads(run("check", "--format", "json", path).stdout)
    assert [f["code"] for f in findings] == codes
    [explained] = json.loads(run("explain", "--format", "json", path).stdout)
    rows = {row["name"]: row["values"][0] for row in explained["rows"]}
    assert rows["micro batch (per GPU)"] == 4 and rows["world size W"] == nproc


# -- which verl release refuses (lint/premise.py) --------------------------------------------------------

def _diagnostics(lint, tmp_path, name, text, release=None, world_size=None, code=None):
    if release is not None:
        pin(tmp_path, release)
    result = lint(name, text, world_size=world_size)
    return [(d.code, d.severity, d.span.line) for d in result.diagnostics if code is None or d.code == code]


@pytest.mark.parametrize("release, found", [
    ("0.7.1", [("BL142", "error", 14)]),  # the legacy workers assert it
    ("0.4.0", [("BL142", "error", 14)]),  # the first to assert a per-GPU micro batch as written
    ("0.3.0.post1", []),  # asserted only for a micro batch derived from the deprecated key
    ("0.8.0", []),  # no legacy workers: the engine workers count the mini-batch otherwise
    (None, []),  # the newest releases do not refuse it: nothing to say without a pin
])
def test_the_per_gpu_mini_batch_is_judged_by_the_legacy_workers_releases(lint, tmp_path, release, found):
    assert _diagnostics(lint, tmp_path, "corr.yaml", ROLLOUT_CORR, release, world_size=8) == found


@pytest.mark.parametrize("release, found", [
    (None, [("BL141", "info", 7)]),  # 0.1 and 0.2 run it; every release from 0.3.0.post0 refuses it
    ("0.3.0.post0", [("BL141", "error", 7)]),
    ("0.9.1", [("BL141", "error", 7)]),
    ("0.2.0.post2", []),
])
def test_a_mini_batch_over_the_step_is_refused_from_0_3(lint, tmp_path, release, found):
    text = "defaults:\n  - ppo_trainer\ndata:\n  train_batch_size: 128\nactor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 256\n"
    assert _diagnostics(lint, tmp_path, "gae.yaml", text + "algorithm:\n  adv_estimator: grpo\n", release) == found


MEGATRON_40 = (
    "defaults:\n  - ppo_megatron_trainer\n  - _self_\ndata:\n  train_batch_size: 40\nactor_rollout_ref:\n  actor:\n"
    "    ppo_mini_batch_size: 8\n    ppo_micro_batch_size_per_gpu: 4\n    megatron:\n      tensor_model_parallel_size: 2\n"
    "  rollout:\n    n: 1\ntrainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n"
)


@pytest.mark.parametrize("release, found", [
    ("0.4.0", [("BL140", "error", 5)]),  # minimal_bsz = dp 4 x micro 4 = 16
    ("0.3.0.post1", []),  # 0.2-0.3 divide by W: 40 % 8 == 0
    (None, [("BL140", "info", 5)]),
])
def test_a_megatron_train_batch_is_judged_by_dp_times_micro_from_0_4(lint, tmp_path, release, found):
    assert _diagnostics(lint, tmp_path, "megatron.yaml", MEGATRON_40, release, code="BL140") == found


CRITIC_SP = "defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  rollout:\n    n: 1\ncritic:\n  ulysses_sequence_parallel_size: 2\n"


@pytest.mark.parametrize("release, found", [
    ("0.2", [("BL240", "error", 7)]),
    ("0.7.1", [("BL240", "error", 7)]),
    ("0.8.0", []),  # critic.ulysses_sequence_parallel_size deprecated, remove padding on by default
    ("0.1", []),  # no Ulysses at all
])
def test_the_critics_sp_check_holds_to_0_7_1(lint, tmp_path, release, found):
    assert _diagnostics(lint, tmp_path, "critic.yaml", CRITIC_SP, release, code="BL240") == found


# -- a copy of verl in the project is judged by its own source, not its version file -----------------------

_LEGACY_WORKERS = """\
class ActorRolloutRefWorker:
    def __init__(self, config):
        if self._is_actor:
            self.config.actor.ppo_mini_batch_size *= self.config.rollout.n
            self.config.actor.ppo_mini_batch_size //= self.device_mesh.size() // self.ulysses_sequence_parallel_size
            assert self.config.actor.ppo_mini_batch_size > 0, (
                f"ppo_mini_batch_size {self.config.actor.ppo_mini_batch_size} should be larger than 0 after "
                f"normalization"
            )
            if self.config.actor.ppo_micro_batch_size_per_gpu is not None:
                assert self.config.actor.ppo_mini_batch_size % self.config.actor.ppo_micro_batch_size_per_gpu == 0
"""
# TinyZero's: divided by dp, then multiplied by n, nothing asserted.
_EARLY_WORKERS = """\
class ActorRolloutRefWorker:
    def __init__(self, config):
        if self._is_actor:
            self.config.actor.ppo_mini_batch_size //= (self.device_mesh.shape[0] // self.ulysses_sequence_parallel_size)
            self.config.actor.ppo_mini_batch_size *= self.config.rollout.n
"""


def _copy(tmp_path, version, workers):
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in {"verl/__init__.py": "", "verl/version/version": f"{version}\n",
                       "verl/workers/fsdp_workers.py": workers}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize("version, workers, found", [
    ("0.8.0.dev", _LEGACY_WORKERS, [("BL142", "error", 14)]),  # main after 0.7.1: legacy workers still in it
    ("0.1", _LEGACY_WORKERS, [("BL142", "error", 14)]),  # a version file left behind by a copy of main
    ("0.1", _EARLY_WORKERS, []),  # TinyZero's copy
])
def test_a_copy_is_judged_by_its_own_workers(lint, tmp_path, version, workers, found):
    _copy(tmp_path, version, workers)
    assert _diagnostics(lint, tmp_path, "corr.yaml", ROLLOUT_CORR, world_size=8) == found
    [finding] = lint("corr2.yaml", ROLLOUT_CORR, world_size=8).diagnostics if found else [None]
    assert finding is None or f"verl {version}, the copy's version" in _said(finding)


def test_a_copy_of_main_between_releases_keeps_its_start_up_checks(lint, tmp_path):
    """A copy of main from 2025-02-20 to 05-12 says 0.2.0.dev (before 0.2 by its number) over source that has
    0.2's checks: it is judged by that source."""
    _copy(tmp_path, "0.2.0.dev", "")
    checks = ("def check_mutually_exclusive(mbs, mbs_per_gpu, name):\n"
              "    raise ValueError(f\"[{name}] You have set both '{name}.micro_batch_size' AND ...\")\n")
    (tmp_path / "verl/trainer/ppo").mkdir(parents=True)
    (tmp_path / "verl/trainer/ppo/ray_trainer.py").write_text(checks)
    text = ("defaults:\n  - ppo_trainer\nactor_rollout_ref:\n  actor:\n    ppo_micro_batch_size: 64\n"
            "    ppo_micro_batch_size_per_gpu: 8\n")
    assert _diagnostics(lint, tmp_path, "both.yaml", text, code="BL143") == [("BL143", "error", 5)]


# -- the rollout's tensor parallel degree (BL261), the mini-batch remainder (BL180), early layouts ------

ONE_GPU = """\
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=64 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
{rollout}    trainer.n_gpus_per_node=1 \\
    trainer.nnodes=1
"""


@pytest.mark.parametrize("rollout, release, found", [
    ("", "0.4.1", [("BL261", "error", 5)]),  # the default 2 on one GPU: the finding stands at the GPU count
    ("    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \\\n", "0.4.1", []),
    ("    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \\\n", "0.7.1", [("BL261", "error", 5)]),
    ("", "0.1", []),  # 0.1 asserts only tp <= W, in vLLM's rollout: outside the window
    ("", None, []),  # 0.8.0 on has no legacy workers: nothing said without a pin
    # A rollout with its own data parallel degree (0.6.0 on) builds a tp x dp x pp mesh: not judged.
    ("    actor_rollout_ref.rollout.data_parallel_size=2 \\\n", "0.7.1", []),
])
def test_the_rollout_tensor_parallel_default_is_judged_on_one_gpu(lint, tmp_path, rollout, release, found):
    assert _diagnostics(lint, tmp_path, "run.sh", ONE_GPU.format(rollout=rollout), release, code="BL261") == found


def test_an_unwritten_rollout_tensor_parallel_degree_is_the_default(lint, tmp_path):
    pin(tmp_path, "0.4.1")
    [finding] = [d for d in lint("run.sh", ONE_GPU.format(rollout="")).diagnostics if d.code == "BL261"]
    assert "tensor_model_parallel_size (default 2) does not divide W 1" in finding.message


def test_explain_counts_the_remainder_update(tmp_path):
    """1024 prompts in mini-batches of 384: 2 full updates and a third on 256 prompts, weighted 256/384."""
    text = GRPO_LINE.format(micro=80, dynamic="False").replace("ppo_mini_batch_size=256", "ppo_mini_batch_size=384")
    value, source = _explained(tmp_path, text)["mini-batches (optimizer steps) per generation round"]
    assert value == 3 and "2 full mini-batches + 1 of 256 prompts (weighted 256/384)" in source


@pytest.mark.parametrize("release, found", [
    ("0.4.1", [("BL180", "warning", 3)]),  # at data.train_batch_size
    ("0.1", []),  # 0.1 asserts an even split instead (protocol.py make_iterator)
    (None, []),
])
def test_a_remainder_mini_batch_is_a_warning_in_the_legacy_workers(lint, tmp_path, release, found):
    text = GRPO_LINE.format(micro=80, dynamic="False").replace("ppo_mini_batch_size=256", "ppo_mini_batch_size=384")
    assert _diagnostics(lint, tmp_path, "run.sh", text, release, code="BL180") == found


PROMPTS = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size={batch} \\
    actor_rollout_ref.actor.ppo_mini_batch_size={batch} \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \\
    actor_rollout_ref.rollout.n=4 \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1
"""


@pytest.mark.parametrize("batch, release, found", [
    (60, "0.3.0.post1", [("BL182", "error", 3)]),  # 60 prompts over 8 ranks, though 240 sequences divide
    (64, "0.3.0.post1", []),
    (60, "0.5.0", []),  # 0.5.0 repeats the prompts before generating them
])
def test_early_verl_splits_the_prompts_before_repeating_them(lint, tmp_path, batch, release, found):
    assert _diagnostics(lint, tmp_path, "run.sh", PROMPTS.format(batch=batch), release, code="BL182") == found


@pytest.mark.parametrize("trainer, found", [
    ("gen_batch_output = self.actor_rollout_wg.generate_sequences(gen_batch)\n", [("BL182", "error", 3)]),
    ("gen_batch = gen_batch.repeat(repeat_times=4, interleave=True)\n"
     "gen_batch_output = self.actor_rollout_wg.generate_sequences(gen_batch)\n", []),
])
def test_a_copy_is_judged_by_where_its_trainer_repeats_the_prompts(lint, tmp_path, trainer, found):
    _copy(tmp_path, "0.1", "")
    (tmp_path / "verl/trainer/ppo").mkdir(parents=True)
    (tmp_path / "verl/trainer/ppo/ray_trainer.py").write_text(trainer)
    assert _diagnostics(lint, tmp_path, "run.sh", PROMPTS.format(batch=60), code="BL182") == found


@pytest.mark.parametrize("micro, release, found", [
    (4, "0.2", [("BL181", "error", 4)]),  # 4 // dp 8 = 0: refused at start-up from 0.2
    (4, "0.1", [("BL181", "error", 4)]),  # 0.1: a modulo by zero at the first update
    (8, "0.2", []),
])
def test_a_global_micro_batch_below_dp_floors_to_zero(lint, tmp_path, micro, release, found):
    text = ONE_GPU.format(rollout="").replace("ppo_micro_batch_size_per_gpu=4", f"ppo_micro_batch_size={micro}") \
        .replace("n_gpus_per_node=1", "n_gpus_per_node=8")
    assert _diagnostics(lint, tmp_path, "run.sh", text, release, code="BL181") == found


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="needs ../shared/corpus (verl's config folder)")
def test_a_composed_default_tensor_parallel_degree_is_reported_in_the_users_file(lint, tmp_path):
    """verl's rollout.yaml (a copy the project composes through hydra.searchpath) writes the 2: the finding
    stands at the GPU count the user's file writes, and calls the 2 verl's default."""
    import shutil

    shutil.copytree(os.path.join(CORPUS, "verl", "verl", "trainer", "config"), tmp_path / "verl/trainer/config")
    pin(tmp_path, "0.7.1")
    text = ROLLOUT_CORR + "trainer:\n  n_gpus_per_node: 1\n"
    [finding] = [d for d in lint("corr.yaml", text).diagnostics if d.code == "BL261"]
    assert finding.span.line == text.splitlines().index("  n_gpus_per_node: 1") + 1
    assert "tensor_model_parallel_size (default 2)" in finding.message


# -- n_agent: a copy of verl whose trainer repeats each step's prompts n_agent times (Search-R1's) -------------

_N_AGENT_TRAINER = """\
for batch_dict in self.train_dataloader:
    batch: DataProto = DataProto.from_single_dict(batch_dict)
    batch = batch.repeat(repeat_times=self.config.actor_rollout_ref.rollout.n_agent, interleave=True)
    gen_batch = batch.pop(batch_keys=['input_ids', 'attention_mask', 'position_ids'])
    gen_batch_output = self.actor_rollout_wg.generate_sequences(gen_batch)
    batch = batch.repeat(repeat_times=self.config.actor_rollout_ref.rollout.n, interleave=True)
"""
# The copy's own trainer config, which has the key (verl's releases do not).
_N_AGENT_CONFIG = """\
data:
  train_batch_size: 1024
algorithm:
  adv_estimator: gae
actor_rollout_ref:
  actor:
    strategy: fsdp
    ppo_mini_batch_size: 256
    ppo_micro_batch_size: 64
  rollout:
    n: 1
    n_agent: 1
trainer:
  n_gpus_per_node: 8
  nnodes: 1
"""
AGENTS = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size={batch} \\
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \\
    actor_rollout_ref.actor.ppo_micro_batch_size=8 \\
    actor_rollout_ref.rollout.n_agent={agents} \\
    actor_rollout_ref.rollout.n={n} \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1
"""


def _agents_copy(tmp_path, trainer=_N_AGENT_TRAINER):
    _copy(tmp_path, "0.1", _EARLY_WORKERS)
    for name, text in (("verl/trainer/ppo/ray_trainer.py", trainer), ("verl/trainer/config/ppo_trainer.yaml", _N_AGENT_CONFIG)):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize("batch, agents, n, found", [
    (4, 2, 2, []),  # 8 prompts per step over 8 ranks: even, though 4 alone are not
    (6, 2, 2, [("BL182", "error", 3)]),  # 12 prompts over 8 ranks, though their 24 sequences would divide
    (6, 2, 1, [("BL140", "error", 3)]),  # 12 sequences over 8 ranks
    (8, 3, 1, []),
])
def test_a_copy_that_repeats_by_n_agent_is_judged_on_the_step_it_makes(lint, tmp_path, batch, agents, n, found):
    _agents_copy(tmp_path)
    assert _diagnostics(lint, tmp_path, "run.sh", AGENTS.format(batch=batch, agents=agents, n=n)) == found


def test_n_agent_is_read_only_where_the_copy_repeats_by_it(lint, tmp_path):
    """Without the repeat in the copy's trainer the same line is judged on the 4 prompts written."""
    _agents_copy(tmp_path, trainer="gen_batch_output = self.actor_rollout_wg.generate_sequences(gen_batch)\n")
    text = AGENTS.format(batch=4, agents=2, n=2)
    assert _diagnostics(lint, tmp_path, "run.sh", text, code="BL182") == [("BL182", "error", 3)]


def test_explain_counts_the_agents_in_the_step(tmp_path):
    _agents_copy(tmp_path)
    value, source = _explained(tmp_path, AGENTS.format(batch=96, agents=2, n=4))["prompts per generation round"]
    assert value == 192 and "data.train_batch_size (96) x actor_rollout_ref.rollout.n_agent (2)" in source


# -- a program of the project's own that runs verl's entry point as it is ------------------------------

# The shape of FoldAgent's scripts/train_fold.py: it registers an agent loop, then calls verl's main_ppo main,
# whose @hydra.main reads the line's overrides as `python -m verl.trainer.main_ppo` would.
HANDOVER = """\
import logging

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, register


@register("fold_agent")
class FoldAgentLoop(AgentLoopBase):
    async def run(self, sampling_params, **kwargs):
        return None


def main():
{body}


if __name__ == "__main__":
    main()
"""
HANDS_OVER = "    from verl.trainer.main_ppo import main as verl_main\n    verl_main()"


@pytest.mark.parametrize("body, found", [
    (HANDS_OVER, [("BL182", "error", 3)]),  # read as verl's: 60 prompts over 8 ranks at 0.3.0.post1
    ("    from verl.trainer import main_ppo\n    main_ppo.main()", [("BL182", "error", 3)]),
    # The program reads something of its own first: what verl reads is no longer the line as written.
    ("    import sys\n    sys.argv.append('data.train_batch_size=64')\n" + HANDS_OVER, []),
    ("    from verl.trainer.main_ppo import run_ppo\n    run_ppo(build_config())", []),
])
def test_a_program_that_runs_verls_main_as_it_is_is_read_as_verl(lint, tmp_path, body, found):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts/__init__.py").write_text("")
    (tmp_path / "scripts/train_fold.py").write_text(HANDOVER.format(body=body))
    text = PROMPTS.format(batch=60).replace("-m verl.trainer.main_ppo", "-m scripts.train_fold")
    assert _diagnostics(lint, tmp_path, "run.sh", text, "0.3.0.post1", code="BL182") == found


def test_a_program_with_a_hydra_config_of_its_own_is_not_verls_entry_point(lint, tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts/train_fold.py").write_text(
        "import hydra\nfrom verl.trainer.main_ppo import main\n\n\n"
        "@hydra.main(config_path='config', config_name='fold')\ndef run(config):\n    main()\n")
    text = PROMPTS.format(batch=60).replace("-m verl.trainer.main_ppo", "-m scripts.train_fold")
    assert _diagnostics(lint, tmp_path, "run.sh", text, "0.3.0.post1", code="BL182") == []


def test_a_program_out_of_view_is_not_read_as_verls(lint, tmp_path):
    text = PROMPTS.format(batch=60).replace("-m verl.trainer.main_ppo", "-m scripts.train_fold")
    assert _diagnostics(lint, tmp_path, "run.sh", text, "0.3.0.post1") == []


def test_the_handover_is_shown_as_what_the_label_rests_on(tmp_path):
    from batchlint.cli import main as cli

    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts/train_fold.py").write_text(HANDOVER.format(body=HANDS_OVER))
    (tmp_path / "run.sh").write_text(PROMPTS.format(batch=60).replace("-m verl.trainer.main_ppo", "-m scripts.train_fold"))
    result = CliRunner().invoke(cli, ["--show-files", str(tmp_path / "run.sh")])
    assert "verl: scripts.train_fold calls verl.trainer.main_ppo.main() as it is" in result.output


SFT_MODULE_LINE = """\
torchrun --nproc_per_node=8 -m {module} \\
    data.train_batch_size=60 \\
    data.micro_batch_size_per_gpu=4 \\
    model.partial_pretrain=Qwen/Qwen2.5-0.5B
"""


@pytest.mark.parametrize("module", ["verl.trainer.fsdp_sft_trainer", "recipe.sft"])
def test_a_program_under_torchrun_that_runs_verls_sft_main_is_read_as_verl(lint, tmp_path, module):
    (tmp_path / "recipe").mkdir()
    (tmp_path / "recipe/sft.py").write_text(
        "from verl.trainer.fsdp_sft_trainer import main\n\nif __name__ == '__main__':\n    main()\n")
    result = lint("run.sh", SFT_MODULE_LINE.format(module=module))
    # 60 over micro 4 x dp 8: the same finding as for verl's own module (a notice until a release is pinned).
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("BL103", 2)]


def test_a_program_under_torchrun_that_does_not_run_verls_main_is_not_verls(lint, tmp_path):
    (tmp_path / "recipe").mkdir()
    (tmp_path / "recipe/sft.py").write_text("from verl.trainer.fsdp_sft_trainer import FSDPSFTTrainer\n")
    assert not lint("run.sh", SFT_MODULE_LINE.format(module="recipe.sft")).diagnostics
