"""What a framework is to batchlint, declared in one place: each framework module
ends its header with `FRAMEWORK = Framework(...)`, and `lint/frameworks/__init__.py`
registers it (as `rules/__init__.py` registers rules).

A `Launcher` describes one command that starts training, as data; `lint/launching/lines.py`
interprets these descriptions and knows no framework. Two kinds:

- an entry point of a framework (`swift sft`, `python -m verl.trainer.main_ppo`,
  `pretrain_gpt.py`): it says how its arguments name the config and the overrides,
  and whether they form a whole config of its framework (`inline`);
- a generic launcher (torchrun, deepspeed, accelerate launch; `launchers.py`,
  `program=True`): its own options give the world size, then a program follows,
  and the entry point that program matches (by `scripts` for a path, by `modules`
  after `-m` / `--module`) reads the rest of the line.

Example, an entry point whose flags form a whole config, run directly or under
`deepspeed --module`::

    Launcher("mytool", modules=("mytool.cli.train_*",), markers=(b"mytool.cli",),
             flags=FLAGS, config_files=False, inline=True)

With `python -m mytool.cli.train_sft --micro_batch 2` W is unknown (python gives
none); with `deepspeed --num_nodes 2 --num_gpus 8 --module mytool.cli.train_sft ...`
W = 16 from deepspeed's spec, and the flags become the document the framework's
`plan` reads, with `document.launched_by` set to the framework's name.
"""

from __future__ import annotations

from collections.abc import Callable

from ..lean_dataclass import lean_dataclass
from ..versions import Distribution

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

__all__ = ["ASSIGN", "FLAGS", "HYDRA", "HYDRA_COMPOSED", "OMEGACONF", "Count", "Distribution", "Framework", "Launcher",
           "OneProcess", "Select", "TaskFile", "Wrapper", "STARTS_PROCESSES", "LAUNCHER_VARIABLES"]

# How a program takes its settings on the command line (Launcher.flags).
FLAGS = "--key value"  # --a.b value, --a.b=value; a flag alone is true
ASSIGN = "key=value"  # a.b=value, and the --key forms too
HYDRA = "hydra"  # a.b=value, +a.b=value, ~a.b; --config-name / cn= names the primary config

# How a framework's YAML values refer to each other (Framework.interpolation).
OMEGACONF = "omegaconf"  # `${a.b}`, `${..x}`, `${oc.select:...}`, `${oc.env:...}`: lint/sources/omegaconf.py
# A Hydra app's: composed from its `defaults:` lists first (lint/sources/hydra.py), then OMEGACONF.
HYDRA_COMPOSED = "hydra"


@lean_dataclass(frozen=True)
class Count:
    """One factor of the world size (processes per node, or nodes): where a launcher
    reads it, first given wins, and what it assumes when none is given.

    flags: the launcher's own options (`--nproc_per_node 8`, `--nproc_per_node=8`; an
        elastic `8:8` counts as 8); env: variables prefixed to the command
        (`NPROC_PER_NODE=8 swift sft`); key: a dotted Hydra override key
        (`trainer.n_gpus_per_node=8`), for `flags=HYDRA` launchers.
    unknown_with: launcher options that make the count unknown unless it is given
        (`deepspeed --hostfile hosts`: the nodes are the file's hosts, not 1).
    file: a launcher option naming a YAML/JSON file that holds the count under
        `file_key` (`accelerate launch --config_file cfg.yaml`: `num_processes`), read
        when neither flags nor env give it (the engine reads it, within the project).
    default: assumed when none is given (quoted to the user as assumed); None: the
        count is unknown then (processes) or 1 (nodes, silently).
    source: where upstream writes that default, for the reader of the spec.
    devices: variables listing the devices a launcher counts when neither flags nor env give
        the count (`CUDA_VISIBLE_DEVICES=0,1,2,3 llamafactory-cli train`: 4, as its
        torch.cuda.device_count() sees them).
    """

    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    key: str = ""
    unknown_with: tuple[str, ...] = ()
    file: tuple[str, ...] = ()
    file_key: str = ""
    default: Optional[int] = None
    source: str = ""

    @property
    def name(self) -> str:
        """How the assumed default is named to the user."""
        return self.key or (self.flags + self.env + ("",))[0]


@lean_dataclass(frozen=True)
class Hosts:
    """The machines a launcher runs on, when its options name them: an MPI-style hostfile
    (`worker-1 slots=8`, one host a line) filtered by `NODE[:SLOT,...][@NODE...]` lists, as
    DeepSpeed's runner reads them (deepspeed/launcher/runner.py: fetch_hostfile,
    parse_inclusion_exclusion, then the first --num_nodes hosts with --num_gpus slots each).

    file: options naming the hostfile, read within the project (missing or outside: W unknown);
    include, exclude: the filter options (each excludes the counts: upstream refuses both);
    local: the one host there is without a hostfile (`--include localhost:0,1` = 2 processes);
    visible: a variable listing the local devices, taken as `--include local:<list>` when no
    other option names hosts or counts (`CUDA_VISIBLE_DEVICES=0,1 deepspeed train.py`).
    """

    file: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    local: str = "localhost"
    visible: tuple[str, ...] = ()


@lean_dataclass(frozen=True)
class Select:
    """A config picked by name from a module of several (TorchTitan's `--module llama3 --config
    llama3_8b`), where a launch line names them: flags, else variables the command is given
    (`MODULE=llama3 CONFIG=llama3_8b ./run_train.sh`), else defaults (the script's own).

    files(module) -> the files that module may be, relative to the project root, in the order
    the framework tries them; read(document, name, view) -> the document of that one config, or None
    when the file holds none of that name, reading other files through the project view (both the
    framework's)."""

    files: Callable
    read: Callable
    module_flags: tuple[str, ...] = ()
    name_flags: tuple[str, ...] = ()
    module_env: tuple[str, ...] = ()
    name_env: tuple[str, ...] = ()
    module_default: str = ""
    name_default: str = ""


@lean_dataclass(frozen=True)
class Launcher:
    """A command that starts training, recognised by the first words of a shell command.

    name: shown in notes ("launched here by <name> with W=8").
    commands: argv[0] basename globs (`torchrun`, `swift`); subcommands: globs of a
        word after the command that is dropped (`launch`, or `*` for any one word).
    modules: `python -m <module>` globs (`verl.trainer.main_*`); scripts: basename
        globs of a script run by python or by a generic launcher (`pretrain_*`).
    markers: bytes one of which a script holding this launch line contains (scripts
        with none of any launcher's markers are not even parsed).
    nproc, nnodes: the world-size factors; total: nproc counts all nodes' processes.
    tasks: the processes in all, when given: W by itself (its flags first, then its env unless
        the flags give both nproc and nnodes; `srun -n 16`, SLURM_NTASKS).
    hosts: the options that name machines (a hostfile, include/exclude lists); when one is
        given, W is the processes on the hosts they select (nproc/nnodes then per host/first hosts).
    program: a generic launcher: its options (`--opt value`, or the bare ones in
        `bare`), then a program (a script, or a module after `-m`/`--module`) with
        its arguments, which the entry point the program matches reads.
    skip: leading arguments that are neither config nor override (tune's recipe).
    flags: how the arguments spell overrides (FLAGS, ASSIGN, HYDRA).
    config_files: config files among the arguments (`x.yaml` positional or after any
        flag, `--deepspeed ds.json`) are read and the overrides applied to them.
    inline: the overrides form a whole config of the owning framework, linted as a
        document of its own when the line names no config file.
    config_flags: globs of the flags whose file value is a config (`*config*`: `--config x.yaml`,
        not `--data_path data.json`); empty: any flag's.
    linked: flags whose value is a file another framework reads (`--deepspeed ds.json`):
        a setting of the inline config, and the file is linted under this launch as it
        is written: a program's flags are never written into it.
    requires: the launcher matches a program only when its arguments give one of these flags
        (a fallback `*.py` for the scripts whose flags are this framework's, tried before others').
    under: the generic launchers (by name) the entry point matches a program under, and only
        them: a script name too common alone (`composer train.py cfg.yaml`, not `torchrun train.py`).
    selects: the config is one of several a module holds, picked by name (a Select).
    config_file: the launcher's own options naming its own config file (`accelerate launch
        --config_file cfg.yaml`), which the framework reading that file says what it hands the
        program (Framework.hands).
    """

    name: str
    commands: tuple[str, ...] = ()
    subcommands: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    markers: tuple[bytes, ...] = ()
    nproc: Count = Count()
    nnodes: Count = Count()
    total: bool = False
    tasks: Count = Count()
    hosts: Optional[Hosts] = None
    program: bool = False
    bare: frozenset = frozenset()
    skip: int = 0
    flags: str = FLAGS
    config_files: bool = True
    inline: bool = False
    config_flags: tuple[str, ...] = ()
    linked: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    under: tuple[str, ...] = ()
    selects: Optional[Select] = None
    config_file: tuple[str, ...] = ()


@lean_dataclass(frozen=True)
class Wrapper:
    """A command that runs another one, which is read as the launch line
    (`launchers.py` lists them): `ray job submit --address=... -- python3 -m ...`,
    `srun --nodes=2 torchrun ...`, `env NPROC_PER_NODE=8 swift sft ...`. (`nohup`,
    `exec`, `time` are dropped by the shell reader; the commands of a
    `bash -c "..."` string are read by it where they stand.)

    commands: argv[0] basename globs; subcommands: the words that follow it
        (`job`, `submit`), else it is not this wrapper.
    separator: the inner command follows this word (`--`); none: it follows the
        wrapper's options, each `--opt=value`, `-Xvalue`, an option in `bare`
        alone, or any other option with the next word as its value (with `valued`
        set: an option in it with the next word, any other alone).
    assignments: `NAME=value` words before the inner command are its environment.
    starts: the processes the wrapper starts itself, each running the command, when that command
        is a program with no count of its own (`srun -N 2 --ntasks-per-node 8 python train.py`:
        16; `srun -N 2 torchrun --nnodes 2 --nproc_per_node 8 ...`: torchrun's 16): a Launcher
        whose counts read the wrapper's options.
    """

    name: str
    commands: tuple[str, ...]
    subcommands: tuple[str, ...] = ()
    separator: str = ""
    bare: frozenset = frozenset()
    valued: frozenset = frozenset()  # when set, the only options that take a value (the rest are alone)
    assignments: bool = False
    starts: Optional[Launcher] = None


@lean_dataclass(frozen=True)
class TaskFile:
    """A YAML file that is a launch itself, not a config: a job description whose shell script is
    one key's block (`run: |`), run with variables the file sets. The engine reads the script as a
    launch script where it stands in the file (lines and columns are the file's), with
    `environment(root)` ({name: shell Word}) as its exported environment, in the folder
    `folder(root)` names (relative to the file's; None: the file's own), and with the remote paths
    `mounts(root)` maps ({path on the machine: local path, relative to the file}) read from the project.

    script: the key holding the script; beside: top-level keys one of which stands beside it in
        such a file (what tells it from a config that has a key of that name).
    """

    script: str
    beside: tuple[str, ...]
    environment: Callable
    folder: Optional[Callable] = None
    mounts: Optional[Callable] = None

    def may_be(self, raw: bytes) -> bool:
        """Whether a file's bytes may be such a file: its script key and one beside it start lines (block
        YAML's top-level keys), asked before anything is parsed."""
        import re

        keys = b"|".join(re.escape(key.encode()) for key in self.beside)
        return re.search(rb"(?m)^%s:" % re.escape(self.script.encode()), raw) is not None \
            and re.search(rb"(?m)^(?:%s):" % keys, raw) is not None

    def matches(self, root: object) -> bool:
        """Whether a document's root mapping is such a file (its script a string)."""
        items = getattr(root, "items", None)
        node = items.get(self.script) if isinstance(items, dict) else None
        return isinstance(getattr(node, "value", None), str) and any(key in items for key in self.beside)  # type: ignore[operator]  # items: a dict when node is set


# Packages whose import means a program may start processes of its own (Lightning, torch.multiprocessing,
# a launcher's API, a subprocess, Ray, submitit): no runtime then knows it is one process.
STARTS_PROCESSES = ("lightning", "pytorch_lightning", "torch.multiprocessing", "multiprocessing",
                    "torch.distributed.run", "torch.distributed.launcher", "torch.distributed.elastic",
                    "deepspeed.launcher", "subprocess", "ray", "submitit")
# The variables a launcher sets for each process it starts: any of them given to a plain line may say W.
LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK")


@lean_dataclass(frozen=True)
class OneProcess:
    """A runtime that finds one process in a program a plain interpreter runs (`python train.py`,
    no launcher, no scheduler): it reads the variables a launcher sets, and without them discovers
    the processes in a way that, outside a launcher's or a scheduler's job, finds only itself. A config
    of its framework that such a line links (Launcher.linked: `--deepspeed_config ds.json`) then runs
    with W = 1 (lint/launching/lines.py `one_process` says when the line, its scripts and its program allow it).

    env: the variables a launcher sets; any of them given to the line (prefixed, exported, a caller's)
        leaves W unknown.
    drives: packages one of which the program's code imports (in view): it hands the config to this runtime.
    starts: packages whose import means the program may start processes of its own (W unknown).
    why: what the finding and `explain` say of W = 1; source: the upstream lines it rests on.
    """

    env: tuple[str, ...]
    drives: tuple[str, ...]
    starts: tuple[str, ...]
    why: str
    source: str


@lean_dataclass(frozen=True)
class Framework:
    """One framework: its adapter, the files it reads, the launchers it owns.

    name: the plan's framework, shown in findings; formats: source formats its
        configs are in; markers: bytes one of which any of its configs contains.
    order: among adapters reading one format the lowest tries first; specific
        schemas come first, generic TrainingArguments (hf) last.
    plan: `plan(document, outside) -> TrainingPlan | None`, the adapter (None when it
        does not recognise the document); left out, the registry takes the module's
        `plan` function, so FRAMEWORK can stand at the top of the module.
    launchers: its entry points; their inline settings carry `launched_by=name`.
    distribution: how to find which release of it a project runs (lint/versions.py:
        its PyPI names, its package folder, its version file), for the rules whose
        verdict depends on the release.
    task: its job files, which launch training rather than configure it (a TaskFile).
    interpolation: how its configs' values refer to each other (OMEGACONF: the program reads its
        YAML through OmegaConf), resolved before `plan` reads the document (with a launch
        line's overrides applied, as OmegaConf resolves at access); HYDRA_COMPOSED: composed from
        their `defaults:` lists first (a launch line's settings over the config it names);
        "": values are as written.
    configs: the framework's own Hydra config folders, relative to the folder holding a copy of
        it (verl/trainer/config), searched last for a config a `defaults:` list names.
    config_names: the configs those folders hold (`ppo_trainer`): a project without a copy of the
        framework that names one composes it from the installed package, out of view (said nothing of).
    hands: for a launcher's own config file this framework reads (Launcher.config_file), what it
        gives the program the launch runs: `hands(plan, options) -> dict` of Outside fields, the
        plan the adapter's of that file, `options` the launcher's own ({option: Word}).
    one_process: its runtime finds one process under a plain interpreter (a OneProcess), for the
        configs of it a `python train.py` line links.
    own_loader: a pattern (bytes, multiline) of the code that defines a loader of its config files
        of a project's own (TorchTitan's: a `class JobConfig`): a project holding it outside a copy
        of the framework reads its configs itself, and key-set rules are silent (lint/own_loader.py).

    The rest of a framework sits beside its spec in the same module, where it is used:
    its defaults in the typed settings its adapter fills (each with the upstream line
    that sets it), its key sets in a generated `<framework>_keys.py` that names the
    release it was read from (tools/generate_*_keys.py).
    """

    name: str
    formats: tuple[str, ...]
    markers: tuple[bytes, ...]
    order: int
    plan: Optional[Callable] = None
    launchers: tuple[Launcher, ...] = ()
    distribution: Optional[Distribution] = None
    task: Optional[TaskFile] = None
    interpolation: str = ""
    hands: Optional[Callable] = None
    configs: tuple = ()
    config_names: tuple = ()
    one_process: Optional[OneProcess] = None
    own_loader: bytes = b""
