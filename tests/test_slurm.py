"""Slurm: srun as the launcher (each task one process) or around one (torchrun, deepspeed), and the
counts an #SBATCH header gives the job. The scripts have the shapes of Slurm examples of
Megatron-LM, torchtitan, InternVL and open-r1."""

import pytest

from batchlint.launching import lines as launch
from batchlint.sources.shell import read_shell

from test_launch import found, launched_w, lint_script

HEADER = "#!/bin/bash\n#SBATCH --job-name=sft\n{directives}#SBATCH --cpus-per-task=96\n\nset -x\n"
TRAINER = "python train.py --per_device_train_batch_size 4 --gradient_accumulation_steps 2 --bf16 true"


def world(text):
    [line] = launch.launches(read_shell("job.slurm", text))
    return (line.launcher, line.world_size.value if line.world_size else None)


@pytest.mark.parametrize("line, expected", [
    (f"srun --nodes=2 --ntasks-per-node=8 {TRAINER}\n", ("srun", 16)),
    (f"srun -N2 --ntasks-per-node 8 {TRAINER}\n", ("srun", 16)),
    (f"srun -n 32 --gres=gpu:8 {TRAINER}\n", ("srun", 32)),
    (f"srun --ntasks=8 --kill-on-bad-exit=1 {TRAINER}\n", ("srun", 8)),
    (f"srun --ntasks-per-node=8 {TRAINER}\n", ("srun", None)),  # on how many nodes: the allocation's
    (f"srun -N 2 {TRAINER}\n", ("srun", None)),
    (f"srun --nodes=2-4 --ntasks-per-node=8 {TRAINER}\n", ("srun", None)),
    (f"{TRAINER}\n", ("python", None)),  # no srun: one process, but not said
])
def test_srun_starts_one_process_per_task(line, expected):
    assert world(line) == expected


def test_srun_options_not_known_leave_w_unknown():
    assert world(f"srun --nodes=$NNODES --ntasks-per-node=8 {TRAINER}\n") == ("srun", None)


@pytest.mark.parametrize("default, expected", [('""', ("srun", 64)), ('"--ntasks=8"', ("srun", 8)), ('"-x node1"', ("srun", 64))])
def test_an_options_variable_with_a_known_value_is_read_as_written(default, expected):
    """InternVL's shape: `SRUN_ARGS=${SRUN_ARGS:-""}` then `srun ... ${SRUN_ARGS} python -u ...`: set to
    nothing, the unquoted expansion is no word at all (it was read as a command not known: no launch)."""
    text = (f"GPUS=${{GPUS:-64}}\nSRUN_ARGS=${{SRUN_ARGS:-{default}}}\n"
            f"srun -p ${{PARTITION}} --ntasks=${{GPUS}} --kill-on-bad-exit=1 ${{SRUN_ARGS}} \\\n  python -u {TRAINER[7:]}\n")
    assert world(text) == expected


@pytest.mark.parametrize("directives, line, expected", [
    # the job's tasks: --nodes x --ntasks-per-node, or --ntasks
    ("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n", f"srun {TRAINER}\n", 16),
    ("#SBATCH -N 4\n#SBATCH --ntasks=32\n", f"srun --cpu-bind=none {TRAINER}\n", 32),
    # the line's own -N x --ntasks-per-node beat the job's tasks; its --ntasks-per-node alone does not
    ("#SBATCH --nodes=2\n#SBATCH --ntasks=16\n", f"srun -N2 --ntasks-per-node=1 {TRAINER}\n", 2),
    ("#SBATCH --nodes=2\n#SBATCH --ntasks=16\n", f"srun --ntasks-per-node=1 {TRAINER}\n", 16),
    ("#SBATCH --nodes=2\n", f"srun {TRAINER}\n", None),  # tasks not said
])
def test_srun_in_a_batch_job_runs_the_jobs_tasks(directives, line, expected):
    assert world(HEADER.format(directives=directives) + line) == ("srun", expected)


def test_srun_around_a_launcher_runs_it_once_per_task_and_the_launcher_gives_w():
    """torchtitan's multinode_trainer.slurm shape: one torchrun per node, 8 processes each."""
    text = HEADER.format(directives="#SBATCH --ntasks=4\n#SBATCH --nodes=4\n#SBATCH --gpus-per-task=8\n") + (
        "srun torchrun --nnodes $SLURM_NNODES --nproc_per_node $SLURM_GPUS_PER_TASK --rdzv_id 101 "
        "--rdzv_backend c10d -m torchtitan.train --job.config_file ./train_configs/llama3_8b.toml\n")
    assert world(text) == ("torchrun", 32)
    line = "srun --nodes=2 --ntasks-per-node=1 torchrun --nnodes 2 --nproc_per_node 8 train.py --config c.yaml\n"
    assert world(line) == ("torchrun", 16)
    # a framework's entry point that counts its own GPUs: srun's one task is not W
    assert world("srun -N 1 -n 1 python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8 trainer.nnodes=2\n") \
        == ("verl", 16)


def test_an_srun_launch_is_checked_at_the_tasks_it_starts(repo):
    """A Megatron-style script under srun: W = 2 x 8 tasks, dp = 16 / tp 2 = 8."""
    script = HEADER.format(directives="#SBATCH --nodes=2\n#SBATCH --ntasks-per-node={n}\n") + (
        "srun python pretrain_gpt.py --micro-batch-size 4 --global-batch-size 96 "
        "--tensor-model-parallel-size 2 --seq-length 4096\n")
    assert launched_w(repo, script.format(n=8), name="pretrain.sbatch") == [16]
    assert found(lint_script(repo, script.format(n=8), name="pretrain.sbatch")) == []  # 96 = 4 x 8 x 3
    # 5 tasks a node: W 10, dp 5, and 96 is no multiple of 4 x 5
    result = lint_script(repo, script.format(n=5), name="pretrain.sbatch")
    [finding] = result.diagnostics
    assert finding.code == "BL103" and "dp (5) = 20" in " ".join((finding.message,) + finding.notes)
