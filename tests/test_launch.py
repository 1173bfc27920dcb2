"""Launch scripts: the world size and overrides of a launch line flow into the
config it names, and a line that holds all settings is checked itself."""

import json

import pytest

from batchlint import per_run

from conftest import cli_runner, lint_text, run, write

HF = "model_type: qwen2\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n"
DS = '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 4\n}\n'
TITAN = (
    '[model]\nname = "llama4"\n\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n\n'
    "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\npipeline_parallel_degree = 4\n"
)


def lint_script(repo, text, name="train.sh", **kwargs):
    return lint_text(repo, name, text, **kwargs)


def found(result):
    return sorted((d.path, d.code, d.span.line) for d in result.diagnostics)


def test_torchrun_world_size_reaches_the_config(repo):
    write(repo, "configs/sft.yaml", HF)
    script = "#!/bin/bash\n# batchlint: global-batch=64\ntorchrun --nproc_per_node 4 --nnodes 2 train.py --config configs/sft.yaml\n"
    result = lint_script(repo, script)
    # 2 x 8 x W 8 = 128, not 64
    assert found(result) == [("configs/sft.yaml", "BL102", 3)]
    [finding] = result.diagnostics
    assert "the global batch is 128" in finding.message
    assert [(r.path, r.span.line) for r in finding.related] == [("train.sh", 2), ("train.sh", 3)]


def test_an_override_on_the_launch_line_is_what_is_reported(repo):
    write(repo, "configs/sft.yaml", HF)
    script = "# batchlint: global-batch=64\nNPROC_PER_NODE=8 swift sft --config configs/sft.yaml \\\n    --gradient_accumulation_steps 16\n"
    [finding] = lint_script(repo, script).diagnostics
    assert (finding.path, finding.code, finding.span.line, finding.span.column) == ("train.sh", "BL102", 3, 35)
    assert "the global batch is 256" in finding.message
    assert "gradient_accumulation_steps (16)" in " ".join((finding.message,) + finding.notes)


def test_deepspeed_launcher_num_gpus_is_w_for_the_json(repo):
    write(repo, "ds.json", DS)
    result = lint_script(repo, "deepspeed --num_gpus 8 --num_nodes 1 train.py --deepspeed ds.json\n")
    assert found(result) == [("ds.json", "BL102", 2)]
    assert "world size (8)" in " ".join(result.diagnostics[0].notes)


@pytest.mark.parametrize("count", ["\u00b2", "9" * 5000, "0", "0:0", "-1", "4:8", "'$GPUS'"])
def test_a_process_count_that_is_no_positive_whole_number_leaves_w_unknown(repo, count):
    """'²' passes str.isdigit() but not int(); 5000 digits pass the regex but not int()'s
    4300-digit limit; `0:0` used to give W = 0. None of them is a world size."""
    write(repo, "ds.json", DS)
    result = lint_script(repo, f"deepspeed --num_gpus {count} train.py --deepspeed ds.json\n")
    assert result.error is None and result.diagnostics == []


def test_an_elastic_count_with_equal_bounds_is_that_count(repo):
    write(repo, "ds.json", DS)
    assert found(lint_script(repo, "torchrun --nproc_per_node=4:4 train.py --deepspeed ds.json\n")) == []
    assert found(lint_script(repo, "torchrun --nproc_per_node=8:8 t.py --deepspeed ds.json\n", "b.sh")) == [
        ("ds.json", "BL102", 2)]


def test_an_array_as_env_prefix_is_no_count(repo):
    """`NPROC_PER_NODE=(4 4) swift sft ...`: the reader gives the prefix as a list of words,
    which used to crash the launch reader; it is no process count."""
    write(repo, "ds.json", DS)
    script = ("NPROC_PER_NODE=(4 4) NNODES=(1) swift sft --per_device_train_batch_size 2 --sequence_parallel_size 3\n"
              "NGPU=(8) ./run_train.sh --training.local_batch_size 2\n"
              "A=(1 2) torchrun --nproc_per_node 8 train.py --deepspeed ds.json\n")
    result = lint_script(repo, script)
    assert result.error is None
    assert found(result) == [("ds.json", "BL102", 2)]  # the torchrun line still gives W = 8


def test_accelerate_num_processes_counts_all_nodes(repo):
    write(repo, "ds.json", DS)
    # 4 x 4 x 4 = 64: consistent
    assert lint_script(repo, "accelerate launch --num_processes 4 --num_machines 2 train.py --deepspeed ds.json\n").diagnostics == []


def test_unknown_world_size_stays_silent(repo):
    write(repo, "ds.json", DS.replace("64", "128"))
    assert lint_script(repo, "deepspeed train.py --deepspeed ds.json\n").diagnostics == []


def test_the_launch_line_beats_a_stale_directive_and_says_so(repo):
    """The launch line is what runs: a config's `world-size` written for another job size is
    reported (BL004) and the config is judged at the launch line's W."""
    write(repo, "configs/sft.yaml", "# batchlint: world-size=4 global-batch=64\n" + HF)
    result = lint_script(repo, "torchrun --nproc_per_node 8 train.py configs/sft.yaml\n")
    assert found(result) == [("configs/sft.yaml", "BL004", 1), ("configs/sft.yaml", "BL102", 4)]
    stale = next(d for d in result.diagnostics if d.code == "BL004")
    assert "world-size=4" in stale.message and "W=8" in stale.message and "write world-size=8" in stale.fix
    assert [(r.path, r.span.line) for r in stale.related] == [("train.sh", 1)]
    mismatch = next(d for d in result.diagnostics if d.code == "BL102")
    assert "the global batch is 128" in mismatch.message  # 2 x 8 x W 8, not the directive's 4


def test_a_directive_that_agrees_with_the_launch_line_is_quiet(repo):
    write(repo, "configs/sft.yaml", "# batchlint: world-size=8 global-batch=128\n" + HF)
    assert found(lint_script(repo, "torchrun --nproc_per_node 8 train.py configs/sft.yaml\n")) == []


def test_a_directive_beats_a_launch_line_that_assumes_its_world_size(repo):
    """`python -m verl.trainer.main_ppo` without trainer.n_gpus_per_node assumes verl's default 8:
    an assumption, not a fact about the job, so the directive stands."""
    text = ("# batchlint: world-size=4\npython3 -m verl.trainer.main_ppo data.train_batch_size=1024 "
            "actor_rollout_ref.actor.ppo_mini_batch_size=256 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16\n")
    write(repo, "run.sh", text)
    import json

    from conftest import run

    [explained] = json.loads(run("explain", "--format", "json", "run.sh").stdout)
    world = next(row for row in explained["rows"] if row["name"] == "world size W")
    assert world["values"] == [4] and "directive" in world["source"]
    assert not [d for d in lint_script(repo, text, name="run2.sh").diagnostics if d.code == "BL004"]


def test_explain_what_if_says_which_launch_world_size_it_replaces(repo):
    write(repo, "configs/sft.yaml", HF)
    write(repo, "train.sh", "torchrun --nproc_per_node 8 --nnodes 2 train.py configs/sft.yaml\n")
    from conftest import run

    line = next(row for row in run("explain", "-w", "4", "train.sh").stdout.splitlines()
                if row.strip().startswith("world size W"))
    assert " 4 " in line and "instead of W=16" in line


def test_torchtitan_layout_at_the_launch_world_size(repo):
    write(repo, "llama4.toml", TITAN)
    script = (
        'NGPU=${NGPU:-"8"}\nCONFIG_FILE=${CONFIG_FILE:-"llama4.toml"}\n'
        "torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --local-ranks-filter 0 --role rank --tee 3 \\\n"
        "    -m torchtitan.train --job.config_file ${CONFIG_FILE} --training.seq_len 8190\n"
    )
    result = lint_script(repo, script)
    # W 8 < tp 8 x pp 4; 1 microbatch for 4 stages; 8190 not a multiple of tp 8 x 2
    assert found(result) == [("llama4.toml", "BL111", 5), ("llama4.toml", "BL202", 10), ("train.sh", "BL401", 4)]
    layout = next(d for d in result.diagnostics if d.code == "BL202")
    assert "W (8)" in layout.message and "= 32" in " ".join((layout.message,) + layout.notes)


def test_megatron_arguments_in_arrays_are_checked_in_the_script(repo):
    script = (
        "GPUS_PER_NODE=8\nNUM_NODES=1\n"
        "DISTRIBUTED_ARGS=(\n    --nproc_per_node $GPUS_PER_NODE \n    --nnodes $NUM_NODES \n)\n"
        "TRAINING_ARGS=(\n    --micro-batch-size 1 \n    --global-batch-size 1536 \n    --seq-length 2048\n)\n"
        "MODEL_PARALLEL_ARGS=(\n\t--tensor-model-parallel-size 8 \n\t--pipeline-model-parallel-size 16 \n)\n"
        "torchrun ${DISTRIBUTED_ARGS[@]} examples/classes/pretrain_gpt.py \\\n"
        "    ${TRAINING_ARGS[@]} \\\n    ${MODEL_PARALLEL_ARGS[@]}\n"
    )
    result = lint_script(repo, script)
    assert found(result) == [("train.sh", "BL202", 14)]
    assert "W (8)" in result.diagnostics[0].message and "= 128" in " ".join(result.diagnostics[0].notes)


def test_missing_config_file_is_no_crash(repo):
    assert lint_script(repo, "torchrun --nproc_per_node 8 train.py --config missing.yaml\n").diagnostics == []


@pytest.mark.parametrize("line, named", [
    ("torchrun --nproc_per_node 8 train.py --config missing.yaml\n", "missing.yaml"),
    ("deepspeed --num_gpus 8 train.py --deepspeed missing.json\n", "missing.json"),
    ("llamafactory-cli train configs/missing.yaml\n", "configs/missing.yaml"),
    ("python -m verl.trainer.main config=missing.yaml trainer.n_gpus_per_node=6\n", "missing.yaml"),
])
def test_a_config_the_line_names_that_is_not_there_is_said(repo, line, named):
    # The run passes: the user must learn that the config was not checked, and where it is named.
    result = lint_script(repo, line)
    assert result.diagnostics == []
    assert result.notices == [f"train.sh:1: `{named}`, the config the launch line names, is not found in the "
                              "project; its settings are not checked"]


@pytest.mark.parametrize("line", [
    # `--in-files a.json b.json`: b.json may be the flag's second file, not the program's config.
    "python split.py --in-files data/a.json data/b.json --out-file c.json\n",
    # A launcher that takes a config under any flag takes a dataset's too.
    "mpirun -n 8 python run_squad.py --train_file data/train-v1.1.json --predict_file data/dev.json\n",
    # A missing .py is more often the program than a config.
    "deepspeed --autotuning run ~/transformers/examples/run_glue.py --deepspeed ds.json\n",
])
def test_a_file_taken_for_a_config_only_by_its_name_is_not_said_missing(repo, line):
    write(repo, "split.py", "import argparse\n")
    write(repo, "ds.json", DS)
    result = lint_script(repo, line)
    assert not any("not found" in n for n in result.notices), result.notices


def test_a_missing_file_of_a_flag_called_a_config_is_said_under_any_launcher(repo):
    result = lint_script(repo, "mpirun -n 8 python run_squad.py --deepspeed_config ds_missing.json\n")
    assert result.notices == ["train.sh:1: `ds_missing.json`, the config the launch line names, is not found in "
                              "the project; its settings are not checked"]


def test_a_config_named_from_a_folder_above_the_script_is_found(repo):
    # `cd internvl_chat && sh shell/v1/train.sh`: the script names zero_stage1_config.json of internvl_chat/.
    (repo / ".git").mkdir()  # a repository: its files are the project
    write(repo, "internvl_chat/zero_stage1_config.json", DS)
    result = lint_script(repo, "torchrun --nproc_per_node 8 train.py --deepspeed zero_stage1_config.json\n",
                         name="internvl_chat/shell/v1/train.sh")
    assert found(result) == [("internvl_chat/zero_stage1_config.json", "BL102", 2)]
    assert not any("not found" in n for n in result.notices)


def test_scripts_without_a_launcher_yield_nothing(repo):
    result = lint_script(repo, "#!/bin/bash\necho hello\nls -la\n")
    assert result.diagnostics == []


def test_verl_overrides_on_top_of_verl_defaults(repo):
    write(repo, "requirements.txt", "verl==0.5.0\n")  # the legacy FSDP workers (to 0.7.1) normalise the mini-batch
    # The shape of verl's examples/rollout_correction/run_with_rollout_corr.sh: W from verl's defaults
    # (8 GPUs x 1 node); per-GPU mini batch 32 x n 1 // 8 = 4 is not divisible by the micro batch 8.
    script = (
        "#!/usr/bin/env bash\nset -xeuo pipefail\n"
        "train_batch_size=128\nppo_mini_batch_size=32\n"
        "python3 -m verl.trainer.main_ppo \\\n"
        "    data.train_batch_size=${train_batch_size} \\\n"
        "    actor_rollout_ref.actor.ppo_mini_batch_size=${ppo_mini_batch_size} \\\n"
        "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \\\n"
        "    actor_rollout_ref.rollout.name=vllm \\\n"
        "    trainer.total_epochs=10\n"
    )
    result = lint_script(repo, script)
    assert found(result) == [("train.sh", "BL142", 8)]
    [finding] = result.diagnostics
    assert "// W (8) = 4" in " ".join((finding.message,) + finding.notes)
    assert ("train.sh", 4) in [(r.path, r.span.line) for r in finding.related]  # where 32 was set
    # Told the real GPU count, the same script is fine: 32 x 1 // 4 = 8.
    assert lint_script(repo, script.replace("trainer.total_epochs=10", "trainer.n_gpus_per_node=4"), "four.sh").diagnostics == []


@pytest.mark.parametrize("gpus", ["\u00b2", "9" * 5000, "0", "$GPUS", "${GPUS:-$N}"])
def test_verl_gpu_count_that_is_no_positive_whole_number_leaves_w_unknown(repo, gpus):
    """Not verl's default 8 either: `trainer.n_gpus_per_node=$GPUS` (from the environment) used
    to be dropped as an unknown word, and W assumed to be 8."""
    script = ("python3 -m verl.trainer.main_ppo data.train_batch_size=128 actor_rollout_ref.actor.ppo_mini_batch_size=32 "
              f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 trainer.n_gpus_per_node={gpus}\n")
    result = lint_script(repo, script)
    assert result.error is None and result.diagnostics == []


def test_swift_megatron_sequence_parallel_at_tp1_on_the_launch_line(repo):
    script = (
        "NPROC_PER_NODE=8 \\\nmegatron sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n"
        "    --tensor_model_parallel_size 1 \\\n    --sequence_parallel true \\\n"
        "    --micro_batch_size 1 \\\n    --global_batch_size 16\n"
    )
    assert found(lint_script(repo, script)) == [("train.sh", "BL203", 5)]
    assert found(lint_script(repo, script.replace("parallel_size 1", "parallel_size 2"), "tp2.sh")) == []


def test_hydra_config_name_selects_the_megatron_trainer(repo):
    write(repo, "requirements.txt", "verl==0.5.0\n")  # the legacy FSDP workers (to 0.7.1) normalise the mini-batch
    # verl's --config-name=ppo_megatron_trainer: the FSDP per-GPU mini-batch check does not apply.
    script = (
        "python3 -m verl.trainer.main_ppo --config-path=config \\\n"
        "    --config-name='ppo_megatron_trainer.yaml' \\\n"
        "    data.train_batch_size=64 \\\n"
        "    actor_rollout_ref.actor.ppo_mini_batch_size=64 \\\n"
        "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \\\n"
        "    actor_rollout_ref.rollout.n=5 \\\n"
        "    trainer.nnodes=3\n"
    )
    assert "BL142" not in [d.code for d in lint_script(repo, script).diagnostics]
    fsdp = script.replace("    --config-name='ppo_megatron_trainer.yaml' \\\n", "")
    assert "BL142" in [d.code for d in lint_script(repo, fsdp, "fsdp.sh").diagnostics]  # 64 x 5 // 24 = 13, 13 % 16


def test_a_config_and_its_launch_script_report_a_finding_once(repo):

    from batchlint.cli import main

    write(repo, "sft.yaml", "model: Qwen/Qwen3-8B\ntuner_type: lora\nmicro_batch_size: 1\nglobal_batch_size: 16\nsequence_parallel: true\n")
    write(repo, "sft.sh", "NPROC_PER_NODE=4 megatron sft --config sft.yaml\n")
    result = cli_runner().invoke(main, ["--format", "json", "."])
    import json

    findings = json.loads(result.stdout)
    assert [(f["path"], f["code"]) for f in findings] == [("sft.yaml", "BL203")]
    assert findings[0]["related"][-1]["path"] == "sft.sh"  # the launch's context was kept


# -- launch lines behind wrappers and built elsewhere (the shapes real repos use) ---------------

from batchlint.launching import lines as launching  # noqa: E402
from batchlint.sources.shell import read_shell  # noqa: E402


def lines(text):
    return launching.launches(read_shell("run.sh", text))


def test_ray_job_submit_runs_the_entrypoint_after_the_separator():
    text = ('ray job submit --address="http://127.0.0.1:8265" \\\n   --runtime-env-json=\'{"pip": []}\' \\\n'
            "   -- python3 -m verl.trainer.main_ppo \\\n   trainer.n_gpus_per_node=8 \\\n   trainer.nnodes=2\n")
    [line] = lines(text)
    assert (line.launcher, line.framework, line.entry, line.world_size.value) == ("verl", "verl", "verl.trainer.main_ppo", 16)
    assert [(keys, word.span.line) for keys, word, _ in line.overrides] == [
        (("trainer", "n_gpus_per_node"), 4), (("trainer", "nnodes"), 5)]
    assert line.command.span.line == 1  # the note points at the whole line, wrapper included
    # no `--`: the entrypoint cannot be told from ray's options; other ray commands run no launch
    assert lines("ray job submit --address x python3 -m verl.trainer.main_ppo trainer.nnodes=2\n") == []
    assert lines("ray start --head --port=6379 --block\n") == []


def test_srun_options_then_the_launcher():
    text = 'srun --overlap --nodes=2 -w "$HEAD" -N2 torchrun --nproc_per_node 4 --nnodes 2 train.py --config c.yaml\n'
    [line] = lines(text)
    assert (line.launcher, line.world_size.value, [w.value for w in line.configs]) == ("torchrun", 8, ["c.yaml"])
    assert lines("srun --nodes=1 hostname --ip-address\n") == []
    # options not known (`$SRUN_ARGS`): torchrun still gives W; a command not known is no launch
    [line] = lines("srun $SRUN_ARGS torchrun --nproc_per_node 4 train.py --config c.yaml\n")
    assert (line.launcher, line.world_size.value, [w.value for w in line.configs]) == ("torchrun", 4, ["c.yaml"])
    assert lines("srun $SRUN_ARGS\n") == lines("srun -N 2 $LAUNCHER train.py --config c.yaml\n") == []


@pytest.mark.parametrize("text, world", [
    # Megatron-LM / InternVL shapes: the node count a variable the job gives, one torchrun per node
    ("srun --nodes=$NNODES --ntasks-per-node=1 torchrun --nnodes=$NNODES --nproc_per_node=8 train.py --config c.yaml\n",
     None),
    ("NNODES=2\nsrun --nodes=$NNODES --ntasks-per-node=1 torchrun --nnodes=$NNODES --nproc_per_node=8 train.py "
     "--config c.yaml\n", 16),
    ("srun -N$NODES --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node=8 train.py --config c.yaml\n", 16),
    ("SRUN_ARGS='--kill-on-bad-exit=1'\nsrun $SRUN_ARGS ${EXTRA} torchrun --nnodes 1 --nproc-per-node 4 train.py "
     "--config c.yaml\n", 4),
])
def test_srun_options_in_variables_leave_the_inner_launcher_read(text, world):
    [line] = lines(text)
    assert (line.launcher, line.world_size.value if line.world_size else None) == ("torchrun", world)
    assert [w.value for w in line.configs] == ["c.yaml"]


@pytest.mark.parametrize("options", ["$SRUN_ARGS", "--nodes=$NNODES --ntasks-per-node=8", "-N$N --ntasks-per-node 8",
                                     "-N 2 --ntasks-per-node=8 $EXTRA"])
def test_srun_tasks_with_options_not_known_are_not_counted(options):
    """srun starting the program's processes itself: an option not known may hold any count."""
    [line] = lines(f"srun {options} python train.py --per_device_train_batch_size 4\n")
    assert (line.launcher, line.world_size, line.entry) == ("srun", None, "train.py")
    [line] = lines("srun -N 2 --ntasks-per-node=8 python train.py --per_device_train_batch_size 4\n")
    assert line.world_size.value == 16


def test_srun_bash_c_string_is_read_as_commands():
    text = ('G=4\nsrun -N 1 bash -c \\\n  "cd /w && torchrun --nproc_per_node $G --nnodes 1 train.py --config c.yaml"'
            " &> log\n")
    [line] = lines(text)
    assert (line.launcher, line.world_size.value) == ("torchrun", 4)
    [config] = line.configs
    assert (config.value, config.span.line, config.span.column) == ("c.yaml", 3, 71)
    assert lines('srun -N 1 bash -c "pip install ray && ray start --head --block"\n') == []


def test_env_assignments_reach_the_launcher():
    [line] = lines("env -u CUDA_VISIBLE_DEVICES NPROC_PER_NODE=4 NNODES=2 swift sft --model m --dataset d\n")
    assert (line.launcher, line.world_size.value, line.world_size.detail) == ("swift", 8, "NPROC_PER_NODE 4 x NNODES 2")
    assert lines("env | sort\n") == []


def test_heredoc_built_command_is_a_launch():
    text = ("read -r -d '' cmds <<EOF\nverl.trainer.main_ppo \\\n   trainer.n_gpus_per_node=8\nEOF\n"
            "nohup python3 -m $cmds > log 2>&1 &\n")
    [line] = lines(text)
    assert (line.framework, line.entry, line.world_size.value) == ("verl", "verl.trainer.main_ppo", 8)
    assert line.world_size.span.line == 3  # the count inside the heredoc
    assert lines(text.replace("<<EOF", "<<'EOF'")) == []  # not expanded: not followed


def test_entry_is_the_module_or_script_that_matched():
    # A script of the project's own: read by the Trainer-script entry point (its flags may be TrainingArguments).
    [line] = lines("torchrun --nproc_per_node 8 train.py --config c.yaml\n")
    assert (line.entry, line.framework) == ("train.py", "transformers")
    assert lines("torchrun --nproc_per_node 8 --no_python ./train --config c.yaml\n")[0].entry is None  # no entry point
    assert lines("swift sft --model m\n")[0].entry is None  # a command, not a module or script
    [line] = lines("python -m verl.trainer.main_ppo trainer.nnodes=1\n")
    doc = launching.inline_document(line, "run.sh", "")
    assert (doc.entry, doc.launched_by) == ("verl.trainer.main_ppo", "verl")


def test_srun_launch_reaches_the_config(repo):
    write(repo, "configs/sft.yaml", HF)
    script = ("#!/bin/bash\n# batchlint: global-batch=64\n"
              "srun --nodes=2 --ntasks-per-node=1 torchrun --nproc_per_node 4 --nnodes 2 train.py --config configs/sft.yaml\n")
    assert found(lint_script(repo, script)) == [("configs/sft.yaml", "BL102", 3)]


ACCELERATE_CONFIG = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_machines: 2\nnum_processes: 16\n"
ACCELERATE_LINE = "accelerate launch {flags}--config_file configs/fsdp.yaml train.py --config configs/sft.yaml\n"


def test_accelerate_takes_w_from_its_config_file(repo):
    (repo / ".git").mkdir()
    write(repo, "configs/fsdp.yaml", ACCELERATE_CONFIG)
    write(repo, "configs/sft.yaml", "# batchlint: global-batch=64\n" + HF)
    result = lint_script(repo, ACCELERATE_LINE.format(flags=""))
    [finding] = result.diagnostics  # 2 x 8 x W 16 = 256
    assert finding.code == "BL102" and "the global batch is 256" in finding.message
    assert [(r.path, r.message) for r in finding.related if r.path == "train.sh"] == [
        ("train.sh", "launched here by accelerate launch with W=16")]


def test_accelerate_num_processes_flag_beats_the_config_file(repo):
    (repo / ".git").mkdir()
    write(repo, "configs/fsdp.yaml", ACCELERATE_CONFIG)
    write(repo, "configs/sft.yaml", "# batchlint: global-batch=64\n" + HF)
    assert found(lint_script(repo, ACCELERATE_LINE.format(flags="--num_processes 4 "))) == []  # 2 x 8 x 4


@pytest.mark.parametrize("config", [None, "distributed_type: FSDP\n", "num_processes: auto\n", "num_processes: 0\n"])
def test_accelerate_without_a_count_in_its_config_leaves_w_unknown(repo, config):
    (repo / ".git").mkdir()
    if config is not None:
        write(repo, "configs/fsdp.yaml", config)
    write(repo, "configs/sft.yaml", "# batchlint: global-batch=64\n" + HF)
    assert found(lint_script(repo, ACCELERATE_LINE.format(flags=""))) == []


@pytest.mark.parametrize("options, world", [
    ("--num_gpus 8", 8),
    ("--num_gpus 8 --num_nodes 2 --hostfile hostfile", None),  # the hostfile's first 2 hosts: read by the engine
    ("--num_gpus 8 --hostfile hostfile", None),  # --num_gpus is per node; the nodes are the hostfile's
    ("-H hostfile --num_gpus 8", None),
    ("--include localhost:0,1", 2),  # no hostfile: the local machine's GPUs 0 and 1
    ("--include localhost", None),  # all its GPUs: not known here
    ("--include worker-1:0,1", None),  # a host no hostfile gives: refused
    ("--num_gpus 4 --exclude worker-1", None),
    ("--num_gpus 4 --include localhost:0,1", None),  # refused: counts with a filter
])
def test_deepspeed_with_a_hostfile_never_takes_num_gpus_as_the_total(repo, options, world):
    [line] = lines(f"deepspeed {options} train.py --deepspeed ds.json\n")
    assert (line.world_size.value if line.world_size else None) == world
    assert (line.hosts is not None) == ("hostfile" in options)


@pytest.mark.parametrize("line, world, entry", [
    ("mpirun -np 16 --allow-run-as-root -x NCCL_DEBUG=INFO --bind-to none python train.py --lr 1\n", 16, "train.py"),
    ("mpiexec -n 8 -H a:4,b:4 python3 -m pkg.train --lr 1\n", 8, "pkg.train"),
    ("mpirun --np=4 python train.py\n", 4, "train.py"),
    ("mpirun -H a,b python train.py\n", None, "train.py"),  # no process count: W unknown
])
def test_mpirun_gives_w_and_its_python_program_is_read(line, world, entry):
    [found] = lines(line)
    assert (found.world_size.value if found.world_size else None, found.entry) == (world, entry)


@pytest.mark.parametrize("line, world, entry", [
    # MindSpeed-LLM's examples/mindspore scripts: --worker_num is the total over the nodes.
    ("msrun --worker_num 32 --local_worker_num 8 --node_rank 0 --join False pretrain_gpt.py --lr 1\n",
     32, "pretrain_gpt.py"),
    ("msrun --worker_num=2 --local_worker_num=2 --master_port=8118 --join=True run_llama3.py\n", 2, "run_llama3.py"),
    ("msrun --log_dir=msrun_log train.py\n", 8, "train.py"),  # run.py get_args: --worker_num defaults to 8
])
def test_msrun_gives_w_and_its_program_is_read(line, world, entry):
    [found] = lines(line)
    assert (found.launcher, found.world_size.value, found.entry) == ("msrun", world, entry)
    assert found.world_size_given == ("--worker_num" in line)


def test_a_megatron_line_under_msrun_is_judged_at_its_worker_count(repo):
    text = ("msrun --worker_num 8 --local_worker_num 8 pretrain_gpt.py --tensor-model-parallel-size 2 \\\n"
            "    --micro-batch-size 2 --global-batch-size {gbs} --num-layers 8 --seq-length 1024\n")
    assert [code for _, code, _ in found(lint_script(repo, text.format(gbs=12)))] == ["BL103"]  # 12 % (micro 2 x dp 4)
    assert found(lint_script(repo, text.format(gbs=16))) == []


def test_a_trainer_script_under_mpirun(repo):
    text = "mpirun -np 16 python train.py --per_device_train_batch_size 4 --fp16 true --bf16 true\n"
    assert [code for _, code, _ in found(lint_script(repo, text))] == ["BL501"]


# -- a plugin's Python file is no config ------------------------------------------------------

GRPO = ("NPROC_PER_NODE=8 swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct \\\n"
        "    {plugin} \\\n    --per_device_train_batch_size 4 --gradient_accumulation_steps 2 --num_generations 8\n")


@pytest.mark.parametrize("plugin", [
    "--external_plugins examples/train/grpo/plugin/plugin.py",
    "--external_plugins examples/custom/dataset.py examples/custom/model.py",
    "--reward_funcs_file=rewards/math.py",
])
def test_a_plugin_file_is_code_not_the_config(plugin):
    """The whole line used to be skipped: the plugin was taken as its config file."""
    [line] = lines(GRPO.format(plugin=plugin))
    assert (line.framework, line.configs) == ("swift", [])
    assert {keys for keys, _, _ in line.overrides} >= {("per_device_train_batch_size",), ("num_generations",)}


@pytest.mark.parametrize("text, config", [
    ("torchrun --nproc_per_node 8 tools/train.py configs/llava_7b.py --deepspeed deepspeed_zero2\n",
     "configs/llava_7b.py"),
    ("torchrun --nproc_per_node 8 train.py --config configs/sft.py\n", "configs/sft.py"),
    ("torchrun --nproc_per_node 8 train.py --config=configs/sft.py\n", "configs/sft.py"),
    ("xtuner train configs/qlora.py --deepspeed deepspeed_zero2\n", "configs/qlora.py"),
])
def test_a_python_config_named_by_a_config_flag_or_alone_is_still_the_config(text, config):
    [line] = lines(text)
    assert [word.value for word in line.configs] == [config]


# -- the hosts of a hostfile in the project ---------------------------------------------------

from batchlint import project  # noqa: E402
from batchlint.config import Settings  # noqa: E402
from batchlint.engine import Options, check_file  # noqa: E402

HOSTS = "# the training pool\nworker-1 slots=8\nworker-2 slots=8\n\nworker-3 slots=4\n"


def launched_w(repo, script, name="train.sh"):
    """The W each config of the script's launch lines is planned with (None: unknown)."""
    path = write(repo, name, script)
    settings = Settings(root=str(repo))
    with project.using(project.find_project([path], settings)):
        plans = check_file(path, settings, Options(), rules=()).plans
    return [plan.world_size.value if plan.world_size else None for _, plan in plans]


@pytest.mark.parametrize("options, world", [
    ("--hostfile hostfile", 20),
    ("-H hostfile --num_nodes 2", 16),  # the first two hosts
    ("--hostfile=hostfile --num_nodes 2 --num_gpus 4", 8),  # 4 per host
    ("--hostfile hostfile --num_gpus 2", 6),
    ("--hostfile hostfile --include 'worker-1:0,1,2,3@worker-3:0,1'", 6),
    ("--hostfile hostfile --exclude worker-2", 12),
    ("-H hostfile -e worker-1:0,1@worker-3", 14),
    ("--hostfile hostfile --include worker-1:0,1@worker-3", None),  # a whole host: all or none, by release
    ("--hostfile hostfile --include worker-1:8", None),  # worker-1 has no slot 8: refused
    ("--hostfile hostfile --include worker-9:0", None),  # not in the hostfile: refused
    ("--hostfile hostfile --num_gpus 2 --include worker-1:0", None),  # counts with a filter: refused
    ("--hostfile missing_hostfile --num_gpus 8", None),  # not there: never the --num_gpus total
    ("--hostfile $HOSTFILE --num_gpus 8", None),
])
def test_deepspeed_w_is_the_processes_on_the_hostfile_hosts(repo, options, world):
    (repo / ".git").mkdir()
    write(repo, "hostfile", HOSTS)
    write(repo, "ds.json", DS)
    assert launched_w(repo, f"deepspeed {options} train.py --deepspeed ds.json\n") == [world]


def test_a_finding_at_the_hostfile_w_points_at_the_hosts(repo):
    (repo / ".git").mkdir()
    write(repo, "hostfile", "worker-1 slots=8\nworker-2 slots=8\n")
    write(repo, "ds.json", DS)  # 4 x 4 x W 16 = 256, not 64
    result = lint_script(repo, "deepspeed --hostfile hostfile train.py --deepspeed ds.json\n")
    [finding] = result.diagnostics
    assert (finding.path, finding.code) == ("ds.json", "BL102") and "world size (16)" in " ".join((finding.message,) + finding.notes)
    assert ("train.sh", "launched here by deepspeed with W=16") in [(r.path, r.message) for r in finding.related]


@pytest.mark.parametrize("hostfile", [
    "worker-1 slots=8\nworker-1 slots=8\n",  # a host twice
    "worker-1 8\n",  # no slots=
    "# nobody\n",
])
def test_a_hostfile_the_launcher_refuses_leaves_w_unknown(repo, hostfile):
    (repo / ".git").mkdir()
    write(repo, "hostfile", hostfile)
    write(repo, "ds.json", DS)
    assert launched_w(repo, "deepspeed --hostfile hostfile --num_gpus 8 train.py --deepspeed ds.json\n") == [None]


def test_a_hostfile_outside_the_project_is_not_read(repo):
    write(repo, "hostfile", HOSTS)
    (repo / "proj" / ".git").mkdir(parents=True)
    write(repo, "proj/ds.json", DS)
    script = "deepspeed --hostfile ../hostfile --num_gpus 8 train.py --deepspeed ds.json\n"
    assert launched_w(repo / "proj", script) == [None]


@pytest.mark.parametrize("line, world", [
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 deepspeed train.py --deepspeed ds.json\n", 4),
    ("export CUDA_VISIBLE_DEVICES=4,5\ndeepspeed --master_port 29501 train.py --deepspeed ds.json\n", 2),
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 deepspeed --num_gpus 2 train.py --deepspeed ds.json\n", 2),  # the flag wins
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 deepspeed --num_nodes 2 train.py --deepspeed ds.json\n", None),
    ("CUDA_VISIBLE_DEVICES=$GPUS deepspeed train.py --deepspeed ds.json\n", None),
    # Not torchrun's count: it starts --nproc-per-node processes, 1 unless given (torch/distributed/run.py).
    ("CUDA_VISIBLE_DEVICES=0,1 torchrun train.py --deepspeed ds.json\n", 1),
])
def test_deepspeed_runs_on_the_visible_devices(repo, line, world):
    write(repo, "ds.json", DS)
    assert launched_w(repo, line) == [world]


@pytest.mark.parametrize("line, world", [
    # torch/distributed/run.py: --nproc-per-node defaults to 1, --nnodes to 1 (each also from PET_*).
    ("torchrun train.py --deepspeed ds.json\n", 1),
    ("torchrun --standalone train.py --deepspeed ds.json\n", 1),
    ("python -m torch.distributed.launch train.py --deepspeed ds.json\n", 1),
    ("torchrun --nnodes 2 train.py --deepspeed ds.json\n", 2),
    ("PET_NPROC_PER_NODE=4 torchrun train.py --deepspeed ds.json\n", 4),
    ("export PET_NNODES=2\ntorchrun --nproc_per_node 4 train.py --deepspeed ds.json\n", 8),
    ("torchrun --nproc_per_node=auto train.py --deepspeed ds.json\n", None),  # the GPUs of the machine
    # A variable among torchrun's options may hold any of them: nothing is assumed.
    ("torchrun $DISTRIBUTED_ARGS train.py --deepspeed ds.json\n", None),
    ("torchrun ${ARGS[@]} train.py --deepspeed ds.json\n", None),
    ("torchrun --nproc_per_node 8 $EXTRA train.py --deepspeed ds.json\n", None),
    ("torchrun --nproc_per_node 8 --nnodes 1 $EXTRA train.py --deepspeed ds.json\n", 8),
])
def test_torchrun_starts_one_process_unless_told_otherwise(repo, line, world):
    write(repo, "ds.json", DS)
    assert launched_w(repo, line) == [world]


def test_a_megatron_script_under_bare_torchrun_is_judged_at_w_1_not_at_the_guessed_w(repo):
    """Megatron-DeepSpeed's examples/pretrain_gpt.sh ("runs single GPU"): `-w 8` guessed a W the line sets."""
    (repo / ".git").mkdir()
    script = ('#!/bin/bash\nGPT_ARGS="--num-layers 24 --micro-batch-size 4 --global-batch-size 8 --seq-length 1024"\n'
              'torchrun pretrain_gpt.py $GPT_ARGS --tensor-model-parallel-size 1\n')
    assert launched_w(repo, script, "examples/pretrain_gpt.sh") == [1]
    assert [d.code for d in lint_text(repo, "examples/pretrain_gpt.sh", script, world_size=8).diagnostics] == []
    wide = script.replace("torchrun pretrain", "torchrun --nproc_per_node 8 pretrain")
    assert [d.code for d in lint_text(repo, "examples/pretrain_gpt.sh", wide).diagnostics] == ["BL103"]


# -- Megatron arguments in string variables and arrays, any entry script ----------------------

MEGATRON_STRINGS = """\
#!/bin/bash
GPUS_PER_NODE=8
NNODES=2
DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank 0 --master_port 6000"
GPT_ARGS="
    --tensor-model-parallel-size 2 \\
    --pipeline-model-parallel-size 2 \\
    --micro-batch-size 4 \\
    --global-batch-size {gbs} \\
    --seq-length 1024
"
DATA_ARGS="--data-path my-gpt2_text_document --split 949,50,1"
torchrun $DISTRIBUTED_ARGS {script} $GPT_ARGS $DATA_ARGS
"""


@pytest.mark.parametrize("script", ["pretrain_gpt.py", "examples/run_simple_mcore_train_loop.py", "train_llama.py"])
def test_megatron_arguments_in_a_string_variable_point_at_their_words(repo, script):
    result = lint_script(repo, MEGATRON_STRINGS.format(gbs=100, script=script))
    [finding] = result.diagnostics  # dp = 16 / (2 x 2) = 4; 100 is no multiple of 4 x 4
    assert (finding.code, finding.span.line, finding.span.column) == ("BL103", 9, 25)
    assert [(r.span.line, r.span.column) for r in finding.related] == [(8, 24)]  # --micro-batch-size's 4
    assert found(lint_script(repo, MEGATRON_STRINGS.format(gbs=96, script=script), "ok.sh")) == []


def test_megatron_arguments_in_arrays_under_any_script(repo):
    script = ("DISTRIBUTED_ARGS=(--nproc_per_node 8 --nnodes 2)\n"
              "GPT_ARGS=(\n    --tensor-model-parallel-size 2\n    --micro-batch-size 4\n    --global-batch-size 100\n)\n"
              'torchrun "${DISTRIBUTED_ARGS[@]}" examples/run_simple_mcore_train_loop.py "${GPT_ARGS[@]}"\n')
    [finding] = lint_script(repo, script).diagnostics  # dp 8: 100 is no multiple of 32
    assert (finding.code, finding.span.line, finding.span.column) == ("BL103", 5, 25)


@pytest.mark.parametrize("text, framework", [
    ("torchrun --nproc_per_node 8 train.py --micro-batch-size 4 --global-batch-size 64\n", "megatron"),
    ("torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4\n", "transformers"),
    ("torchrun --nproc_per_node 8 train.py --micro_batch_size 4\n", "transformers"),  # underscores: not Megatron's
])
def test_an_entry_script_is_megatron_s_only_for_its_batch_flags(text, framework):
    [line] = lines(text)
    assert line.framework == framework


def test_a_split_variable_that_expands_others_places_each_word():
    """A word written in the string points at itself; one a variable gave, at that variable's value."""
    [command] = read_shell("run.sh", 'N=8\nARGS="--nproc_per_node $N --nnodes 1"\ntorchrun $ARGS t.py\n').commands
    assert [(w.value, w.span.line, w.span.column) for w in command.words[1:5]] == [
        ("--nproc_per_node", 2, 7), ("8", 1, 3), ("--nnodes", 2, 27), ("1", 2, 36)]


def test_a_string_of_megatron_arguments_over_lines_with_variables_points_at_each_value(repo):
    text = ('MBZ=1\nOPTIONS=" \\\n    --tensor-model-parallel-size 4 \\\n    --micro-batch-size ${MBZ} \\\n'
            '    --global-batch-size 101 \\\n"\ntorchrun --nproc_per_node 8 examples/train.py ${OPTIONS}\n')
    assert [(d.code, d.span.line, d.span.column) for d in lint_script(repo, text).diagnostics] == [("BL103", 5, 25)]


def test_a_word_a_variable_gives_inside_another_word_points_at_the_variable():
    [command] = read_shell("run.sh", 'N=8\nARGS="--nproc_per_node=$N --nnodes 1"\ntorchrun $ARGS t.py\n').commands
    assert [(w.value, w.span.line, w.span.column) for w in command.words[1:2]] == [("--nproc_per_node=8", 1, 3)]


# -- one script running another with its environment and arguments ---------------------------

RUN_TRAIN = """\
#!/usr/bin/bash
set -ex
NGPU=${NGPU:-"8"}
export LOG_RANK=${LOG_RANK:-0}
CONFIG_FILE=${CONFIG_FILE:-"./train_configs/debug_model.toml"}
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \\
--local-ranks-filter ${LOG_RANK} --role rank --tee 3 \\
-m torchtitan.train --job.config_file ${CONFIG_FILE} "$@"
"""


def test_a_caller_gives_the_callee_its_environment_and_arguments(repo):
    (repo / ".git").mkdir()
    write(repo, "run_train.sh", RUN_TRAIN)
    write(repo, "train_configs/llama4.toml", TITAN)
    caller = "#!/bin/bash\nNGPU=16 CONFIG_FILE=./train_configs/llama4.toml ./run_train.sh --training.seq_len 8190\n"
    result = lint_script(repo, caller, name="scripts/llama4.sh")
    # W 16 < tp 8 x pp 4; 1 microbatch for 4 stages; 8190 (the caller's argument) not a multiple of 16
    assert found(result) == [("scripts/llama4.sh", "BL401", 2), ("train_configs/llama4.toml", "BL111", 5),
                             ("train_configs/llama4.toml", "BL202", 10)]
    layout = next(d for d in result.diagnostics if d.code == "BL202")
    assert "W (16)" in layout.message
    assert [(r.path, r.span.line, r.span.column, r.message) for r in layout.related][-3:] == [
        ("scripts/llama4.sh", 2, 6, "world size 16 set here"),
        ("run_train.sh", 6, 1, "launched here by torchrun with W=16"),
        ("scripts/llama4.sh", 2, 1, "runs run_train.sh")]
    # the callee alone: its defaults (W 8, a config that is not there)
    assert found(lint_script(repo, RUN_TRAIN, name="run_train.sh")) == []


def test_positional_arguments_reach_the_callee(repo):
    (repo / ".git").mkdir()
    write(repo, "configs/sft.yaml", "# batchlint: global-batch=64\n" + HF)
    write(repo, "scripts/train.sh", 'GPUS=${1:-8}\nCONFIG=$2\ntorchrun --nproc_per_node $GPUS train.py --config "$CONFIG"\n')
    result = lint_script(repo, "bash scripts/train.sh 4 configs/sft.yaml\n", name="go.sh")
    assert found(result) == []  # 2 x 8 x W 4 = 64
    result = lint_script(repo, "bash -x scripts/train.sh 8 configs/sft.yaml\n", name="go.sh")
    [finding] = result.diagnostics  # W 8: 128
    assert finding.code == "BL102" and "the global batch is 128" in finding.message
    assert ("go.sh", 1) in [(r.path, r.span.line) for r in finding.related]


def test_script_calls_stop_at_cycles_depth_and_the_project(repo):
    (repo / ".git").mkdir()
    write(repo, "ds.json", DS)
    write(repo, "a.sh", "bash b.sh\n")
    write(repo, "b.sh", "bash a.sh\ndeepspeed --num_gpus 8 train.py --deepspeed ds.json\n")
    assert found(lint_script(repo, "bash a.sh\n", name="go.sh")) == [("ds.json", "BL102", 2)]  # once, no loop
    chain = {f"s{i}.sh": f"bash s{i + 1}.sh\n" for i in range(6)}
    chain["s6.sh"] = "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n"
    for name, text in chain.items():
        write(repo, name, text)
    assert launched_w(repo, "bash s3.sh\n", name="near.sh") == [8]  # 4 calls deep
    assert launched_w(repo, "bash s0.sh\n", name="far.sh") == []  # past the bound
    write(repo, "../outside.sh", "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n")
    assert launched_w(repo, "bash ../outside.sh\n", name="out.sh") == []


# -- the interpreter's own options come before the program ------------------------------------

@pytest.mark.parametrize("line, world, entry", [
    ("python -u -m torch.distributed.run --nproc_per_node 8 train.py --per_device_train_batch_size 4\n", 8,
     "train.py"),
    ("python3 -u train.py --per_device_train_batch_size 4\n", None, "train.py"),
    ("python -X faulthandler -W ignore -m verl.trainer.main_ppo trainer.n_gpus_per_node=4\n", 4,
     "verl.trainer.main_ppo"),
    ("mpirun -np 16 python -u train.py --lr 1\n", 16, "train.py"),
])
def test_python_options_before_the_program_are_the_interpreters(line, world, entry):
    """`python -u train.py` (unbuffered output, common in real scripts) used to hide the whole line."""
    [found] = lines(line)
    assert (found.world_size.value if found.world_size else None, found.entry) == (world, entry)


@pytest.mark.parametrize("line, module, entry", [
    ("python -uW ignore train.py --per_device_train_batch_size 4\n", False, "train.py"),  # -W's value: the next word
    ("python -Wignore::UserWarning -X faulthandler train.py --lr 1\n", False, "train.py"),  # -W's value attached
    ("python -uBX dev train.py --lr 1\n", False, "train.py"),
    ("python3.10 -OO -s -I -E -mtorch.distributed.run --nproc_per_node 8 train.py --lr 1\n", True, "train.py"),
    ("python --check-hash-based-pycs never train.py --lr 1\n", False, "train.py"),
    ("python -u -- train.py --lr 1\n", False, "train.py"),  # `--` ends the interpreter's options
])
def test_cpython_options_take_their_values_as_cpython_does(line, module, entry):
    [found] = lines(line)
    assert found.entry == entry
    assert launching._interpreted(found.command.words, 1)[0] is module


@pytest.mark.parametrize("line", [
    "python -c 'import train' --per_device_train_batch_size 4\n",
    "python -uc 'import train' train.py --per_device_train_batch_size 4\n",  # -c in a group: the code follows
    "python -u -c 'import train' train.py --per_device_train_batch_size 4\n",
    "python - train.py --per_device_train_batch_size 4\n",  # the program is read from stdin
    "python -V train.py --per_device_train_batch_size 4\n",  # prints its version and exits
    "python --help train.py --per_device_train_batch_size 4\n",
    "python -J train.py --per_device_train_batch_size 4\n",  # CPython refuses the option
    "python --unbuffered train.py --per_device_train_batch_size 4\n",  # no such long option
    "python $PYFLAGS train.py --per_device_train_batch_size 4\n",  # options not known: nor is the program
    "python -W\n",
])
def test_python_running_no_program_file_is_no_launch(line):
    assert lines(line) == []


def test_python_c_under_a_launcher_reads_no_program():
    [found] = lines("mpirun -np 4 python -c 'import train' train.py --per_device_train_batch_size 4\n")
    assert (found.world_size.value, found.entry, found.overrides) == (4, None, [])
    [found] = lines("mpirun -np 4 python -u -W ignore train.py --per_device_train_batch_size 4\n")
    assert (found.world_size.value, found.entry) == (4, "train.py")


def test_a_program_not_known_under_a_launcher_keeps_the_launchers_count():
    [found] = lines("mpirun -np 16 python -u ${DIR}/train.py --per_device_train_batch_size 4\n")
    assert (found.world_size.value, found.entry) == (16, None)
    # Its file is not in view, but its name is written: its flags are read by the entry point of that name.
    [found] = lines("python -u ${DIR}/train.py --per_device_train_batch_size 4\n")
    assert (found.framework, found.entry, [keys for keys, _, _ in found.overrides]) == \
        ("transformers", None, [("per_device_train_batch_size",)])
    assert lines("python -u ${SCRIPT} --per_device_train_batch_size 4\n") == []


def test_an_attached_module_points_at_its_name():
    [found] = lines("python -u -mtorch.distributed.run --nproc_per_node 8 train.py --lr 1\n")
    name = launching._interpreted(found.command.words, 1)[1]
    assert (name.value, name.span.column, name.span.end_column) == ("torch.distributed.run", 13, 34)


def test_a_trainer_script_run_unbuffered_is_checked(repo):
    line = "python -u -m torch.distributed.run --nproc_per_node 8 train.py --per_device_train_batch_size 4 {}\n"
    assert [code for _, code, _ in found(lint_script(repo, line.format("--fp16 true --bf16 true")))] == ["BL501"]
    assert [code for _, code, _ in found(lint_script(repo, line.format("--bf16 true")))] == []


# -- a command kept in a string ----------------------------------------------------------------

CMD_IN_STRING = ('PARAMS="--tensor-model-parallel-size 4 --micro-batch-size 1 --global-batch-size {gb}"\n'
                 'CMD="torchrun --nproc_per_node 8 pretrain_gpt.py ${{PARAMS}}"\n{run}\n')


@pytest.mark.parametrize("run", ['$CMD', 'eval $CMD', 'eval "$CMD"', 'bash -c "$CMD"', 'srun -l sh -c "${CMD}"'])
def test_a_command_kept_in_a_string_is_read_where_its_values_are_written(repo, run):
    flagged = lint_script(repo, CMD_IN_STRING.format(gb=101, run=run))
    assert [(d.code, d.span.line, d.span.column) for d in flagged.diagnostics] == [("BL103", 1, 81)]
    assert lint_script(repo, CMD_IN_STRING.format(gb=100, run=run)).diagnostics == []


def overrides(line):
    return {".".join(keys): value.value for keys, value, _ in line.overrides}


QUOTED_IN_STRING = ("cmd=\"torchrun --nproc_per_node 8 train.py --run_name 'my run' "
                    "--per_device_train_batch_size '4'\"\n{run}\n")


@pytest.mark.parametrize("run", ["eval $cmd", 'eval "$cmd"', 'eval "${cmd} 2>&1 | tee log"', 'bash -c "$cmd"',
                                 'sh -c "cd /w; ${cmd}"', "if true; then eval $cmd; fi", "time eval $cmd"])
def test_a_shell_parsing_the_string_again_honours_its_quotes(run):
    [line] = lines(QUOTED_IN_STRING.format(run=run))
    assert line.world_size.value == 8
    assert overrides(line) == {"run_name": "my run", "per_device_train_batch_size": "4"}
    batch = line.overrides[-1][1]
    assert (batch.span.line, batch.span.column) == (1, 93)  # where '4' is written in the assignment


@pytest.mark.parametrize("run", ["$cmd", "${cmd}", "nohup $cmd > log 2>&1 &"])
def test_running_the_string_alone_only_splits_it_at_blanks(run):
    """Bash does not parse an expansion again: its quotes reach the program as they are."""
    [line] = lines(QUOTED_IN_STRING.format(run=run))
    assert overrides(line) == {"run_name": "'my", "per_device_train_batch_size": "'4'"}


@pytest.mark.parametrize("run", ["echo $cmd", 'echo "$cmd"', '"$cmd"', 'printf "%s" "$cmd"', 'bash -c "echo $cmd"'])
def test_a_string_only_printed_or_run_as_one_word_is_no_launch(run):
    assert lines(QUOTED_IN_STRING.format(run=run)) == []


def test_run_cmd_with_a_folder_not_known_then_the_command():
    """Megatron-LM's multimodal shape: `run_cmd="cd ${SOURCE}; python -u ..."` run by `sh -c`."""
    text = ('OPTIONS="--micro-batch-size 2 --global-batch-size 128"\n'
            'run_cmd="cd ${SOURCE}; python -u pretrain_gpt.py ${OPTIONS}"\n'
            'srun -l --container-image img sh -c "${run_cmd}"\n')
    [line] = lines(text)
    assert (line.entry, overrides(line)) == ("pretrain_gpt.py", {"micro-batch-size": "2", "global-batch-size": "128"})
    assert line.overrides[0][1].span.line == 1
    # run alone, `;` is no separator: the command is `cd`
    assert lines(text.replace('sh -c "${run_cmd}"', "${run_cmd}")) == []


def test_a_newline_in_the_string_ends_the_command_only_when_parsed_again():
    text = 'cmd="torchrun --nproc_per_node 8 train.py\n  --per_device_train_batch_size 4"\n{run}\n'
    [line] = lines(text.format(run='eval "$cmd"'))
    assert overrides(line) == {}  # the second line is a command of its own
    [line] = lines(text.format(run="eval $cmd"))  # split at blanks first, newline included
    assert overrides(line) == {"per_device_train_batch_size": "4"}
    assert line.overrides[0][1].span.line == 2


def test_a_variable_kept_for_eval_expands_when_eval_runs():
    text = "cmd='torchrun --nproc_per_node $N train.py --lr 1'\nN=4\n{run}\n"
    [line] = lines(text.format(run="eval $cmd"))
    assert (line.world_size.value, line.world_size.span.line) == (4, 2)
    [line] = lines(text.format(run="$cmd"))  # `$N` reaches torchrun as it is: no count
    assert line.world_size is None or not isinstance(line.world_size.value, int)


def test_an_option_whose_value_is_not_known_stays_an_option_through_eval():
    text = ('cmd="python -m torch.distributed.launch --nproc_per_node=8 --master_port=${PORT} '
            'train.py --per_device_train_batch_size 4"\neval ${cmd}\n')
    [line] = lines(text)
    assert (line.entry, line.world_size.value, overrides(line)) == ("train.py", 8, {"per_device_train_batch_size": "4"})
    hydra = 'cmd="python3 -m verl.trainer.main_ppo trainer.nnodes=$NNODES trainer.n_gpus_per_node=8"\neval $cmd\n'
    [line] = lines(hydra)
    assert line.world_size is None or not isinstance(line.world_size.value, int)  # nodes not known: W neither


def test_eval_keeps_its_assignments_and_a_child_shell_does_not():
    line = "torchrun --nproc_per_node $N train.py --lr 1\n"
    [found] = lines('eval "N=4"\n' + line)
    assert found.world_size.value == 4
    [found] = lines('bash -c "N=4"\n' + line)
    assert found.world_size is None or not isinstance(found.world_size.value, int)


@pytest.mark.parametrize("mode, batch", [("sft", "1"), ("rl", "4")])
def test_if_in_a_string_parsed_again_is_decided_and_its_values_point_into_the_string(mode, batch):
    text = (f"MODE={mode}\n"
            'cmd="if [ $MODE = sft ]; then MBS=1; else MBS=4; fi; '
            'torchrun --nproc_per_node 8 train.py --per_device_train_batch_size \\$MBS"\neval "$cmd"\n')
    [line] = lines(text)
    found = line.overrides[-1][1]
    assert found.value == batch
    assert (found.span.line, found.span.path) == (2, None)  # in the assignment, not the eval line
    assert text.splitlines()[1][found.span.column - 1:found.span.end_column - 1].startswith(f"MBS={batch}")


@pytest.mark.parametrize("run, world", [
    ("eval 'case x in x) N=2;; *) N=9;; esac; torchrun --nproc_per_node $N train.py --lr 1'", 2),
    ("eval 'case y in x) N=2;; *) N=9;; esac; torchrun --nproc_per_node $N train.py --lr 1'", 9),
    ("sh -c 'case x in x) N=2;; *) N=9;; esac; torchrun --nproc_per_node $N train.py --lr 1'", 2),
])
def test_case_in_a_string_parsed_again_is_decided(run, world):
    [line] = lines(run + "\n")
    assert line.world_size.value == world


def test_eval_moves_and_ends_the_script_and_a_child_shell_does_not():
    line = "torchrun --nproc_per_node 8 train.py --lr 1\n"
    [found] = lines('eval "cd sub"\n' + line)
    assert found.command.directory == "sub"
    [found] = lines('sh -c "cd sub"\n' + line)
    assert found.command.directory is None
    assert lines('eval "exit 0"\n' + line) == []  # eval runs in this shell: its exit is the script's
    assert len(lines('sh -c "exit 0"\n' + line)) == 1


def test_eval_in_a_branch_not_decided_leaves_its_assignment_not_known():
    line = "torchrun --nproc_per_node $N train.py --lr 1\n"
    [found] = lines('if [ -n "$(hostname)" ]; then eval "N=2"; else N=3; fi\n' + line)
    assert found.world_size is None or not isinstance(found.world_size.value, int)
    [found] = lines('if [ -n "$(hostname)" ]; then eval "N=2"; else N=2; fi\n' + line)
    assert found.world_size.value == 2


def test_escaped_quotes_in_a_child_shells_string_keep_the_places_of_its_words():
    """OpenRLHF's ray slurm shape: `bash -c "... --runtime-env-json='{\\"working_dir\\": ...}' -- python3 -m ..."`."""
    text = ('srun -N 1 bash -c \\\n"pip install ray \\\n&& ray job submit --address=http://localhost:8265 \\\n'
            '    --runtime-env-json=\'{\\"working_dir\\": \\"/w\\"}\' \\\n'
            '    -- python3 -m pkg.train \\\n    --per_device_train_batch_size 8"\n')
    [line] = lines(text)
    batch = line.overrides[-1][1]
    assert (batch.value, batch.span.line, batch.span.column) == ("8", 6, 35)


def test_a_child_shell_expands_what_is_left_with_the_exported_variables_only():
    """`bash -c '... $N'`: the child shell expands $N, from its environment."""
    text = "N=4\n{export}bash -c 'torchrun --nproc_per_node $N train.py --lr 1'\n"
    [line] = lines(text.format(export="export N\n"))
    assert (line.world_size.value, line.world_size.span.line) == (4, 1)
    [line] = lines(text.format(export=""))  # not exported: the child shell's N is empty
    assert line.world_size is None or not isinstance(line.world_size.value, int)
    [line] = lines('N=4\nbash -c "torchrun --nproc_per_node $N train.py --lr 1"\n')  # expanded before
    assert line.world_size.value == 4


def test_a_command_array_is_a_launch():
    text = "CMD=(torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4)\n{run}\n"
    [line] = lines(text.format(run='"${CMD[@]}"'))
    assert (line.world_size.value, overrides(line)) == (8, {"per_device_train_batch_size": "4"})
    assert lines(text.format(run='echo "${CMD[@]}"')) == []


@pytest.mark.parametrize("text", [
    "cmd='eval $cmd'\neval $cmd\n",  # runs itself: parsed again a bounded number of times
    "cmd=\"torchrun --nproc_per_node 8 train.py --run_name 'open\"\neval $cmd\n",  # a quote never closed
    "eval\neval ''\neval $nothing\n",
])
def test_strings_parsed_again_end(text):
    assert lines(text) == []


def test_a_sourced_file_gives_the_launch_its_counts_and_command(repo):
    """OpenRLHF's train_nonrl_slurm.sh shape: the command is read from a heredoc in the file it sources."""
    write(repo, "scripts/train_dpo.sh", "read -r -d '' training_commands <<EOF\nopenrlhf.cli.train_dpo \\\n"
          "   --train.batch_size 100 \\\n   --train.micro_batch_size 1\nEOF\n"
          "if [[ ${1} != \"slurm\" ]]; then\n    deepspeed --module $training_commands\nfi\n")
    write(repo, "scripts/common.sh", "export GPUS_PER_NODE=8\n")
    script = ("#!/bin/bash\n#SBATCH -N 1\nsource ./common.sh\nsource ./train_dpo.sh slurm\n"
              'srun bash -c "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $SLURM_NNODES -m ${training_commands}"\n')
    result = lint_script(repo, script, name="scripts/job.slurm")
    # 100 is no multiple of micro 1 x W 8: reported where it is written, in the sourced file
    [finding] = [d for d in result.diagnostics if d.code.startswith("BL1")]
    assert (finding.path, finding.span.line) == ("scripts/train_dpo.sh", 3)
    assert "8" in finding.message
    # the same with nothing sourced: no command, no finding
    assert [d for d in lint_script(repo, script.replace("source", "# source"), name="scripts/job2.slurm").diagnostics
            if d.code.startswith("BL1")] == []


# -- an override whose value is not known sets its key to a value not known ----------------------

VERL_UNKNOWN = """\
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=128 \\
    actor_rollout_ref.actor.ppo_mini_batch_size={mini} \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes={nodes}
"""


def test_an_override_from_a_variable_not_known_is_never_the_default(repo):
    """`ppo_mini_batch_size=$MINI` used to be dropped, so verl's default (256) was judged against the
    train batch of 128, and `trainer.nnodes=$NNODES` gave W = 8 from the default of one node."""
    unknown = lint_script(repo, VERL_UNKNOWN.format(mini="$MINI", nodes="$NNODES"))
    assert unknown.diagnostics == []
    assert [d.code for d in lint_script(repo, VERL_UNKNOWN.format(mini=256, nodes=1)).diagnostics] == ["BL141"]


@pytest.mark.parametrize("bs, micro", [("$BS", "?"), ("4", 4)])
def test_a_flag_from_a_variable_not_known_is_never_the_default(repo, bs, micro):
    line = f"torchrun --nproc_per_node 8 train.py --per_device_train_batch_size={bs} --gradient_accumulation_steps 2\n"
    explained = run("explain", "--format", "json", write(repo, "train.sh", line))
    [plan] = json.loads(explained.output)
    rows = {row["name"]: row["values"] for row in plan["rows"]}
    assert rows["micro batch (per GPU)"] == [micro]  # not TrainingArguments' default of 8


# -- a program no framework owns: its flags are its own ------------------------------------------

BERT_SQUAD = """\
NUM_NODES=4
NGPU_PER_NODE=8
deepspeed --num_nodes ${NUM_NODES} --num_gpus ${NGPU_PER_NODE} nvidia_run_squad_deepspeed.py \\
--bert_model bert-large-uncased \\
--train_batch_size 3 \\
--deepspeed \\
--deepspeed_config ds_config.json
"""


@pytest.mark.parametrize("batch, codes", [(96, []), (100, ["BL103"])])
def test_a_programs_own_flags_are_never_written_into_the_json_it_names(repo, batch, codes):
    """The script's argparse takes --train_batch_size 3 (per GPU); DeepSpeed reads only the JSON, judged
    as written at the launch's W = 32 (it was judged as train_batch_size 3: a false BL103)."""
    write(repo, "ds_config.json", f'{{"train_batch_size": {batch}, "train_micro_batch_size_per_gpu": 3}}\n')
    result = lint_script(repo, BERT_SQUAD)
    assert [(d.code, d.path) for d in result.diagnostics] == [(code, "ds_config.json") for code in codes]


# -- job submitters and runners in front of the launcher ------------------------------------------

MASON = """\
uv run python mason.py \\
    --cluster ai2/jupiter \\
    --num_nodes 2 \\
    --env "CACHE=/tmp/cache_\\$(date +%s)" \\
    --gpus 8 -- {remote}torchrun \\
    --nnodes=2 \\
    --node_rank=\\$BEAKER_REPLICA_RANK \\
    --nproc_per_node=8 \\
    open_instruct/dpo.py \\
    --per_device_train_batch_size 1 \\
    --gradient_accumulation_steps 4 \\
    --max_seq_length 8192
"""


@pytest.mark.parametrize("remote", ["", "source configs/setup.sh \\&\\& ", "cd /work \\; "])
def test_a_job_submitter_runs_the_command_after_its_double_dash(repo, remote):
    """open-instruct's `python mason.py ... --gpus 8 -- torchrun ...` (the remote line may first source a
    setup script, joined by a quoted `&&`): the launch after `--` is what runs, on its own W."""
    explained = run("explain", "--format", "json", write(repo, "train.sh", MASON.format(remote=remote)))
    [plan] = json.loads(explained.output)
    rows = {row["name"]: row["values"][0] for row in plan["rows"]}
    assert (rows["micro batch (per GPU)"], rows["gradient accumulation"], rows["world size W"]) == (1, 4, 16)


def test_a_python_program_without_a_double_dash_is_still_the_program(repo):
    line = "python train.py --per_device_train_batch_size 2 --gradient_accumulation_steps 3 --output_dir --\n"
    [plan] = json.loads(run("explain", "--format", "json", write(repo, "train.sh", line)).output)
    assert {row["name"]: row["values"][0] for row in plan["rows"]}["micro batch (per GPU)"] == 2


@pytest.mark.parametrize("prefix, expected", [
    ("uv run ", 8), ("uv run --frozen --with deepspeed ", 8), ("uv run --no-sync -p 3.11 ", 8), ("poetry run ", 8),
    ("uv run --with ", None),  # `--with torchrun`: torchrun is the option's value, the command is not known
])
def test_uv_run_and_poetry_run_are_looked_through(repo, prefix, expected):
    line = f"{prefix}torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 2\n"
    explained = json.loads(run("explain", "--format", "json", write(repo, "train.sh", line)).output)
    w = [row["values"][0] for plan in explained for row in plan["rows"] if row["name"] == "world size W"]
    assert w == ([expected] if expected else [])


OWN_DPO = "from dataclasses import dataclass\n\n@dataclass\nclass Args:\n    max_seq_length: int = 2048\n    packing: bool = False\n"


@pytest.mark.parametrize("imports, codes", [("", []), ("from trl import DPOConfig\n", ["BL420"])])
def test_flags_of_a_program_that_never_imports_trl_are_not_trls(repo, imports, codes):
    """open-instruct's own dpo.py has `max_seq_length` and `packing`: its flags are not TRL's SFTConfig,
    so TRL's removal of max_seq_length (BL420) cannot apply; a program importing trl keeps the check."""
    (repo / ".git").mkdir()  # the project: the repository, not the script's folder
    write(repo, "open_instruct/__init__.py", "")
    write(repo, "open_instruct/utils.py", imports + "\n\ndef train(trainer):\n    trainer.train()\n")
    write(repo, "open_instruct/dpo.py", "from open_instruct.utils import *\n" + OWN_DPO)
    line = ("accelerate launch --num_processes 8 open_instruct/dpo.py --per_device_train_batch_size 1 "
            "--gradient_accumulation_steps 4 --max_seq_length 16384 --packing\n")
    result = lint_script(repo, line, name="scripts/train/dpo.sh")
    assert [d.code for d in result.diagnostics] == codes


def test_a_sibling_script_that_imports_trl_is_not_the_program(repo):
    """MedicalGPT's training/ (no package): pretraining.py parses its own `max_seq_length`, `packing` and
    trains with the Trainer; dpo_training.py beside it imports trl but is another job's program."""
    (repo / ".git").mkdir()
    write(repo, "requirements.txt", "trl>=0.29.0\n")
    write(repo, "training/template.py", "TEMPLATES = {}\n")
    write(repo, "training/dpo_training.py", "from trl import DPOConfig, DPOTrainer\n")
    program = ("from transformers import HfArgumentParser, Seq2SeqTrainingArguments, Trainer\n"
               "from template import TEMPLATES\n" + OWN_DPO + "\nTrainer(args=args).train()\n")
    write(repo, "training/pretraining.py", program)
    line = ("torchrun --nproc_per_node 2 training/pretraining.py --per_device_train_batch_size 4 "
            "--gradient_accumulation_steps 8 --max_seq_length 512 --packing True --output_dir out\n")
    result = lint_script(repo, line, name="scripts/run_pt.sh")
    assert (result.framework, [d.code for d in result.diagnostics]) == ("launch", [])
    write(repo, "training/template.py", "from dpo_training import DPOTrainer\n")  # now the program runs it
    per_run.forget()  # a new run reads the program again
    assert [d.code for d in lint_script(repo, line, name="scripts/run_pt.sh").diagnostics] == ["BL420"]


LLAMAFACTORY_DS = """\
deepspeed --num_gpus 8 src/train_bash.py \\
    --deepspeed ds_config.json \\
    --stage sft \\
    --per_device_train_batch_size 4 \\
    --gradient_accumulation_steps 8 \\
    --fp16
"""


@pytest.mark.parametrize("written, expected", [('"8"', [("ds_config.json", "BL120", 3)]), ("8", []), ('"auto"', [])])
def test_a_number_written_as_a_string_in_the_deepspeed_json_is_a_mismatch(repo, written, expected):
    """LLaMA-Factory#1116's shape: "gradient_accumulation_steps": "8" is never 8 to the Trainer's fill_match;
    the finding sits on the quoted value in the JSON, with the flag it should equal as a note."""
    write(repo, "ds_config.json", '{\n  "train_micro_batch_size_per_gpu": "auto",\n'
          f'  "gradient_accumulation_steps": {written},\n  "zero_optimization": {{"stage": 2}}\n}}\n')
    result = lint_script(repo, LLAMAFACTORY_DS)
    assert found(result) == expected
    if expected:
        [finding] = result.diagnostics
        assert "is a string" in finding.message and "write it as a number: 8" in finding.fix
        assert [(r.path, r.span.line) for r in finding.related] == [("train.sh", 5), ("train.sh", 2)]


@pytest.mark.parametrize("dataset", ["demo.json", "data/train.jsonl", "AI-ModelScope/alpaca-gpt4-data-en"])
def test_an_ms_swift_data_file_is_not_its_config(repo, dataset):
    """`swift rlhf --dataset demo.json`: only the first argument or --config names a config, so the flags stay
    the config (ms-swift#4589: 1 x W 2 x GA 2 = 4 completions cannot hold a group of 8)."""
    write(repo, "demo.json", "[]\n")
    line = (f"NPROC_PER_NODE=2 swift rlhf --rlhf_type grpo --dataset {dataset} --per_device_train_batch_size 1 "
            "--gradient_accumulation_steps 2 --num_generations 8\n")
    assert found(lint_script(repo, line)) == [("train.sh", "BL170", 1)]


# -- cd: the folder a launch line's relative paths are seen from ------------------------------

FITS_8 = '{\n  "train_batch_size": 256,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8\n}\n'


@pytest.mark.parametrize("move", ["cd ../..", 'cd "$(dirname "$0")/../.."', "pushd ../.. > /dev/null",
                                  'ROOT=$(cd "$(dirname "$0")" && pwd)\ncd $ROOT/../..'])
def test_a_config_is_found_from_the_folder_the_script_moved_to(repo, move):
    """`cd ../..` then `--deepspeed configs/ds.json`: the repository's configs/ds.json (64 = 4 x 4 x W
    fails at W=8), not the one beside the script (which fits)."""
    (repo / ".git").mkdir()  # the repository: the project the script reads within
    write(repo, "configs/ds.json", DS)
    write(repo, "examples/sft/configs/ds.json", FITS_8)
    script = f"{move}\ndeepspeed --num_gpus 8 train.py --deepspeed configs/ds.json\n"
    assert found(lint_script(repo, script, "examples/sft/run.sh")) == [("configs/ds.json", "BL102", 2)]
    # without the cd: the file beside the script, which fits
    assert found(lint_script(repo, script.replace(move + "\n", ""), "examples/sft/b.sh")) == []


@pytest.mark.parametrize("move", ["cd $WORKDIR", "cd ~/repo", "if [ -d x ]; then cd x; fi", "cd /opt/elsewhere"])
def test_after_a_cd_to_a_folder_not_known_relative_paths_are_not_read(repo, move):
    write(repo, "ds.json", DS)
    script = f"{move}\ndeepspeed --num_gpus 8 train.py --deepspeed ds.json\n"
    assert found(lint_script(repo, script)) == []
    # an absolute path is read wherever the script moved
    absolute = script.replace("--deepspeed ds.json", f"--deepspeed {repo}/ds.json")
    assert found(lint_script(repo, absolute, "b.sh")) == [("ds.json", "BL102", 2)]
    # a cd the script leaves (a subshell) does not move the launch line
    assert found(lint_script(repo, f"({move} && make)\n" + script.split("\n", 1)[1], "c.sh")) == [
        ("ds.json", "BL102", 2)]


def test_a_decided_branch_picks_the_launch_line_and_its_settings(repo):
    write(repo, "ds.json", DS)
    script = ("MODE=single\nif [ \"$MODE\" = single ]; then\n  GPUS=4\nelse\n  GPUS=8\nfi\n"
              "deepspeed --num_gpus $GPUS train.py --deepspeed ds.json\n")
    assert found(lint_script(repo, script)) == []  # 64 = 4 x 4 x 4
    assert found(lint_script(repo, script.replace("MODE=single", "MODE=multi"), "b.sh")) == [("ds.json", "BL102", 2)]
    assert found(lint_script(repo, script.replace("MODE=single", "MODE=$1"), "c.sh")) == []  # W not known


# -- a program's own config files are not its TrainingArguments config -------------------------

@pytest.mark.parametrize("flag", ["--origin_bert_config_file", "--model_config", "--config_name", "--kd_config"])
def test_a_programs_own_config_file_is_not_written_into(repo, flag):
    """`deepspeed run_squad.py --origin_bert_config_file bert.json --train_batch_size 3 ...`: the JSON is the
    model's; the program's flags are never written into it (a false BL103 on DeepSpeedExamples' BingBertSquad)."""
    write(repo, "ds.json", '{\n  "train_batch_size": 96,\n  "train_micro_batch_size_per_gpu": 3\n}\n')
    for model in ("bert.json", "ckpt/missing.json"):  # beside the script, or not in the project
        if model == "bert.json":
            write(repo, model, '{\n  "hidden_size": 768,\n  "num_attention_heads": 12\n}\n')
        line = (f"mpirun -n 32 python run_squad.py {flag} {model} --train_batch_size 3 "
                "--gradient_accumulation_steps 1 --deepspeed --deepspeed_config ds.json\n")
        assert found(lint_script(repo, line)) == []


def test_a_trainingarguments_config_named_by_config_is_still_read(repo):
    """The twin: `--config recipe.yaml` (TrlParser) is the program's config, checked under the launch's W."""
    write(repo, "recipe.yaml", "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n"
                               "num_generations: 7\nuse_vllm: false\n")
    line = "accelerate launch --num_processes 8 grpo.py --config recipe.yaml\n"
    assert [f[0] for f in found(lint_script(repo, line))] == ["recipe.yaml"]


def test_a_path_from_the_repository_top_is_found_from_any_working_folder(tmp_path, monkeypatch):
    """`deepspeed --num_gpus 8 ... --deepspeed ./configs/ds.json` in examples/sft/run.sh, a path from the
    repository's top: the same finding whether batchlint runs inside the repository or outside it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo, "configs/ds.json", DS)
    write(repo, "examples/sft/run.sh", "deepspeed --num_gpus 8 train.py --deepspeed ./configs/ds.json\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    results = []
    for cwd in (repo, outside):
        monkeypatch.chdir(cwd)
        result = run("check", "--output-format", "concise", repo / "examples/sft/run.sh")
        results.append([line.replace(str(repo) + "/", "") for line in result.output.splitlines() if "BL" in line])
    assert results[0] == results[1] and any("configs/ds.json:2" in line and "BL102" in line for line in results[0])


# -- a guessed W is for the configs no launch line in view runs -----------------------------------------

_NANOTRON = "parallelism: {dp: 16, pp: 1, tp: 1}\ntokens: {batch_accumulation_per_replica: 1, micro_batch_size: 2}\n"
# smollm's text/pretraining/launch.slurm: the nodes counted from the job's node list.
_SLURM = ('#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\n'
          'export COUNT_NODE=`scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l`\n'
          'export LAUNCHER="torchrun --nproc_per_node 8 --nnodes $COUNT_NODE"\n'
          'srun bash -c "$LAUNCHER run_train.py --config-file configs/cfg.yaml"\n')


def test_the_nodes_counted_from_the_job_s_node_list_are_its_nodes(repo):
    (repo / ".git").mkdir()
    write(repo, "configs/cfg.yaml", _NANOTRON)
    line = "torchrun --nproc_per_node 8 --nnodes $COUNT_NODE run_train.py --config-file configs/cfg.yaml\n"
    head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\nexport COUNT_NODE="
    for spelling in ('`scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l`',
                     "$(scontrol show hostnames $SLURM_NODELIST | wc -l)",
                     "`scontrol show hostname ${SLURM_JOB_NODELIST} | wc -l`"):
        write(repo, "launch.sh", head + spelling + "\n" + line)
        assert "--nproc_per_node 8 x --nnodes 2 (launch.sh:5)" in run("explain", "launch.sh").stdout, spelling
    write(repo, "launch.sh", head + '`scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1`\n' + line)
    assert "--nnodes 2" not in run("explain", "launch.sh").stdout  # a host's name, not a count


@pytest.mark.parametrize("paths", [(".",), ("configs/cfg.yaml",), ("configs/cfg.yaml", "launch.sh")])
def test_a_guessed_w_is_not_laid_on_a_config_a_script_in_view_launches(repo, paths):
    """`-w 8` on smollm's nanotron configs: the script that runs them says W = 16, whichever files the
    batch holds (pre-commit may lint the config without its script)."""
    (repo / ".git").mkdir()
    write(repo, "configs/cfg.yaml", _NANOTRON)
    write(repo, "launch.sh", _SLURM)
    assert run("check", "-w", "8", *paths).exit_code == 0


def test_a_guessed_w_is_laid_on_a_config_no_script_names(repo):
    (repo / ".git").mkdir()
    write(repo, "configs/cfg.yaml", _NANOTRON)
    write(repo, "launch.sh", _SLURM.replace("configs/cfg.yaml", "configs/other.yaml"))
    result = run("check", "-w", "8", "configs/cfg.yaml")
    assert result.exit_code == 1 and "BL202" in result.stdout and "W = 8" in result.stdout


def test_a_config_whose_launch_line_leaves_w_unknown_takes_the_guess_through_that_line(repo):
    (repo / ".git").mkdir()
    write(repo, "configs/cfg.yaml", _NANOTRON)
    write(repo, "launch.sh", "#!/bin/bash\ntorchrun $DIST_ARGS run_train.py --config-file configs/cfg.yaml\n")
    alone = run("check", "-w", "8", "configs/cfg.yaml")
    assert alone.exit_code == 0  # the script in view launches it: its lint is where the guess applies
    together = run("check", "-w", "8", ".")
    assert together.exit_code == 1 and "BL202" in together.stdout and "launched here by torchrun" in together.stdout


def test_a_cached_result_depends_on_the_scripts_that_name_its_config(repo):
    """The scripts read to tell whether a config is launched are reads of its lint: a script that stops
    naming the config makes the cached result stale."""
    (repo / ".git").mkdir()
    write(repo, "configs/cfg.yaml", _NANOTRON)
    write(repo, "launch.sh", "#!/bin/bash\ntorchrun --nproc_per_node 8 --nnodes 2 run_train.py --config-file configs/cfg.yaml\n")
    cache = str(repo / ".cache")
    assert run("check", "-w", "8", "--cache-dir", cache, "configs/cfg.yaml").exit_code == 0
    write(repo, "launch.sh", "#!/bin/bash\ntorchrun --nproc_per_node 8 --nnodes 2 run_train.py --config-file configs/b.yaml\n")
    assert run("check", "-w", "8", "--cache-dir", cache, "configs/cfg.yaml").exit_code == 1


@pytest.mark.parametrize("name, text", [
    # xtuner's autotest/config.yaml: a test harness names its configs; batchlint reads no launch in it.
    ("autotest.yaml", "case:\n  sft:\n    - type: sft\n      parameters:\n        config: configs/cfg.yaml\n"),
    # A script that only mentions it: in a comment, or as a word no launch line reads.
    ("launch.sh", "#!/bin/bash\n# torchrun --nproc_per_node 16 run_train.py --config-file configs/cfg.yaml\n"),
    ("launch.sh", "#!/bin/bash\necho configs/cfg.yaml\n"),
])
def test_a_config_only_named_not_launched_keeps_the_guess(repo, name, text):
    (repo / ".git").mkdir()
    write(repo, "configs/cfg.yaml", _NANOTRON)
    write(repo, name, text)
    result = run("check", "-w", "8", "configs/cfg.yaml")
    assert result.exit_code == 1 and "BL202" in result.stdout and "W = 8" in result.stdout


# -- a file linted alone gets its job's findings -------------------------------------------------

DS_128 = '{\n  "train_batch_size": 128,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 16\n}\n'


@pytest.mark.parametrize("gpus, flagged", [(4, True), (2, False)])  # 4 x 16 x 2 = 128: what the JSON says
def test_a_config_linted_alone_gets_the_findings_of_the_job_that_runs_it(repo, monkeypatch, gpus, flagged):
    """pre-commit hands the hook only the JSON that changed; the script that runs it on 4 GPUs is in view."""
    (repo / ".git").mkdir()
    write(repo, "configs/ds_zero2.json", DS_128)
    write(repo, "scripts/train.sh", f"#!/bin/bash\ndeepspeed --num_gpus {gpus} train.py --deepspeed_config configs/ds_zero2.json\n")
    monkeypatch.chdir(repo)
    whole = json.loads(run("--output-format", "json", ".").stdout)
    alone = json.loads(run("--output-format", "json", "configs/ds_zero2.json").stdout)
    assert alone == whole
    assert [(f["code"], f["line"]) for f in alone] == ([("BL102", 2)] if flagged else [])
    if flagged:
        assert "launched here by deepspeed with W=4" in [r["message"] for r in alone[0]["related"]]


# -- launch forms read (issue 25) --------------------------------------------------------------------

MEGATRON_LINE = ("torchrun --nproc_per_node 8 {program} --tensor-model-parallel-size 4 "
                 "--pipeline-model-parallel-size {pp} --micro-batch-size 2 --global-batch-size 64\n")


@pytest.mark.parametrize("program", [
    "`pwd`/pretrain_gpt.py", "$(pwd)/pretrain_gpt.py", '"$(pwd)"/pretrain_gpt.py', "$PWD/pretrain_gpt.py",
    "$MEGATRON/pretrain_gpt.py", "${MEGATRON_PATH}/pretrain_gpt.py", '"${MEGATRON_PATH}/pretrain_gpt.py"'])
def test_a_program_named_through_a_folder_out_of_view_is_judged_by_its_name(repo, program):
    """Megatron-LM's pretrain_gpt.py after `cd` to a checkout outside the repository, or through a variable
    (known or not): its file is not in view, its flags are Megatron's by the program's name."""
    head = "cd /opt/Megatron-LM\nMEGATRON=/opt/Megatron-LM\n"
    bad = lint_script(repo, head + MEGATRON_LINE.format(program=program, pp=4))
    assert found(bad) == [("train.sh", "BL202", 3)]
    assert bad.diagnostics[0].message == "W (8) is not divisible by 16, the product of the parallel degrees"
    assert "--tensor-model-parallel-size (4) x --pipeline-model-parallel-size (4) = 16" in " ".join(bad.diagnostics[0].notes)
    assert found(lint_script(repo, head + MEGATRON_LINE.format(program=program, pp=2))) == []


def test_a_program_whose_name_is_not_written_is_not_guessed():
    [line] = lines("torchrun --nproc_per_node 8 $PROGRAM --tensor-model-parallel-size 4\n")
    assert (line.launcher, line.framework, line.entry, line.world_size) == ("torchrun", None, None, None)
    [line] = lines("torchrun --nproc_per_node 8 ${DIR}/pretrain_gpt.py --tensor-model-parallel-size 4\n")
    assert (line.world_size.value, line.entry, line.framework) == (8, None, "megatron")  # not `$DIR` options
    [line] = lines("cd /opt/Megatron-LM\ntorchrun --nproc_per_node 8 $(pwd)/pretrain_gpt.py\n")
    assert line.entry == "/opt/Megatron-LM/pretrain_gpt.py"


HF_LINE = ("deepspeed --num_gpus 8 train.py {data} --deepspeed ds.json "
           "--per_device_train_batch_size 4 --gradient_accumulation_steps 4\n")


@pytest.mark.parametrize("data", ["--data_files a.json b.json", "--data_files a.json b.json c.json",
                                  "--dataset x.json", "--train_file train.jsonl --validation_file dev.json"])
def test_a_flag_with_data_files_does_not_name_the_config(repo, data):
    """argparse's nargs: `--data_files a.json b.json` is one flag's values, not a config standing
    alone; the line's own settings are still the Trainer's (BL120 against the DeepSpeed JSON)."""
    write(repo, "ds.json", DS)
    line = HF_LINE.format(data=data)
    [launch] = lines(line)
    assert (launch.framework, launch.configs, [w.value for w in launch.linked]) == ("transformers", [], ["ds.json"])
    assert ("train.sh", "BL120", 1) in found(lint_script(repo, line))


def test_a_positional_config_after_a_flag_of_another_kind_is_still_one():
    [launch] = lines("torchrun --nproc_per_node 8 train.py --seed 3 cfg.yaml\n")
    assert [w.value for w in launch.configs] == ["cfg.yaml"]
    [launch] = lines("composer train.py --seed 3 cfg.yaml\n")
    assert [w.value for w in launch.configs] == ["cfg.yaml"]


@pytest.mark.parametrize("line, want", [
    ('python3 -m verl.trainer.main_ppo --config-path="$(pwd)/examples/config" --config-name=exp\n', "../../examples/config"),
    ("python3 -m verl.trainer.main_ppo --config-path=`pwd`/conf --config-name=exp\n", "../../conf"),
    ("python3 -m verl.trainer.main_ppo --config-path $PWD --config-name=exp\n", "../.."),
    ('cd /srv/exp\npython3 -m verl.trainer.main_ppo --config-path="$(pwd)/conf"\n', "/srv/exp/conf"),
    ("python3 -m verl.trainer.main_ppo --config-path=conf\n", "conf"),  # from the program's folder, as written
])
def test_a_hydra_config_path_from_the_working_folder_is_made_one_from_the_program(line, want):
    """Hydra reads a relative --config-path from the program's folder (hydra/_internal/utils.py
    compute_search_path_dir); `$(pwd)/conf` is from the folder the command runs in, where `python -m`
    finds verl/trainer/main_ppo.py too."""
    [launch] = lines(line)
    assert launch.config_path.value == want


def test_a_hydra_config_beside_the_script_named_by_pwd_is_composed(repo):
    write(repo, "verl/trainer/main_ppo.py",
          'import hydra\n\n@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)\n'
          "def main(config):\n    pass\n")
    exp = "data:\n  train_batch_size: {}\nactor_rollout_ref:\n  rollout:\n    n: 1\n"
    write(repo, "recipe/config/exp.yaml", exp.format(60))
    script = ('python3 -m verl.trainer.main_ppo --config-path="$(pwd)/recipe/config" --config-name=exp '
              "trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
    assert ("recipe/config/exp.yaml", "BL140", 2) in found(lint_script(repo, script))
    write(repo, "recipe/config/exp.yaml", exp.format(64))
    assert [d for d in lint_script(repo, script).diagnostics if d.code == "BL140"] == []


@pytest.mark.parametrize("script", [
    "read -r -d '' CMD <<EOF\n{line}EOF\neval $CMD\n",
    "read -r -d '' CMD << EOF\n{line}EOF\n$CMD\n",
    "CMD=$(cat <<EOF\n{line}EOF\n)\neval $CMD\n",
    'CMD="$(cat <<-EOF\n\t{line}\tEOF\n)"\neval "$CMD"\n',
    "CMD=$(cat <<EOF\n{line}EOF\n)\nbash -c \"$CMD\"\n",
])
def test_a_command_read_from_a_heredoc_is_read_where_it_is_written(repo, script):
    line = MEGATRON_LINE.format(program="pretrain_gpt.py", pp=4)
    bad = lint_script(repo, script.format(line=line))
    [finding] = bad.diagnostics
    assert (finding.code, finding.span.line, finding.span.column) == ("BL202", 2, line.index("4 --pipe") + 1
                                                                       + (1 if "<<-" in script else 0))
    assert lint_script(repo, script.format(line=MEGATRON_LINE.format(program="pretrain_gpt.py", pp=2))).diagnostics == []


def test_a_heredoc_with_a_quoted_delimiter_is_not_expanded():
    text = "N=8\nCMD=$(cat <<'EOF'\ntorchrun --nproc_per_node $N pretrain_gpt.py\nEOF\n)\necho $CMD\n"
    [command] = read_shell("run.sh", text).commands[-1:]
    assert [w.known for w in command.words] == [True, False]


def test_a_command_built_in_a_variable_keeps_each_word_where_it_is_written(repo):
    script = ('CMD="torchrun --nproc_per_node 8 pretrain_gpt.py"\n'
              'CMD="$CMD --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4"\n'
              'CMD+=" --micro-batch-size 2 --global-batch-size 64"\n'
              'eval "$CMD"\n')
    [finding] = lint_script(repo, script).diagnostics
    assert (finding.code, finding.span.line, finding.span.column) == ("BL202", 2, 40)
    assert [(r.span.line, r.span.column) for r in finding.related][:1] == [(2, 73)]


LLAMAFACTORY_LINE = ("FORCE_TORCHRUN=1 NPROC_PER_NODE=8 llamafactory-cli train --stage sft --do_train "
                     "--model_name_or_path Qwen/Qwen2-7B --dataset alpaca_en --template qwen --finetuning_type lora "
                     "--per_device_train_batch_size 2 --gradient_accumulation_steps 8 --deepspeed ds.json\n")


def test_llamafactory_cli_flags_without_a_yaml_are_the_config(repo):
    """`llamafactory-cli train --stage sft ...` (hparams/parser.py read_args: no YAML/JSON first, the
    flags are the arguments): the line is the config, and `--deepspeed ds.json` a file it names."""
    write(repo, "ds.json", DS)
    [launch] = lines(LLAMAFACTORY_LINE)
    assert (launch.framework, launch.configs, launch.world_size.value) == ("llamafactory", [], 8)
    bad = lint_script(repo, LLAMAFACTORY_LINE)
    assert ("train.sh", "BL120", 1) in found(bad)
    write(repo, "ds.json", DS.replace("64", "128").replace(": 4,", ": 2,").replace(": 4\n", ": 8\n"))
    assert found(lint_script(repo, LLAMAFACTORY_LINE)) == []
    [launch] = lines("llamafactory-cli train examples/sft.yaml learning_rate=1e-5\n")
    assert [w.value for w in launch.configs] == ["examples/sft.yaml"]


def test_the_environment_of_nohup_passes_to_the_command_it_runs():
    [line] = lines("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6 NPROC_PER_NODE=7 nohup swift rlhf --rlhf_type grpo "
                   "--per_device_train_batch_size 2 > train.log 2>&1 &\n")
    assert (line.launcher, line.framework, line.world_size.value) == ("swift", "swift", 7)
    assert lines("nohup NPROC_PER_NODE=7 echo swift\n") == []  # after nohup an assignment is a program's name


def test_options_in_a_variable_before_the_launchers_own_leave_them_read():
    """`accelerate launch $EXTRA_ARGS --num_processes 8 train.py`: the variable may hold any option, the
    line's own come after it (argparse: the last wins) and the program after them."""
    text = ("NUM_GPUS=8\naccelerate launch $EXTRA_ACCELERATE_ARGS --num_processes $NUM_GPUS --mixed_precision fp16 "
            "`pwd`/examples/scripts/dpo.py --per_device_train_batch_size 2\n")
    [line] = lines(text)
    assert (line.world_size.value, line.entry, line.framework) == (8, "./examples/scripts/dpo.py", "transformers")
    [line] = lines("torchrun $DISTRIBUTED_ARGS train.py --per_device_train_batch_size 2\n")
    assert (line.world_size, line.entry) == (None, "train.py")  # any count may be in the variable


def test_a_missing_continuation_before_option_lines_is_said_once(repo):
    """BL610 where the `\\` is missing; BL601 alone where it is followed by a space."""
    base = "torchrun --nproc_per_node 8 train.py \\\n    --per_device_train_batch_size 2{tail}\n    --deepspeed ds.json\n"
    write(repo, "ds.json", '{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto"}\n')
    assert [(d.code, d.span.line) for d in lint_script(repo, base.format(tail="")).diagnostics] == [("BL610", 2)]
    assert [d.code for d in lint_script(repo, base.format(tail=" \\ ")).diagnostics] == ["BL601"]
    assert lint_script(repo, base.format(tail=" \\")).diagnostics == []


def test_a_command_string_with_pwd_and_options_not_known_is_read_when_run():
    """trl's commands/run_dpo.sh shape: a command built in a string around `pwd` and a variable of
    options that a branch sets, run by `eval "$CMD"` in a `{ } || { }` group."""
    text = ('BATCH_SIZE=2\nNUM_GPUS=2\nif [[ "$CONFIG" == "" ]]; then\n  EXTRA_ARGS=""\nelse\n  EXTRA_ARGS="--config_file $CONFIG"\nfi\n'
            'CMD="""\naccelerate launch $EXTRA_ARGS \\\n    --num_processes $NUM_GPUS \\\n    `pwd`/examples/scripts/dpo.py \\\n'
            '    --per_device_train_batch_size $BATCH_SIZE\n"""\n{\n    eval "$CMD"\n} || {\n    exit 1\n}\n')
    [line] = lines(text)
    assert (line.world_size.value, line.entry, line.framework) == (2, "./examples/scripts/dpo.py", "transformers")
    assert [(keys, word.value, word.span.line) for keys, word, _ in line.overrides] == [
        (("per_device_train_batch_size",), "2", 1)]


# -- `: ${NGPUS:=8}`: the idiom that gives a variable its default -------------------------------------

DS_64 = '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 4\n}\n'


@pytest.mark.parametrize("head, flagged", [
    (": ${NGPUS:=8}\n", True),           # W = 8: 4 x 4 x 8 = 128, not 64
    ("NGPUS=4\n: ${NGPUS:=8}\n", False),  # W = 4: 64, as written
])
def test_a_w_set_by_a_no_op_default_reaches_the_config(repo, head, flagged):
    write(repo, "ds.json", DS_64)
    result = lint_script(repo, f"#!/bin/bash\n{head}deepspeed --num_gpus $NGPUS train.py --deepspeed ds.json\n")
    assert found(result) == ([("ds.json", "BL102", 2)] if flagged else [])
