"""EasyR1 adapter: which files and launch lines it reads (and which stay verl's), where W and the
defaults come from, the batch arithmetic explain shows, and its start-up checks on both sides."""

import json

import pytest

from conftest import run, write

# The shape of EasyR1's examples/config.yaml: whole sections over the dataclass defaults.
CONFIG = """\
data:
  max_prompt_length: 2048
  max_response_length: 2048
  rollout_batch_size: 512
algorithm:
  adv_estimator: {estimator}
worker:
  actor:
    global_batch_size: 128
    micro_batch_size_per_device_for_update: {micro}
    micro_batch_size_per_device_for_experience: 2
    dynamic_batching: {dynamic}
    ulysses_size: 1
    fsdp:
      enable_cpu_offload: false
  rollout:
    n: 5
    tensor_parallel_size: 2
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""

# The shape of its examples/*.sh: the config file, then dotlist overrides.
LAUNCH = """\
#!/bin/bash
set -x
MODEL_PATH=Qwen/Qwen2.5-VL-7B-Instruct
python3 -m verl.trainer.main \\
    config=examples/config.yaml \\
    data.train_files=hiyouga/geometry3k@train \\
    worker.actor.model.model_path=${{MODEL_PATH}} \\
{overrides}    trainer.n_gpus_per_node={gpus}
"""


def config(estimator="grpo", micro=4, dynamic="false"):
    return CONFIG.format(estimator=estimator, micro=micro, dynamic=dynamic)


def lines(result, code):
    return sorted(d.span.line for d in result.diagnostics if d.code == code)


def explained(path, *args):
    result = run("explain", "--format", "json", *args, str(path))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows_of(explanation):
    return {row["name"]: (row["values"][0], row["source"]) for row in explanation["rows"]}


def project(workdir, script, text=None):
    """An EasyR1-shaped project: examples/config.yaml and a launch script beside it; returns the script."""
    write(workdir, "pyproject.toml", "[project]\nname = 'easyr1-user'\n")
    write(workdir, "examples/config.yaml", text or config())
    return write(workdir, f"examples/{script}", LAUNCH.format(overrides=script_overrides.get(script, ""), gpus=gpus[script]))


script_overrides = {
    "dapo.sh": "    data.mini_rollout_batch_size=256 \\\n    worker.actor.ulysses_size=4 \\\n    worker.actor.global_batch_size=32 \\\n"
               "    worker.rollout.n=16 \\\n",
    "one_gpu.sh": "",
    "two_nodes.sh": "    trainer.nnodes=2 \\\n",
}
gpus = {"dapo.sh": 8, "one_gpu.sh": 1, "two_nodes.sh": 8}


# -- what the adapter reads --------------------------------------------------------------

def test_an_easyr1_config_is_easyr1(lint):
    assert lint("config.yaml", config()).framework == "easyr1"


def test_verl_and_other_configs_stay_theirs(lint):
    verl = ("data:\n  train_batch_size: 512\nactor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 128\n"
            "  rollout:\n    n: 5\ntrainer:\n  n_gpus_per_node: 8\n")
    assert lint("ppo.yaml", verl).framework == "verl"
    nemo = "trainer:\n  devices: 8\nmodel:\n  micro_batch_size: 4\n  global_batch_size: 8\n  tensor_model_parallel_size: 1\n"
    assert lint("megatron_gpt_config.yaml", nemo).framework == "nemo"
    # Its keys without EasyR1's sections: a `worker` block alone, or a worker with no role section.
    assert lint("worker.yaml", "worker:\n  actor:\n    global_batch_size: 128\n").framework is None
    assert lint("pool.yaml", "worker:\n  replicas: 2\ntrainer:\n  global_batch_size: 128\n").framework != "easyr1"


def test_a_verl_launch_line_stays_verl(workdir):
    path = write(workdir, "run_grpo.sh", "python3 -m verl.trainer.main_ppo data.train_batch_size=512 "
                                         "actor_rollout_ref.rollout.n=5 trainer.n_gpus_per_node=8\n")
    [explanation] = explained(path)
    assert explanation["framework"] == "verl"


def test_the_launch_line_runs_its_config_with_its_overrides(workdir):
    path = project(workdir, "dapo.sh")
    [explanation] = explained(path)
    assert explanation["framework"] == "easyr1" and explanation["config"].startswith("examples/config.yaml, as launched")
    rows = rows_of(explanation)
    assert rows["world size W"][0] == 8 and "examples/dapo.sh:" in rows["world size W"][1]
    assert rows["sequence parallel degree"][0] == 4 and rows["data parallel dp"][0] == 2
    # 32 prompts x 16 samples = 512 sequences per optimizer step, 256 per rank, micro batches of 4.
    assert rows["global batch (sequences/step)"][0] == 512 and rows["gradient accumulation"][0] == 64
    assert rows["samples per prompt"][0] == 16 and rows["mini-batches (optimizer steps) per generation round"][0] == 16


def test_the_world_size_is_the_configs_with_the_lines_counts(workdir):
    # The line gives n_gpus_per_node; the config's nnodes is kept unless the line overrides it too.
    project(workdir, "two_nodes.sh")
    [explanation] = explained(workdir / "examples/two_nodes.sh")
    assert rows_of(explanation)["world size W"][0] == 16
    write(workdir, "examples/config.yaml", config().replace("  nnodes: 1\n", "  nnodes: 2\n"))
    write(workdir, "examples/one.sh", LAUNCH.format(overrides="", gpus=4))
    [explanation] = explained(workdir / "examples/one.sh")
    assert rows_of(explanation)["world size W"][0] == 8  # 4 x the config's 2 nodes


def test_a_line_without_a_config_file_is_the_defaults_and_its_overrides(workdir):
    path = write(workdir, "run.sh", "python3 -m verl.trainer.main worker.rollout.n=8 data.rollout_batch_size=64 "
                                    "worker.actor.global_batch_size=16 trainer.n_gpus_per_node=4\n")
    rows = rows_of(explained(path)[0])
    # Defaults: micro 4 per device, dynamic batching, sequence 512 + 512.
    assert rows["world size W"][0] == 4 and rows["global batch (sequences/step)"][0] == 128
    assert rows["micro batch (per GPU)"][0] == 4 * 1024 and rows["sequence length"][0] == 1024


def test_a_config_the_line_names_but_batchlint_cannot_read_is_not_guessed(workdir):
    path = write(workdir, "run.sh", "python3 -m verl.trainer.main config=$CONFIG worker.rollout.n=1 trainer.n_gpus_per_node=1\n")
    result = run("check", str(path))
    assert "BL170" not in result.stdout and "BL261" not in result.stdout
    assert run("explain", str(path)).stdout.startswith("batchlint: no training config recognised")


# -- explain -------------------------------------------------------------------------------

def test_explain_shows_the_rl_arithmetic(lint, workdir):
    write(workdir, "config.yaml", config(micro=4))
    rows = rows_of(explained(workdir / "config.yaml")[0])
    assert rows["micro batch (per GPU)"][0] == 4 and "micro_batch_size_per_device_for_update" in rows["micro batch (per GPU)"][1]
    # 128 prompts x 5 = 640 sequences over dp 8 = 80 per GPU, 20 micro batches of 4.
    assert rows["gradient accumulation"][0] == 20 and rows["world size W"][0] == 8 and rows["data parallel dp"][0] == 8
    assert rows["global batch (sequences/step)"][0] == 640 and rows["sequence length"][0] == 4096
    assert rows["sequences per optimizer step"][0] == 640 and rows["prompts per generation round"][0] == 512
    assert rows["generation batch (sequences)"][0] == 2560 and rows["mini batch (per optimizer step)"][0] == 128
    assert rows["mini-batches (optimizer steps) per generation round"][0] == 4
    assert rows["micro batch (actor experience)"][0] == 2


def test_explain_with_dynamic_batching_gives_a_token_budget(workdir):
    write(workdir, "config.yaml", config(micro=1, dynamic="true"))
    rows = rows_of(explained(workdir / "config.yaml")[0])
    value, source = rows["micro batch (per GPU)"]
    assert value == 4096 and "1 x the padded sequence length 4096" in source
    assert rows["gradient accumulation"][0] == "dynamic" and rows["global batch (sequences/step)"][0] == 640


def test_explain_shows_the_critic_gae_trains(workdir):
    critic = "  critic:\n    global_batch_size: 64\n    dynamic_batching: false\n"
    write(workdir, "config.yaml", config(estimator="gae").replace("  rollout:\n", critic + "  rollout:\n"))
    rows = rows_of(explained(workdir / "config.yaml")[0])
    # The critic's own defaults (not the actor's): micro 4 for update, 16 for experience; 64 x 5 / 8 = 40 per
    # GPU, 10 micro-steps.
    assert rows["micro batch (critic)"][0] == 4 and rows["micro batch (critic experience)"][0] == 16
    assert rows["micro-steps per mini-batch (critic)"][0] == 10


# -- the start-up checks -----------------------------------------------------------------

def test_the_examples_are_clean(lint):
    assert lint("config.yaml", config()).diagnostics == []
    assert lint("config.yaml", config(micro=1, dynamic="true")).diagnostics == []


@pytest.mark.parametrize("world, flagged", [(7, [9]), (6, [9]), (16, []), (8, [])])
def test_a_mini_batch_the_gpus_floor_is_reported(lint, world, flagged):
    # 128 x 5 = 640 sequences: floored to 91 per GPU on 7 (637 a step), to 106 on 6 (636).
    assert lines(lint("config.yaml", config(micro=1), world_size=world), "BL142") == flagged


def test_a_per_gpu_mini_batch_no_micro_batch_divides_refuses(lint):
    result = lint("config.yaml", config(micro=3))  # 80 per GPU
    [finding] = [d for d in result.diagnostics if d.code == "BL142"]
    assert lines(result, "BL142") == [10] and "mini-batch 80 is not a multiple of its micro batch 3" in finding.message
    assert "EasyR1 asserts it is a multiple of the micro batch and refuses to start." in finding.notes


def test_grpo_with_one_sample_refuses_and_reinforce_does_not(lint):
    one = config().replace("    n: 5\n", "    n: 1\n")
    assert lines(lint("config.yaml", one), "BL170") == [17]
    assert lines(lint("config.yaml", one.replace("adv_estimator: grpo", "adv_estimator: reinforce_plus_plus")), "BL170") == []


def test_the_rollout_batch_must_be_whole_mini_batches(lint):
    result = lint("config.yaml", config().replace("rollout_batch_size: 512", "rollout_batch_size: 500"))
    [finding] = [d for d in result.diagnostics if d.code == "BL170"]
    assert finding.span.line == 4 and "is not a multiple of 640" in finding.message
    assert "worker.actor.global_batch_size (128) x worker.rollout.n (5) = 640" in " ".join(finding.notes)
    assert lines(lint("config.yaml", config().replace("rollout_batch_size: 512", "rollout_batch_size: 384")), "BL170") == []


def test_a_rollout_tp_the_launch_gpus_cannot_hold(workdir):
    path = project(workdir, "one_gpu.sh")
    result = run("check", "--format", "json", "--exit-zero", str(path))
    [finding] = [d for d in json.loads(result.stdout) if d["code"] == "BL261"]
    assert finding["path"].endswith("examples/config.yaml") and finding["line"] == 18
    write(workdir, "examples/one_gpu.sh", LAUNCH.format(overrides="    worker.rollout.tensor_parallel_size=1 \\\n", gpus=1))
    assert [d for d in json.loads(run("check", "--format", "json", "--exit-zero", str(path)).stdout)] == []


def test_cpu_offload_with_accumulation_refuses(lint):
    offloaded = config(micro=4).replace("enable_cpu_offload: false", "enable_cpu_offload: true")
    assert lines(lint("config.yaml", offloaded), "BL541") == [15]
    assert lines(lint("config.yaml", offloaded.replace("update: 4", "update: 80")), "BL541") == []


def test_a_response_longer_than_the_rollout_token_budget_refuses(lint):
    long = config().replace("max_response_length: 2048", "max_response_length: 8192")
    assert lines(lint("config.yaml", long), "BL402") == [3]
    raised = long.replace("    tensor_parallel_size: 2\n", "    tensor_parallel_size: 2\n    max_num_batched_tokens: 10240\n")
    assert lines(lint("config.yaml", raised), "BL402") == []


def test_a_config_alone_has_no_assumed_world_size(lint, workdir):
    # Launched, EasyR1 runs on its default 8 GPUs; a file alone may be launched with other counts.
    alone = config(micro=1).replace("  n_gpus_per_node: 8\n", "").replace("rollout_batch_size: 512", "rollout_batch_size: 510")
    alone = alone.replace("global_batch_size: 128", "global_batch_size: 30")
    assert lint("config.yaml", alone).diagnostics == []
    assert lines(lint("config.yaml", alone, world_size=6), "BL161") == []
    assert lines(lint("config.yaml", alone, world_size=8), "BL161") == [4]
    write(workdir, "examples/config.yaml", alone)
    write(workdir, "examples/run.sh", "python3 -m verl.trainer.main config=examples/config.yaml data.seed=2\n")
    found = json.loads(run("check", "--format", "json", "--exit-zero", str(workdir / "examples/run.sh")).stdout)
    [finding] = [d for d in found if d["code"] == "BL161"]
    assert finding["message"].endswith("over W 8")


def test_the_default_of_one_sample_is_judged_only_when_launched(lint, workdir):
    unwritten = config().replace("    n: 5\n", "")
    assert lines(lint("config.yaml", unwritten), "BL170") == []  # a launch line may give n
    write(workdir, "examples/config.yaml", unwritten)
    write(workdir, "examples/run.sh", "python3 -m verl.trainer.main config=examples/config.yaml trainer.n_gpus_per_node=8\n")
    found = json.loads(run("check", "--format", "json", "--exit-zero", str(workdir / "examples/run.sh")).stdout)
    assert [d["code"] for d in found if "worker.rollout.n (default 1)" in " ".join([d["message"], *d["notes"]])] == ["BL170"]
    write(workdir, "examples/run.sh", "python3 -m verl.trainer.main config=examples/config.yaml worker.rollout.n=4 "
                                      "trainer.n_gpus_per_node=8\n")
    assert json.loads(run("check", "--format", "json", "--exit-zero", str(workdir / "examples/run.sh")).stdout) == []


# -- which EasyR1 release refuses (lint/premise.py) ------------------------------------------------------

def severities(result, code):
    return [(d.severity, d.span.line) for d in result.diagnostics if d.code == code]


def checkout(workdir, version):
    """An EasyR1 checkout or fork: its verl/__init__.py writes the release (EasyR1 is on no package index)."""
    write(workdir, "verl/__init__.py", f'__version__ = "{version}"\n')


@pytest.mark.parametrize("version, found", [
    (None, [("info", 10)]),  # no checkout in view: a layout from before v0.3.0 may predate the check
    ("0.3.2", [("error", 10)]),
    ("0.3.3.dev0", [("error", 10)]),  # main after v0.3.2
    ("0.3.0", [("error", 10)]),
    ("0.2.0.dev", []),  # before v0.3.0: the check lands on 2025-03-27
])
def test_a_micro_batch_that_does_not_divide_is_judged_by_the_checkouts_release(lint, tmp_path, version, found):
    if version is not None:
        checkout(tmp_path, version)
    assert severities(lint("config.yaml", config(micro=3)), "BL142") == found


ULYSSES = config(micro=3).replace("ulysses_size: 1", "ulysses_size: 2")  # 128 x 5 // (8 / 2) = 160, micro 3


@pytest.mark.parametrize("version, found", [
    (None, [("error", 10)]),  # ulysses_size is new in v0.3.1: only v0.3.1 and later run the config
    ("0.3.1", [("error", 10)]),
    ("0.3.0", []),  # it calls the key ulysses_sequence_parallel_size and rounds otherwise
])
def test_with_ulysses_the_mini_batch_is_judged_from_v0_3_1(lint, tmp_path, version, found):
    if version is not None:
        checkout(tmp_path, version)
    assert severities(lint("config.yaml", ULYSSES), "BL142") == found


@pytest.mark.parametrize("version, found", [(None, [("error", 5)]), ("0.3.0", [])])
def test_online_filtering_rounds_are_judged_from_v0_3_1(lint, tmp_path, version, found):
    if version is not None:
        checkout(tmp_path, version)
    rounds = config().replace("rollout_batch_size: 512\n", "rollout_batch_size: 512\n  mini_rollout_batch_size: 100\n")
    assert severities(lint("config.yaml", rounds), "BL161") == found


def test_checks_of_every_easyr1_layout_are_errors_without_a_checkout(lint):
    long = config().replace("max_response_length: 2048", "max_response_length: 8192")
    assert severities(lint("config.yaml", long), "BL402") == [("error", 3)]
    one_gpu = config().replace("n_gpus_per_node: 8", "n_gpus_per_node: 1").replace("rollout_batch_size: 512", "rollout_batch_size: 511")
    assert severities(lint("one.yaml", one_gpu), "BL261") == [("error", 18)]
