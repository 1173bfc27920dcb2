"""A plain `python train.py` line runs one process: the DeepSpeed config it links is checked with
W = 1 (DeepSpeed#6914: `train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step *
world_size 8 != 2 * 1 * 1`), and only when nothing around the line may start more processes."""

import os

import pytest

from batchlint import per_run

from conftest import lint_text, run, write

# Written for 4 GPUs: 8 = 2 x 1 x 4.
FOR_FOUR = '{\n  "train_batch_size": 8,\n  "train_micro_batch_size_per_gpu": 2,\n  "gradient_accumulation_steps": 1,\n' \
    '  "zero_optimization": {"stage": 2}\n}\n'
# Right for one process: 8 = 2 x 4 x 1.
FOR_ONE = FOR_FOUR.replace('"gradient_accumulation_steps": 1', '"gradient_accumulation_steps": 4')
# A program of its own driving DeepSpeed (deepspeed.add_config_arguments, deepspeed.initialize(args=...)).
OWN = ("import argparse, deepspeed\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', type=int)\n"
       "parser = deepspeed.add_config_arguments(parser)\nargs = parser.parse_args()\nmodel = build_model()\n"
       "engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())\n")
# A Hugging Face Trainer script (its flags are TrainingArguments).
TRAINER = ("from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n"
           "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
           "Trainer(model=model, args=args, train_dataset=dataset).train()\n")
LINE = "python train.py --deepspeed --deepspeed_config ds_config.json\n"
HF_LINE = ("python train.py \\\n    --model_name_or_path Qwen/Qwen2.5-0.5B \\\n    --deepspeed configs/ds_z2.json \\\n"
           "    --per_device_train_batch_size 2 \\\n    --output_dir output\n")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir(tmp_path / ".git")  # the project is the checkout: every script in it is in view
    write(tmp_path, "train.py", OWN)
    return tmp_path


def lint_script(repo, text, name="run.sh", config=FOR_FOUR, at="ds_config.json"):
    write(repo, at, config)
    return lint_text(repo, name, text)


def found(result):
    return sorted((d.path, d.code, d.span.line, d.span.column) for d in result.diagnostics)


def test_the_reported_shape_is_refused_with_w_1(repo):
    result = lint_script(repo, LINE)
    assert found(result) == [("ds_config.json", "BL102", 2, 23)]
    [finding] = result.diagnostics
    assert "x world size (1) = 2" in " ".join(finding.notes) and "DeepSpeed refuses to start" in " ".join(finding.notes)
    notes = [(r.path, r.span.line, r.message) for r in finding.related]
    assert ("run.sh", 1, "launched here by python with W=1") in notes
    assert ("run.sh", 1, "W = 1: plain `python` starts one process (DeepSpeed's MPI discovery finds one rank outside "
            "mpirun/srun); launch with `deepspeed --num_gpus N` or torchrun for more") in notes


def test_a_config_right_for_one_process_is_clean(repo):
    assert found(lint_script(repo, LINE, config=FOR_ONE)) == []


def test_explain_says_why_w_is_1(repo):
    lint_script(repo, LINE)
    out = run("explain", "run.sh").stdout
    assert "ds_config.json, as launched by python with W=1 at run.sh:1" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("world size W"))
    assert row.split()[3] == "1" and "plain `python` starts one process" in row


@pytest.mark.parametrize("line", [
    "srun python train.py --deepspeed --deepspeed_config ds_config.json\n",  # its tasks: not known here
    "srun --ntasks 4 python train.py --deepspeed --deepspeed_config ds_config.json\n",  # W = 4: 8 = 2 x 1 x 4
    "mpirun -np 4 python train.py --deepspeed --deepspeed_config ds_config.json\n",
    "export WORLD_SIZE=4 RANK=0 LOCAL_RANK=0 MASTER_ADDR=localhost MASTER_PORT=29500\n" + LINE,
    "RANK=$SLURM_PROCID python train.py --deepspeed --deepspeed_config ds_config.json\n",
    "env LOCAL_RANK=0 python train.py --deepspeed --deepspeed_config ds_config.json\n",
    "#!/bin/bash\n#SBATCH --job-name=sft\n#SBATCH --gres=gpu:4\n" + LINE,
    "#!/bin/bash\n#PBS -l select=1:ngpus=4\n" + LINE,
    "python -m mypkg.train --deepspeed --deepspeed_config ds_config.json\n",  # a module: not looked into
    "python other.py --deepspeed --deepspeed_config ds_config.json\n",  # a program not in view
])
def test_a_line_that_may_run_more_processes_leaves_w_alone(repo, line):
    assert found(lint_script(repo, line)) == []


@pytest.mark.parametrize("caller", [
    "#!/bin/bash\n#SBATCH --nodes=1\nsrun bash run.sh\n",
    "mpirun -np 4 bash ./run.sh\n",
    "export WORLD_SIZE=4\nbash $ROOT/run.sh\n",
])
def test_a_script_another_script_runs_is_not_known_to_be_one_process(repo, caller):
    write(repo, "launch/submit.sh", caller)
    assert found(lint_script(repo, LINE)) == []


def test_a_script_of_the_same_name_elsewhere_is_not_its_caller(repo):
    write(repo, "launch/submit.sh", "srun bash examples/other/run.sh\nsrun bash pretrain_run.sh\n")
    assert found(lint_script(repo, LINE)) == [("ds_config.json", "BL102", 2, 23)]


def test_through_a_plain_caller_w_is_1_and_a_caller_under_srun_is_not(repo):
    write(repo, "ds_config.json", FOR_FOUR)
    write(repo, "scripts/run.sh", "cd \"$(dirname \"$0\")\"/..\n" + LINE)
    result = lint_text(repo, "train_all.sh", "bash scripts/run.sh\n")
    assert found(result) == [("ds_config.json", "BL102", 2, 23)]
    assert [r.path for r in result.diagnostics[0].related][-1] == "train_all.sh"  # runs scripts/run.sh
    assert found(lint_text(repo, "train_all.sh", "#SBATCH --ntasks=4\nbash scripts/run.sh\n")) == []


@pytest.mark.parametrize("imports", [
    "import lightning as L\n",  # Lightning starts its own processes
    "import torch.multiprocessing as mp\n",
    "import os, subprocess\n",  # it may run a launcher
])
def test_a_program_that_starts_processes_of_its_own_leaves_w_alone(repo, imports):
    write(repo, "train.py", imports + OWN)
    assert found(lint_script(repo, LINE)) == []


def test_the_program_is_the_one_in_the_folder_the_script_moved_to(repo):
    write(repo, "lightning_job/train.py", "import lightning as L\n" + OWN)
    line = "cd lightning_job\npython train.py --deepspeed --deepspeed_config ../ds_config.json\n"
    assert found(lint_script(repo, line)) == []
    write(repo, "lightning_job/train.py", OWN)
    per_run.forget()  # a new run reads the program again
    assert found(lint_script(repo, line)) == [("ds_config.json", "BL102", 2, 23)]


def test_a_program_that_drives_no_deepspeed_leaves_w_alone(repo):
    write(repo, "train.py", "import argparse, json\nconfig = json.load(open(argparse.ArgumentParser().parse_args().x))\n")
    assert found(lint_script(repo, LINE)) == []


def test_a_trainer_given_deepspeed_by_plain_python_is_refused(repo):
    write(repo, "train.py", TRAINER)
    result = lint_script(repo, HF_LINE, at="configs/ds_z2.json")
    assert ("configs/ds_z2.json", "BL102", 2, 23) in found(result)
    assert all(d.span.line == 2 for d in result.diagnostics)
    assert "x world size (1) = 2" in " ".join(next(d for d in result.diagnostics if d.code == "BL102").notes)


def test_a_trainer_without_deepspeed_is_not_one_process(repo):
    """nn.DataParallel over the visible GPUs: the global batch is not W = 1's; no config is linked."""
    write(repo, "train.py", TRAINER)
    line = HF_LINE.replace("    --deepspeed configs/ds_z2.json \\\n", "")
    assert found(lint_script(repo, line, at="configs/ds_z2.json")) == []


def test_the_users_world_size_wins_over_w_1(repo):
    """A `world-size` directive in the script (or --world-size) says how the user runs it."""
    assert found(lint_script(repo, "# batchlint: world-size=4\n" + LINE)) == []


def test_past_the_files_it_looks_through_for_callers_w_stays_unknown(repo, monkeypatch):
    from batchlint.launching import callers

    write(repo, "a.sh", "echo a\n")
    write(repo, "b.sh", "echo b\n")
    assert found(lint_script(repo, LINE)) == [("ds_config.json", "BL102", 2, 23)]
    monkeypatch.setattr(callers, "MAX_FILES", 1)
    per_run.forget()
    assert found(lint_script(repo, LINE)) == []


def test_the_line_s_one_process_beats_a_guessed_w_and_explain_s_what_if_beats_both(repo):
    """`-w` and the project config are a guess for configs no launch line runs: a plain `python` line
    runs one process, as `torchrun` without --nproc-per-node does (Megatron-DeepSpeed's examples under -w 8)."""
    write(repo, "ds_config.json", FOR_ONE)
    path = write(repo, "run.sh", LINE)
    assert found(lint_text(repo, "run.sh", LINE, world_size=8)) == []  # planned at W = 1: right for it
    write(repo, "ds_config.json", FOR_FOUR)
    [finding] = lint_text(repo, "run.sh", LINE, world_size=8).diagnostics
    assert "x world size (1) = 2" in " ".join((finding.message,) + finding.notes)
    what_if = run("explain", "-w", "8", path).stdout
    assert "world size W                        8" in what_if


# Megatron-DeepSpeed's examples_deepspeed/data_efficiency/gpt/ds_analyze_gpt_data_map.sh: Megatron's
# arguments to a plain `python`; Megatron takes W from WORLD_SIZE, 1 when unset.
MEGATRON = ('#!/bin/bash\nbatch_size=10000\noptions="--micro-batch-size ${batch_size} --global-batch-size %s '
            '--seq-length 512"\n%spython analyze_data.py ${options}\n')
ANALYZE = "import torch\nfrom megatron import get_args\n"


@pytest.mark.parametrize("prefix, program, world", [
    # beside Megatron's own modules in the project (a Megatron-DeepSpeed checkout): its fused_kernels
    # compile with subprocess, the runtime's doing, not a process the program starts
    ("", ANALYZE, 1),
    ("WORLD_SIZE=4 ", ANALYZE, None),  # a launcher's variable given to the line
    ("srun ", ANALYZE, None),  # a scheduler's tasks
    ("", "import torch\n", None),  # a program that does not drive Megatron
    ("", ANALYZE + "import subprocess\n", None),  # one that may start processes of its own
    ("", ANALYZE + "from tools import launch\n", None),  # a module of the project's own that does
])
def test_megatron_arguments_to_a_plain_python_run_at_w_1(repo, prefix, program, world):
    write(repo, "megatron/__init__.py", "from .global_vars import get_args\nfrom . import fused_kernels\n")
    write(repo, "megatron/global_vars.py", "def get_args():\n    return None\n")
    write(repo, "megatron/fused_kernels/__init__.py", "import subprocess\n")
    write(repo, "tools/__init__.py", "")
    write(repo, "tools/launch.py", "import subprocess\n")
    write(repo, "analyze_data.py", program)
    result = lint_text(repo, "run.sh", MEGATRON % ("${batch_size}", prefix), world_size=8)
    assert [d.code for d in result.diagnostics] == ([] if world == 1 else ["BL103"])  # -w 8 where W is unknown
    found_there = lint_text(repo, "run.sh", MEGATRON % ("15000", prefix))
    if world == 1:
        [finding] = found_there.diagnostics
        assert finding.code == "BL103" and "x dp (1) = 10000" in " ".join((finding.message,) + finding.notes)
        assert any(r.message.startswith("W = 1: plain `python` starts one process (Megatron reads WORLD_SIZE")
                   for r in finding.related)
    else:  # 15000 over micro batches of 10000 fails at every W: said, with no W = 1 in it
        [finding] = found_there.diagnostics
        assert finding.code == "BL103" and not any(r.message.startswith("W = 1") for r in finding.related)
