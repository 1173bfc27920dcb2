"""Generic launchers: they start N processes of whatever program follows, and give
the world size; the program's own entry point (a framework's Launcher) reads the rest."""

from __future__ import annotations

from .spec import Count, Launcher

# Launcher options that take no value (torch/distributed/run.py, deepspeed/launcher/runner.py,
# accelerate/commands/launch.py).
_BARE = frozenset({
    "--standalone", "--no_python", "--no-python", "--module", "--run_path", "--run-path", "--multi_gpu",
    "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--no_local_rank", "--no-local-rank", "--force_multi",
    "--bind_cores_to_rank", "--enable_each_rank_log", "--autotuning"})

TORCHRUN = Launcher(
    "torchrun", commands=("torchrun",), modules=("torch.distributed.run", "torch.distributed.launch"),
    markers=(b"torchrun", b"torch.distributed"), program=True, bare=_BARE,
    nproc=Count(flags=("--nproc_per_node", "--nproc-per-node")), nnodes=Count(flags=("--nnodes",)))
DEEPSPEED = Launcher(
    "deepspeed", commands=("deepspeed",), markers=(b"deepspeed",), program=True, bare=_BARE,
    nproc=Count(flags=("--num_gpus", "--num-gpus")), nnodes=Count(flags=("--num_nodes", "--num-nodes")))
ACCELERATE = Launcher(
    "accelerate launch", commands=("accelerate",), subcommands=("launch",), markers=(b"accelerate",),
    program=True, bare=_BARE, nproc=Count(flags=("--num_processes", "--num-processes")), total=True)

LAUNCHERS = (TORCHRUN, DEEPSPEED, ACCELERATE)
