"""Generic launchers: they start N processes of whatever program follows, and give
the world size; the program's own entry point (a framework's Launcher) reads the rest.
Wrappers: commands that run a launch line (a job submitter, a scheduler, `env`)."""

from __future__ import annotations

from .spec import Count, Hosts, Launcher, Wrapper

# Launcher options that take no value (torch/distributed/run.py, deepspeed/launcher/runner.py,
# accelerate/commands/launch.py).
_BARE = frozenset({
    "--standalone", "--no_python", "--no-python", "--module", "--run_path", "--run-path", "--multi_gpu",
    "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--no_local_rank", "--no-local-rank", "--force_multi",
    "--bind_cores_to_rank", "--enable_each_rank_log", "--autotuning"})

TORCHRUN = Launcher(
    "torchrun", commands=("torchrun",), modules=("torch.distributed.run", "torch.distributed.launch"),
    markers=(b"torchrun", b"torch.distributed"), program=True, bare=_BARE,
    # torch/distributed/run.py get_args_parser: --nproc-per-node defaults to "1", --nnodes to "1:1"; each
    # also read from PET_NPROC_PER_NODE / PET_NNODES (its `env` action). torch.distributed.launch: the same.
    nproc=Count(flags=("--nproc_per_node", "--nproc-per-node"), env=("PET_NPROC_PER_NODE",), default=1,
                source="torch/distributed/run.py get_args_parser: --nproc-per-node default '1'"),
    nnodes=Count(flags=("--nnodes",), env=("PET_NNODES",)))
DEEPSPEED = Launcher(
    "deepspeed", commands=("deepspeed",), markers=(b"deepspeed",), program=True, bare=_BARE,
    # deepspeed/launcher/runner.py: with a hostfile (or --include/--exclude naming hosts) --num_gpus
    # is per node and the nodes are the hostfile's first --num_nodes, not 1.
    nproc=Count(flags=("--num_gpus", "--num-gpus", "--num_accelerators")),
    nnodes=Count(flags=("--num_nodes", "--num-nodes")),
    hosts=Hosts(file=("--hostfile", "-H"), include=("--include", "-i"), exclude=("--exclude", "-e"),
                visible=("CUDA_VISIBLE_DEVICES",)))
ACCELERATE = Launcher(
    "accelerate launch", commands=("accelerate",), subcommands=("launch",), markers=(b"accelerate",),
    program=True, bare=_BARE, total=True,
    # accelerate/commands/launch.py: --num_processes, else the config file's num_processes (the total
    # over machines), else the default config in the user's home, which is not the project's.
    nproc=Count(flags=("--num_processes", "--num-processes"), file=("--config_file", "--config-file"),
                file_key="num_processes"),
    # The machines the total is spread over (default 1): only the processes per machine read it (W is the total).
    nnodes=Count(flags=("--num_machines", "--num-machines"), file=("--config_file", "--config-file"),
                 file_key="num_machines"),
    config_file=("--config_file", "--config-file"))

# Open MPI / MPICH `mpirun -np N program ...` (and `mpiexec`): N processes in all.
MPIRUN = Launcher(
    "mpirun", commands=("mpirun", "mpiexec"), markers=(b"mpirun", b"mpiexec"), program=True, total=True,
    bare=frozenset({"--allow-run-as-root", "--oversubscribe", "--tag-output", "--timestamp-output", "-q", "--quiet",
                    "--report-bindings", "--display-map", "-v", "--verbose", "--noprefix", "-prepend-rank",
                    "--prepend-rank", "-l", "--hetero-nodes"}),
    nproc=Count(flags=("-np", "-n", "--np", "--n", "-c")))

# MosaicML Composer's `composer [-n N] [--world_size W] script.py ...` (composer/cli/launcher.py
# _get_parser, _parse_args): -n/--nproc, else LOCAL_WORLD_SIZE, else the local GPU count (unknown
# here); --world_size, else WORLD_SIZE, else nproc. -v, -m and -c take no value.
COMPOSER = Launcher(
    "composer", commands=("composer",), markers=(b"composer",), program=True,
    bare=frozenset({"-v", "--verbose", "-m", "--module_mode", "-c", "--command_mode"}),
    nproc=Count(flags=("-n", "--nproc"), env=("LOCAL_WORLD_SIZE",)),
    tasks=Count(flags=("--world_size",), env=("WORLD_SIZE",)))

# MindSpore's `msrun --worker_num=N --local_worker_num=M ... script.py ...` (MindSpeed-LLM's and MindFormers'
# scripts on Ascend): --worker_num processes in all, default 8; every option takes a value
# (mindspore/python/mindspore/parallel/cluster/run.py get_args, in the 2.3 and 2.5 trees alike).
MSRUN = Launcher(
    "msrun", commands=("msrun",), markers=(b"msrun",), program=True, total=True,
    nproc=Count(flags=("--worker_num",), default=8,
                source="mindspore/parallel/cluster/run.py get_args: --worker_num default 8"))

LAUNCHERS = (TORCHRUN, DEEPSPEED, ACCELERATE, MPIRUN, COMPOSER, MSRUN)

# `ray job submit [options] -- ENTRYPOINT...` (ray/dashboard/modules/job/cli.py: the entrypoint is
# the arguments left after the options; scripts put `--` before it).
RAY_JOB = Wrapper("ray job submit", commands=("ray",), subcommands=("job", "submit"), separator="--")
# `srun [options] CMD...` (Slurm srun(1)): the options that take no value; every other takes one.
# It starts -n tasks (or -N nodes x --ntasks-per-node; inside a batch job -n comes from SLURM_NTASKS,
# which the #SBATCH header sets): each a process of a program that counts none itself.
SRUN_TASKS = Launcher(
    "srun", commands=("srun",), markers=(b"srun",),
    tasks=Count(flags=("-n", "--ntasks"), env=("SLURM_NTASKS", "SLURM_NPROCS")),
    nproc=Count(flags=("--ntasks-per-node",)), nnodes=Count(flags=("-N", "--nodes"), unknown_with=("--ntasks-per-node",)))
SRUN = Wrapper("srun", commands=("srun",), starts=SRUN_TASKS, bare=frozenset({
    "-E", "-H", "-I", "-k", "-K", "-l", "-O", "-Q", "-s", "-u", "-v", "-V", "-X", "-Z", "-h",
    "--overlap", "--exclusive", "--label", "--unbuffered", "--pty", "--quiet", "--verbose", "--no-kill",
    "--kill-on-bad-exit", "--disable-status", "--hold", "--immediate", "--multi-prog", "--no-allocate",
    "--preserve-env", "--test-only", "--contiguous", "--exact", "--spread-job", "--use-min-nodes",
    "--overcommit", "--oversubscribe", "--reboot", "--whole", "--x11", "--help", "--usage", "--version"}))
# `env [-i] [-u NAME] NAME=value... CMD...` (coreutils env(1)).
ENV = Wrapper("env", commands=("env",), assignments=True,
              bare=frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"}))

# `uv run [options] CMD...` (uv's `run` command; `poetry run CMD...` has no options of its own): the
# options that take a value, every other stands alone.
UV_RUN = Wrapper("uv run", commands=("uv",), subcommands=("run",), valued=frozenset({
    "--with", "-w", "--with-editable", "--with-requirements", "--python", "-p", "--project", "--directory",
    "--extra", "--group", "--only-group", "--no-group", "--package", "--env-file", "--index", "--default-index",
    "--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--cache-dir", "--config-file", "--color",
    "--reinstall-package", "--upgrade-package", "-P", "--resolution", "--prerelease", "--exclude-newer",
    "--link-mode", "--index-strategy", "--keyring-provider", "--config-setting", "-C", "--no-binary-package",
    "--no-build-package", "--python-platform", "--allow-insecure-host", "--refresh-package"}))
POETRY_RUN = Wrapper("poetry run", commands=("poetry",), subcommands=("run",), bare=frozenset({"-q", "-v", "-vv", "-vvv", "-n"}))

WRAPPERS = (RAY_JOB, SRUN, ENV, UV_RUN, POETRY_RUN)

# A batch script's header directives (Slurm `#SBATCH`, PBS/Torque `#PBS`, LSF `#BSUB`, Grid Engine `#$`,
# Cobalt, Flux): the scheduler runs such a script, and some sites wrap what it runs in their launcher,
# so a plain interpreter line in it is not known to be one process.
SCHEDULER_DIRECTIVES = (b"#SBATCH", b"#PBS", b"#BSUB", b"#$", b"#COBALT", b"#FLUX:")
