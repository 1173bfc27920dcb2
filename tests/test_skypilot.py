"""SkyPilot task files: the `run: |` block is a launch script read where it stands in the YAML, with
the task's envs and SkyPilot's variables; W from the launch lines it holds. The tasks have the shapes
of skypilot-org/skypilot's llm/ examples (torchrun, tune run, verl, accelerate under a workdir)."""

import pytest

from batchlint.frameworks import skypilot
from batchlint.sources.shell import UNKNOWN
from batchlint.sources.yaml import read_yaml, string_in_place

from conftest import lint_text, write
from test_launch import found

HF = "model_name_or_path: m\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n"
TASK = """\
# batchlint: global-batch=64
name: sft

resources:
  accelerators: {accelerators}
  use_spot: true

num_nodes: 2

envs:
  CONFIG: configs/sft.yaml
  HF_TOKEN:

setup: |
  pip install -r requirements.txt

run: |
  head_ip=$(echo "$SKYPILOT_NODE_IPS" | head -n1)
  torchrun --nnodes $SKYPILOT_NUM_NODES --node_rank ${{SKYPILOT_NODE_RANK:-0}} \\
    --master_addr $head_ip --nproc_per_node $SKYPILOT_NUM_GPUS_PER_NODE \\
    train.py --config $CONFIG
"""


def gpus(resources: str):
    root = read_yaml("task.yaml", f"resources:\n{resources}\nrun: echo\n").root
    return skypilot.environment(root)["SKYPILOT_NUM_GPUS_PER_NODE"].value


@pytest.mark.parametrize("resources, count", [
    ("  accelerators: A100:8", "8"),
    ("  accelerators: A100-80GB:4", "4"),
    ("  accelerators: {A100: 8}", "8"),
    ("  accelerators: L4", "1"),
    ("  accelerators: [A100:8, A100-80GB:8, H100:8]", "8"),  # a choice, all of one count
    ("  accelerators: {A100:8, H100:8}", "8"),  # a set of choices
    ("  any_of:\n    - accelerators: A100:8\n    - accelerators: H100:8\n      cloud: aws", "8"),
    ("  cpus: 4+", "0"),
    ("  accelerators: [A100:8, H100:4]", UNKNOWN),  # a choice of counts
    ("  accelerators: {A100:8, H100:4}", UNKNOWN),
    ("  ordered:\n    - accelerators: A100:8\n    - cpus: 8", UNKNOWN),  # a choice without GPUs
    ("  accelerators: A100:0.5", UNKNOWN),  # a fraction: a shared GPU
    ("  accelerators: {A100: 0}", UNKNOWN),
    ("  accelerators: A100:$N", UNKNOWN),
])
def test_gpus_per_node_is_the_one_count_every_choice_gives(resources, count):
    assert gpus(resources) == count


def test_the_task_sets_its_envs_and_skypilots_variables():
    text = "num_nodes: 4\nenvs:\n  A: x\n  B: 3\n  C:\n  D: 1e-6\n  E: true\nsecrets:\n  HF_TOKEN: null\nrun: echo\n"
    env = skypilot.environment(read_yaml("t.yaml", text).root)
    values = {name: word.value for name, word in env.items()}
    assert values == {"A": "x", "B": "3", "C": UNKNOWN, "D": UNKNOWN, "E": "True", "HF_TOKEN": UNKNOWN,
                      "SKYPILOT_NUM_NODES": "4", "SKYPILOT_NUM_GPUS_PER_NODE": "0",
                      "SKYPILOT_NODE_RANK": UNKNOWN, "SKYPILOT_NODE_IPS": UNKNOWN}
    assert env["SKYPILOT_NUM_NODES"].span.line == 1 and env["B"].span.line == 4
    assert skypilot.environment(read_yaml("t.yaml", "run: echo\n").root)["SKYPILOT_NUM_NODES"].value == "1"
    assert skypilot.environment(read_yaml("t.yaml", "num_nodes: $N\nrun: echo\n").root)[
        "SKYPILOT_NUM_NODES"].value is UNKNOWN


def test_w_is_nodes_times_gpus_per_node_and_findings_point_into_the_task(repo):
    write(repo, "configs/sft.yaml", HF)
    result = lint_text(repo, "task.yaml", TASK.format(accelerators="A100:8"))
    # 4 x 2 x W 16 = 128, not 64
    assert found(result) == [("configs/sft.yaml", "BL102", 3)]
    [finding] = result.diagnostics
    assert "the global batch is 128" in finding.message
    launched = finding.related[-1]
    assert (launched.path, launched.span.line, launched.span.column) == ("task.yaml", 19, 3)
    assert "W=16" in launched.message


@pytest.mark.parametrize("accelerators", ["A100:4", "[A100:8, H100:4]", "A100:0.5"])
def test_another_w_or_none_is_quiet(repo, accelerators):
    write(repo, "configs/sft.yaml", HF)  # 4 x 2 x W 8 = 64: right; a choice of counts: W unknown
    assert found(lint_text(repo, "task.yaml", TASK.format(accelerators=accelerators))) == []


def test_the_run_block_is_read_where_it_stands(repo):
    write(repo, "configs/sft.yaml", HF)
    text = TASK.format(accelerators="A100:8").replace("train.py --config $CONFIG", "train.py --config configs/sft.yaml")
    [finding] = lint_text(repo, "task.yaml", text).diagnostics
    assert finding.span.line == 3  # in the config; the W note points at the task's count
    one_line = "resources:\n  accelerators: H100:8\nrun: torchrun --nproc_per_node 8 train.py --config configs/sft.yaml\n"
    write(repo, "configs/sft.yaml", HF.replace("gradient_accumulation_steps: 2", "gradient_accumulation_steps: 3"))
    result = lint_text(repo, "one.yaml", one_line, global_batch=64)
    [finding] = result.diagnostics
    assert [(r.path, r.span.line, r.span.column) for r in finding.related][-1] == ("one.yaml", 3, 6)


def test_a_config_with_a_run_key_is_still_a_config(repo):
    # a `run` key with no task key beside it, or a `run` that is no script: not a task
    for text in ("run: quick\n" + HF, "dry_run: true\nenvs: {}\n" + HF, "run:\n  name: x\nenvs: {}\n" + HF):
        result = lint_text(repo, "sft.yaml", text, global_batch=64, world_size=16)
        assert result.framework == "transformers", text
        assert [d.code for d in result.diagnostics] == ["BL102"]


def test_workdir_and_file_mounts_name_the_projects_files(repo):
    """llm/axolotl's shape (a workdir) and llm/llama-3_1-finetuning's (`/configs: ./configs`)."""
    write(repo, "mistral/qlora.yaml", HF)
    write(repo, "configs/8B-lora.yaml", HF)
    workdir = ("resources:\n  accelerators: L4:2\nworkdir: mistral\nrun: |\n"
               "  torchrun --nproc_per_node $SKYPILOT_NUM_GPUS_PER_NODE train.py qlora.yaml\n")
    assert found(lint_text(repo, "axolotl.yaml", workdir, global_batch=64)) == [("mistral/qlora.yaml", "BL102", 3)]
    mounted = ("envs:\n  MODEL_SIZE: 8B\nresources:\n  accelerators: A100:2\nfile_mounts:\n  /configs: ./configs\n"
               "run: |\n  torchrun --nproc_per_node $SKYPILOT_NUM_GPUS_PER_NODE train.py /configs/${MODEL_SIZE}-lora.yaml\n")
    assert found(lint_text(repo, "lora.yaml", mounted, global_batch=64)) == [("configs/8B-lora.yaml", "BL102", 3)]
    # without the mount the path on the node is not the project's
    assert found(lint_text(repo, "lora2.yaml", mounted.replace("/configs: ./configs", "/data: ./data"),
                           global_batch=64)) == []


def test_verl_overrides_in_the_run_block_take_the_tasks_counts(repo):
    """llm/verl's shape: SkyPilot's counts copied to variables, the launch inside a branch on the node rank."""
    write(repo, "requirements.txt", "verl==0.5.0\n")  # the legacy FSDP workers (to 0.7.1) normalise the mini-batch
    text = ("resources:\n  accelerators: H100:8\nnum_nodes: 2\nenvs:\n  EPOCHS: 1\nrun: |\n"
            "  NUM_NODES=$SKYPILOT_NUM_NODES\n  GPUS=$SKYPILOT_NUM_GPUS_PER_NODE\n"
            "  if [ \"$SKYPILOT_NODE_RANK\" == \"0\" ]; then\n"
            "    python3 -m verl.trainer.main_ppo data.train_batch_size=40 \\\n"
            "      actor_rollout_ref.actor.ppo_mini_batch_size=40 \\\n"
            "      actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=5 \\\n"
            "      trainer.n_gpus_per_node=$GPUS trainer.nnodes=$NUM_NODES trainer.total_epochs=$EPOCHS\n  fi\n")
    # W = 2 x 8: 40 prompts are no multiple of 16 (BL140), nor 40 // 16 = 2 of micro 5 (BL142)
    assert found(lint_text(repo, "verl.yaml", text)) == [("verl.yaml", "BL140", 10), ("verl.yaml", "BL142", 12)]
    # one node of 8: 40 // 8 = 5 per GPU, one micro-batch of 5
    assert found(lint_text(repo, "verl1.yaml", text.replace("num_nodes: 2", "num_nodes: 1"))) == []


@pytest.mark.parametrize("run", ["run: >\n  torchrun --nproc_per_node 8 train.py configs/sft.yaml\n",
                                 "run: |\n  echo 'unterminated\n  torchrun --nproc_per_node 8 train.py configs/sft.yaml\n",
                                 'run: "torchrun --nproc_per_node 8 \\\\\n  train.py configs/sft.yaml"\n'])
def test_a_script_not_read_gives_no_finding_and_no_crash(repo, run):
    write(repo, "configs/sft.yaml", HF)
    result = lint_text(repo, "task.yaml", "resources:\n  accelerators: A100:8\n" + run, global_batch=64)
    assert result.error is None and result.diagnostics == []
    assert result.framework == "launch"


def test_string_in_place_keeps_lines_and_columns():
    text = "name: x\nrun: |\n  cd x\n\n  torchrun \\\n    t.py\nsetup: echo hi\n"
    assert string_in_place(text, read_yaml("t", text).root.items["run"]).split("\n") == \
        ["", "", "  cd x", "", "  torchrun \\", "    t.py", "", ""]
    text = "run: python t.py --a 1  # comment\n"
    assert string_in_place(text, read_yaml("t", text).root.items["run"]) == "     python t.py --a 1\n"
    for text in ("run: >\n  a\n  b\n", "run: |2\n    a\n", 'run: "a\\tb"\n', "run: |\r  a\r"):
        assert string_in_place(text, read_yaml("t", text).root.items["run"]) is None
