"""Launch lines: which command starts training, on how many GPUs, with which
config file and which overrides.

An interpreter of launcher specs (`frameworks/spec.py`), not code per launcher:
it knows shell words, environment prefixes, `--opt value` options, `python -m`,
a generic launcher's program and Hydra overrides; each framework declares the
commands it owns. A wrapper (`ray job submit ... --`, `srun`, `env`; spec.Wrapper)
is looked through to the command it runs. The world size is the product of the
process and node counts when both are known.
"""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Callable
from fnmatch import fnmatchcase

from ..document import Document, LaunchDocument, Mapping, Scalar, Sequence, Span, Unknown
from ..frameworks.facts import whole_number
from ..frameworks.spec import ASSIGN, FLAGS, HYDRA, Count, Launcher
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import field, lean_dataclass, replace
from ..plan import Fact, Origin
from ..sources.shell import UNKNOWN, WRITTEN_KEY, Command, ShellDocument, Truncation, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, TypeGuard

CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py")


@functools.cache
def _wrappers() -> tuple:
    """The registered wrappers (read on first use: framework modules use this module's helpers)."""
    from ..frameworks.launchers import WRAPPERS

    return WRAPPERS


@functools.cache
def markers() -> tuple:
    """Byte strings one of which a launch script contains (the engine skips other scripts); `.sh`:
    a script that runs another, which may launch."""
    from ..frameworks import launcher_globs

    return (b"python", b".sh") + tuple(dict.fromkeys(marker for entry in launcher_globs() for marker in entry[5]))


@lean_dataclass
class Launch:
    launcher: str
    command: Command
    world_size: Optional[Fact] = None
    world_size_given: bool = False  # every factor of W written on the line (none assumed from a default)
    # W is in a file the line names (Count.file): (the Word naming it, the key), for the engine to read.
    world_size_file: Optional[tuple[Any, str]] = None
    configs: list = field(default_factory=list)  # Words naming config files
    # Those of them taken for a config by their file name only (standing alone after other arguments,
    # or the value of a flag not called a config's): a missing one may be a data file or another
    # flag's (`--in-files a.json b.json`, `--train_file train.json`), so its absence is not said.
    guessed: list = field(default_factory=list)
    linked: list = field(default_factory=list)  # Words naming files linted as written (Launcher.linked)
    overrides: list = field(default_factory=list)  # (key path tuple, Word value, Word key)
    framework: Optional[str] = None  # the framework the inline settings belong to, when they are a whole config
    config_name: Optional[Word] = None  # Hydra's --config-name: the primary config the overrides apply to
    config_path: Optional[Word] = None  # Hydra's --config-path: the folder it is in
    # The entry point that matched: a module (`python -m x.y`, `deepspeed --module x.y`) or a script as
    # written; None for a command (`swift sft`) or a program no entry point reads.
    entry: Optional[str] = None
    # W is the processes on the hosts of a hostfile the line names (spec.Hosts), for the engine to read.
    hosts: Optional[HostRequest] = None
    # The launcher's own config file (Launcher.config_file) and options, for the engine to read what
    # that file hands the program (Framework.hands).
    launcher_config: Optional[Word] = None
    launcher_options: dict = field(default_factory=dict)
    # A config picked by name from a module (spec.Select), for the engine to read.
    selected: Optional[Selection] = None
    # The project's own program as written (`scripts.train_fold`) that calls `entry`'s main as it is:
    # the line is read as that entry point's (own_trainer.handed_over).
    handed_over: Optional[str] = None
    # The processes the line starts on each machine, where written (not a default), and the devices
    # CUDA_VISIBLE_DEVICES lists to them (`_per_node`).
    per_node: Optional[Fact] = None
    visible: Optional[Fact] = None
    # Where per_node holds only if the launcher's config file gives one machine: (the Word naming it, the key).
    machines_file: Optional[tuple[Any, str]] = None
    # A plain interpreter runs the program's script itself (`python train.py`, no launcher or wrapper
    # that starts processes): one process, unless its environment or its program say otherwise
    # (lint/one_process.py judges that for the runtime of each config it links).
    alone: bool = False


@lean_dataclass
class Selection:
    """The module and config name a launch line picks (spec.Select), each a Word; `given`: named
    on the line or by its variables (not only the launcher's defaults)."""

    module: Word
    name: Word
    select: object  # the spec.Select
    owner: Optional[str]
    given: bool


@lean_dataclass
class HostRequest:
    """What a launch line asks of the hosts it names (spec.Hosts): an MPI-style hostfile (None:
    the local machine alone, whose devices are not known), a filter, the first `nodes` hosts,
    `per_node` processes on each."""

    file: Optional[Word]
    local: str
    include: str = ""
    exclude: str = ""
    nodes: Optional[int] = None
    per_node: Optional[int] = None
    words: tuple = ()  # the options as written, for the detail

    def count(self, text: Optional[str]) -> Optional[tuple]:
        """(processes, span of the first host used or None, detail), or None when the hostfile
        is not one the launcher accepts or the selection is not known."""
        pool, lines = ({self.local: None}, {}) if text is None else _hostfile(text)
        if not pool:
            return None
        used = _select(pool, self.include, self.exclude, self.nodes, self.per_node)
        if used is None:
            return None
        hosts = [host for host, _ in used]
        total = sum(count for _, count in used)
        shown = " ".join(self.words)
        where = f" of {self.file.value}" if self.file is not None else ""
        return total, lines.get(hosts[0]), f"{shown}: {len(hosts)} host{'s' if len(hosts) > 1 else ''}{where}, " \
            + " + ".join(str(count) for _, count in used)


_PYTHON = LazyPattern(r"(^|/)python(3(\.\d+)?)?$")
_MODULE_FLAGS = ("-m", "--module")  # the program of a generic launcher is a module, not a script
_HYDRA_META = {("config-name",), ("config-path",), ("cn",), ("cp",)}
_HYDRA_NAME = {("config-name",), ("cn",)}
_HYDRA_PATH = {("config-path",), ("cp",)}
_ENV_ASSIGNMENT = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*=")


def launches(doc: ShellDocument) -> list:
    found = []
    for command in doc.commands:
        launch = launch_of(command, doc.path)
        if launch is not None:
            found.append(launch)
    return found


def _find(kind: str, name: str, args: tuple | list = (), under: str = "", fallback: bool = True) -> Optional[tuple]:
    """(Launcher, owning framework or None) whose `kind` globs (commands, modules, scripts) match
    `name`. A glob that starts with `*` (any script, any module) is a fallback: it is tried only
    after every launcher's specific globs, whatever the order of registration. A launcher that
    `requires` flags matches only when `args` give one of them; one that names the launchers it
    runs `under`, only as the program of one of them. `fallback`: False tries the specific globs alone."""
    from ..frameworks import launcher_at, launcher_globs

    given = None
    place = ("commands", "modules", "scripts").index(kind) + 2  # its globs in a launcher_globs entry
    for wide in (False, True)[:1 + fallback]:
        for entry in launcher_globs():
            if not any(glob.startswith("*") == wide and _matches(kind, name, glob) for glob in entry[place]):
                continue
            requires, runs_under = entry[6], entry[7]
            if runs_under and under not in runs_under:
                continue
            if requires:
                given = given if given is not None else {
                    str(w.value).partition("=")[0] for w in args if w.known and str(w.value).startswith("-")}
                if not given & set(requires):
                    continue
            return launcher_at(entry[0], entry[1])  # imported only now: it is the command's
    return None


def _fits(name: str, glob: str) -> bool:
    """fnmatchcase, without compiling a pattern for a glob with no wildcard (most launchers' names): a
    launch line is tried against every launcher's globs."""
    return fnmatchcase(name, glob) if "*" in glob or "?" in glob or "[" in glob else name == glob


def _matches(kind: str, name: str, glob: str) -> bool:
    """A script glob with a `/` matches the end of the script's path (`tool/cli/*.py` matches
    `./tool/cli/sft.py`), any other its base name; commands and modules match whole."""
    if kind != "scripts":
        return _fits(name, glob)
    if "/" not in glob:
        return _fits(os.path.basename(name), glob)
    path = name.replace("\\", "/")
    return _fits(path, glob) or _fits(path, "*/" + glob)


def launch_of(command: Command, script: str, handover: Optional[Callable[[str, bool], tuple]] = None) -> Optional[Launch]:
    """The launch one command is, if a registered launcher recognises it (a command a
    framework rebuilt can be read this way too); through wrappers to the command they run.
    `handover(program, is_module)`: the modules whose main the project's own program (one no entry
    point owns) calls as it is, reading the line as they would (own_trainer.handed_over)."""
    words = command.words
    if not words or not words[0].known:
        return None
    start, env = 0, dict(command.env)
    starter = None  # the innermost wrapper that starts processes itself, with its options
    while True:  # `srun ... env A=1 torchrun ...`: a loop, as wrappers may nest deep
        options: dict = {}
        inner = _unwrapped(words, start, env, options)
        if inner is None:
            break
        if inner >= len(words) or not words[inner].known:
            return None  # the wrapper runs nothing, or a command not known
        if options.pop("", None) is not None:
            starter = (options, dict(env))
        start = inner
    if start:
        command = Command(words[start:], env, command.span)  # the span of the whole line, wrapper included
        words = command.words
    first = str(words[0].value)
    entry = handed = None
    interpreted = _interpreted(words, 1) if _PYTHON.search(first) else None
    if interpreted is not None and (named := _program_name(interpreted[1])) is not None:
        module, name, at = interpreted
        args = words[at:]
        found, named, handed = _entry_point(handover, named, module, args, name.known)
        entry = named if name.known else None  # its file is not in view: only its name is known
    elif _PYTHON.search(first):
        found, args = None, words[1:]  # `python -c CODE`, `python -` (stdin): no program file is named
    else:
        found, args = _find("commands", os.path.basename(first)), words[1:]
        if found is not None and args and found[0].subcommands:
            word = str(args[0].value) if args[0].known else ""
            if any(_fits(word, glob) for glob in found[0].subcommands):
                args = args[1:]  # the sub-command: sft, train, launch...
    if found is None or entry is not None:
        # `python mason.py --gpus 8 -- torchrun ...`: a submitter's `--` line is the launch, whatever reads its flags.
        submitted = _submitted(command, script)
        if submitted is not None or found is None:
            return submitted
    launcher, owner = found
    launch = Launch(launcher.name, command, entry=entry, handed_over=handed)
    if not launcher.program:
        _settings(launch, launcher, owner, args)
        given = {keys: value for keys, value, _ in launch.overrides}
        _world_size(launch, launcher, {}, command, script, given, args)
        launch.alone = starter is None and interpreted is not None and not interpreted[0] \
            and launch.world_size is None and _counts_nothing(launcher)
        if starter is not None and _counts_nothing(launcher):
            # `srun -N 2 --ntasks-per-node 8 python train.py`: each task the wrapper starts is one process.
            wrapper_options, wrapper_env = starter
            spec = wrapper_options.pop(None)
            launch.launcher = spec.name
            launch.world_size, launch.world_size_given = None, False
            if _OPAQUE not in wrapper_options:  # `srun $SRUN_ARGS python train.py`: its counts may be in them
                _world_size(launch, spec, wrapper_options, Command(words, wrapper_env, command.span), script, {}, [])
        return launch
    options, program, module = _split_options(args, launcher)
    if not module and program and program[0].known and _PYTHON.search(str(program[0].value)):
        # `mpirun -np 8 python train.py`, `srun ... python -m pkg.train`: the interpreter runs the program.
        interpreted = _interpreted(program, 1)
        if interpreted is None:
            program = []  # no program file named (`python -c CODE`): nothing of it is read
        else:
            module, name, at = interpreted
            program = [name] + program[at:]
    _world_size(launch, launcher, options, command, script, {}, [])
    named = next((options[f] for f in launcher.config_file if f in options), None)
    if isinstance(named, Word) and named.known:
        launch.launcher_config, launch.launcher_options = named, options
    # The program's own entry point reads the rest of the line, else the launcher's defaults do.
    matched = None
    name = _program_name(program[0]) if program else None
    if name is not None:
        matched, name, launch.handed_over = _entry_point(handover, name, module, program[1:], program[0].known,
                                                         launcher.name)
        launch.entry = name if matched and program[0].known else None
    spec, owner = matched or (launcher, None)
    _settings(launch, spec, owner, program[1:])
    if matched is None and launch.configs:
        # A program no framework owns (`deepspeed train.py --train_batch_size 3 --deepspeed_config ds.json`):
        # its flags are its own argparse's, never written into the files it names; those are linted as
        # written, under this launch's W.
        launch.linked, launch.configs, launch.overrides = launch.linked + launch.configs, [], []
    return launch


def _entry_point(handover, name: str, module, args, known: bool, under: str = "") -> tuple:
    """(the entry point that reads the program's line or None, the program it is taken for, the program as
    written where it hands over, else None). An entry point's own glob first; then, for a program written
    out, the module whose main it calls as it is (`handover`), where that module is an entry point's by its
    own glob; then the fallback globs (any script, any module)."""
    kind = "modules" if module else "scripts"
    found = _find(kind, name, args, under=under, fallback=False)
    if found is not None:
        return found, name, None
    for target in handover(name, bool(module)) if handover is not None and known else ():
        found = _find("modules", target, args, under=under, fallback=False)
        if found is not None:
            return found, target, name
    return _find(kind, name, args, under=under), name, None


def _program_name(word: Word) -> Optional[str]:
    """The program a word names: its value, or for a path whose folder is not known here
    (`${MEGATRON_PATH}/pretrain_gpt.py`, `$(cd "$X"; pwd)/train.py`) the script's name as written,
    by which its entry point is known (its file is not in view). None when the name is not written."""
    if word.known:
        return str(word.value)
    folder, slash, name = word.raw.strip("'\"").rpartition("/")
    return name if slash and folder and _WRITTEN_SCRIPT.fullmatch(name) else None


_WRITTEN_SCRIPT = LazyPattern(r"[A-Za-z0-9_.+-]+\.py")


# Words that join the commands of a line another machine's shell runs (`-- source env.sh \\&\\& python ...`).
_REMOTE_JOINS = frozenset({"&&", "||", ";", "&"})


def _submitted(command: Command, script: str) -> Optional[Launch]:
    """The launch a job submitter no spec names runs after its `--` (`python mason.py --gpus 8 --
    torchrun ...`, `gantry run ... -- accelerate launch ...`): of the commands of that line, which may
    be joined by quoted `&&` or `;` for the remote shell, the last that launches. None without a `--`."""
    words = command.words
    at = next((i for i in range(1, len(words)) if words[i].known and words[i].value == "--"), None)
    if at is None:
        return None
    segments: list = [[]]
    for word in words[at + 1:]:
        if word.known and word.value in _REMOTE_JOINS:
            segments.append([])
        else:
            segments[-1].append(word)
    for segment in reversed(segments):
        launch = launch_of(Command(segment, command.env, command.span), script) if segment else None
        if launch is not None:
            return launch
    return None


# CPython's own options before the program (Python/getopt.c SHORT_OPTS "bBc:dEhiIJm:OPqRsStuvVW:xX:?", its
# one long option with a value, and the help/version ones that exit). A short option with a value takes
# the rest of its word or the next word (`-Wignore`, `-W ignore`, `-uW ignore`); `-c` and `-m` end the options.
_PYTHON_ALONE = frozenset("bBdEiIOPqRsStuvx")
_PYTHON_VALUED = frozenset("WX")
_PYTHON_EXITS = frozenset({"--help", "--version", "--help-env", "--help-xoptions", "--help-all"})


def _interpreted(words: list, index: int) -> Optional[tuple]:
    """The program `python [options] program args...` runs, from words[index] past the interpreter:
    (whether it is a module (`-m`), the Word naming it, the index of its first argument); a word not
    known where the options are (`python $SCRIPT`, `python $FLAGS x.py`) stands for the program, not
    known. None when the line names no program file: `-c CODE`, `-` (stdin), nothing, an option that
    only prints (`-V`, `--help`) or that CPython refuses."""
    while index < len(words):
        word = words[index]
        text = word.value if word.known and isinstance(word.value, str) else None
        if text is None:
            break
        if text in _PYTHON_EXITS:
            return None
        if text == "--":  # the options end: the next word is the file, whatever it starts with
            index += 1
            break
        if text == "-" or not text.startswith("-"):
            break
        if text == "--check-hash-based-pycs":
            index += 2
            continue
        if text.startswith("--"):
            return None  # CPython refuses any other long option
        index += 1
        for position, letter in enumerate(text[1:], 2):
            if letter in _PYTHON_ALONE:
                continue
            if letter not in _PYTHON_VALUED and letter != "m":
                return None  # -c CODE, -h, -V, -?, or a letter CPython refuses
            value = text[position:]
            if letter == "m":
                if value:  # `-mpkg.train`
                    return True, Word(value, _value_span(word, value), word.raw), index
                return (True, words[index], index + 1) if index < len(words) else None
            index += 0 if value else 1  # the value: the rest of this word, else the next word
            break
    if index >= len(words) or words[index].value == "-":
        return None
    return False, words[index], index + 1


def _unwrapped(words: list, start: int, env: dict, options: dict) -> Optional[int]:
    """Where the command starts that the wrapper at words[start] runs (spec.Wrapper), its
    assignments added to `env`, its options to `options` (with, for a wrapper that starts
    processes itself, its Launcher under None and a mark under ""); None when words[start] is no wrapper."""
    name = os.path.basename(str(words[start].value))
    for wrapper in _wrappers():
        index = start + 1 + len(wrapper.subcommands)
        if not any(_fits(name, glob) for glob in wrapper.commands) \
                or tuple(w.value for w in words[start + 1:index]) != wrapper.subcommands:
            continue
        if wrapper.starts is not None:
            options.update({None: wrapper.starts, "": True})
        if wrapper.separator:
            return next((i + 1 for i in range(index, len(words)) if words[i].value == wrapper.separator), len(words))
        while index < len(words):
            word = words[index]
            text = word.value if word.known and isinstance(word.value, str) else ""
            if not word.known and index + 1 < len(words):
                opaque = _opaque_option(word, words[index + 1])
                if opaque is not None:  # `--nodes=$NNODES`, `-N $N`, `$SRUN_ARGS`: options whose values are not known
                    key, value, taken = opaque
                    options[key] = value
                    index += taken
                    continue
            if wrapper.assignments and _ENV_ASSIGNMENT.match(text):
                key, value = text.split("=", 1)
                env[key] = Word(value, _value_span(word, value), word.raw)
                index += 1
            elif text == "--":
                return index + 1
            elif not text.startswith("-"):
                break  # the command (or a word not known: then no launch is read)
            elif "=" in text:
                key, value = text.split("=", 1)  # --opt=value
                options[key] = Word(value, _value_span(word, value), word.raw)
                index += 1
            elif text in wrapper.bare or (wrapper.valued and text not in wrapper.valued):
                index += 1
            elif not text.startswith("--") and len(text) > 2:
                options[text[:2]] = Word(text[2:], _value_span(word, text[2:]), word.raw)  # -N2
                index += 1
            else:
                if index + 1 < len(words):
                    options[text] = words[index + 1]  # --opt value
                index += 2
        return index
    return None


# The options key of words a wrapper is given whose text is not known (`srun $SRUN_ARGS cmd`): any count may be in them.
_OPAQUE = "$"


def _opaque_option(word: Word, following: Word) -> Optional[tuple]:
    """(option, value Word, words taken) of a wrapper's option word not known: `--nodes=$N` and `-N$N` are
    that option with a value not known, `$SRUN_ARGS` options of any kind (before a command: an unquoted
    variable); None for any other word (a command not known: no launch is read)."""
    raw = word.raw
    if raw.startswith("-"):
        name, eq, _ = raw.partition("=")
        if eq:
            return name, word, 1
        return (raw[:2], word, 1) if not raw.startswith("--") and len(raw) > 2 else None
    if raw.startswith("$") and following.known:
        return _OPAQUE, word, 1
    return None


def _counts_nothing(launcher: Launcher) -> bool:
    """A program's entry point that gives no process count of its own (a script run by python)."""
    return launcher.nproc == Count() and launcher.nnodes == Count() and launcher.tasks == Count() \
        and launcher.hosts is None and not launcher.program


def _settings(launch: Launch, spec: Launcher, owner: Optional[str], args: list) -> None:
    """The config files, overrides and Hydra config name among an entry point's arguments."""
    args = args[spec.skip:]
    launch.framework = owner if spec.inline else None
    if spec.selects is not None:
        launch.selected, args = _selection(args, spec.selects, launch.command, owner)
    if spec.flags == HYDRA:
        flags = _flags(args, ASSIGN)
        launch.overrides = [flag for flag in flags if flag[0] not in _HYDRA_META]
        named = [value for keys, value, _ in flags if keys in _HYDRA_NAME]
        launch.config_name = named[-1] if named else None
        folders = [(value, key) for keys, value, key in flags if keys in _HYDRA_PATH]
        launch.config_path = _from_program(*folders[-1], launch.entry) if folders else None
    elif spec.config_files:
        launch.configs, launch.overrides, launch.linked, launch.guessed = _configs_and_overrides(args, spec)
    else:
        launch.overrides = _flags(args, spec.flags)
    if launch.entry is not None:
        launch.overrides = ProgramOverrides(launch.overrides, launch.entry)


class ProgramOverrides(list):
    """A launch line's overrides and the program that reads them with the configs the line names:
    apply_overrides tells each such config which program reads it (Document.program)."""

    def __init__(self, items: list, entry: str):
        super().__init__(items)
        self.entry = entry


def _from_program(folder: Word, key: Word, entry: Optional[str]) -> Word:
    """Hydra's `--config-path` as Hydra reads a relative one, from the program's folder
    (hydra/_internal/utils.py compute_search_path_dir): a path from the working folder
    (`"$(pwd)/config"`, Word.working) made relative to the program's, which is in that folder too
    (`src/train.py`; `-m pkg.trainer.main`: pkg/trainer/). Not known when the program is not."""
    if not (folder.known and (folder.working or key.working) is not None):
        return folder
    if entry is None or entry.startswith("/"):
        return Word(UNKNOWN, folder.span, folder.raw)
    program = entry if entry.endswith(".py") else entry.replace(".", "/") + ".py"
    return Word(posixpath.relpath(str(folder.value), posixpath.dirname(program) or "."), folder.span, folder.raw)


def _selection(args: list, select, command: Command, owner: Optional[str]) -> tuple:
    """(Selection or None, the other arguments): the module and config name from the flags (the
    last of each wins, as a loop over argv keeps it), else the command's variables, else the
    defaults."""
    found: dict = {}
    rest = []
    index = 0
    while index < len(args):
        word = args[index]
        text = word.value if word.known else None
        slot = None
        for name, flags in (("module", select.module_flags), ("name", select.name_flags)):
            if not isinstance(text, str):
                break
            if text in flags and index + 1 < len(args):
                slot, value = name, args[index + 1]
                index += 1
            elif any(text.startswith(flag + "=") for flag in flags):
                value_text = text.partition("=")[2]
                slot, value = name, Word(value_text, _value_span(word, value_text), word.raw)
            if slot is not None:
                found[slot] = value
                break
        if slot is None:
            rest.append(word)
        index += 1
    given = bool(found)
    for name, names, default in (("module", select.module_env, select.module_default),
                                 ("name", select.name_env, select.name_default)):
        if name in found:
            continue
        variable = next((command.env[n] for n in names if n in command.env), None)
        if variable is not None and hasattr(variable, "span"):
            found[name], given = variable, True
        elif default:
            found[name] = Word(default, command.span, default)
    if "module" not in found or "name" not in found:
        return None, rest
    return Selection(found["module"], found["name"], select, owner, given), rest


def _split_options(args: list, launcher: Launcher) -> tuple:
    """The launcher's own `--opt value` words, the program with its arguments, and
    whether the program is a module (`-m module`, `--module module`)."""
    options: dict = {}
    index = 0
    while index < len(args):
        word = args[index]
        text = word.value if word.known else ""
        if not word.known and word.raw.startswith("--") and "=" in word.raw:
            options[word.raw.partition("=")[0]] = word  # `--nnodes=$NNODES`: the option, its value not known
            index += 1
            continue
        if not word.known and word.raw.startswith("$") and _program_name(word) is None \
                and index + 1 < len(args) and args[index + 1].known \
                and (str(args[index + 1].value).startswith("-") or str(args[index + 1].value).endswith(".py")):
            # `accelerate launch $EXTRA_ARGS --num_processes 8 train.py`, `torchrun $DISTRIBUTED_ARGS train.py`:
            # options of any kind, then the line's own options or its program.
            options[_OPAQUE] = word
            index += 1
            continue
        if not isinstance(text, str) or not text.startswith("-") or text == "-m":
            if not word.known and word.raw.startswith("$") and _program_name(word) is None:
                options[_OPAQUE] = word  # `torchrun $DISTRIBUTED_ARGS train.py`: any option may be in it
            break
        if "=" in text:
            key, value = text.split("=", 1)
            options[key] = Word(value, _value_span(word, value), word.raw)
            index += 1
        elif text in launcher.bare or index + 1 >= len(args):
            options[text] = Word("true", word.span, word.raw)
            index += 1
        else:
            options[text] = args[index + 1]
            index += 2
    module = any(flag in options for flag in _MODULE_FLAGS)
    if index < len(args) and args[index].value == "-m":
        index += 1
        module = True
    return options, args[index:], module


def _world_size(launch: Launch, launcher: Launcher, options: dict, command: Command, script: str, given: dict,
                args: list) -> None:
    """launch.world_size (None when unknown) and whether the line writes every factor of it."""
    if launcher.hosts is not None and _on_hosts(launch, launcher, options, command.env, script):
        return
    tasks = launcher.tasks
    # All processes at once: its options, else its environment unless the options give the product.
    found = _count(options, tasks.flags) or (
        None if _count(options, launcher.nproc.flags) and _count(options, launcher.nnodes.flags)
        else _count(command.env, tasks.env))
    if found is not None:
        if found[0] is not UNKNOWN:
            span = found[1] or command.span
            launch.world_size = Fact(found[0], "world size", span.elsewhere(script), Origin.LAUNCH, detail=found[2])
            launch.world_size_given = True
        return
    nproc = _factor(launcher.nproc, options, command.env, given, args)
    nnodes = None if launcher.total else _factor(launcher.nnodes, options, command.env, given, args)
    _per_node(launch, launcher, nproc, options, command.env)
    if nproc is None and launcher.total and launcher.nproc.file:
        word = next((options[f] for f in launcher.nproc.file if f in options), None)
        if isinstance(word, Word) and word.known:
            launch.world_size_file = (word, launcher.nproc.file_key)
    if nproc is None or nproc[0] is UNKNOWN or (nnodes is not None and nnodes[0] is UNKNOWN):
        return
    nodes = nnodes[0] if nnodes else 1
    span = nproc[1] or (nnodes[1] if nnodes else None) or command.span
    where = nproc[2] + (f" x {nnodes[2]}" if nnodes else "")
    launch.world_size = Fact(nproc[0] * nodes, "world size", span.elsewhere(script), Origin.LAUNCH, detail=where)
    launch.world_size_given = nproc[1] is not None and (nnodes is None or nnodes[1] is not None)


def _per_node(launch: Launch, launcher: Launcher, nproc: Optional[tuple], options: dict, env: dict) -> None:
    """launch.per_node and launch.visible: the processes the line starts on each machine, where its flags or
    environment write them (a launcher whose count is the total, over its machines given as `nnodes` flags,
    one by default), and the devices CUDA_VISIBLE_DEVICES lists to them; their spans as the words have them
    (a path: another file's words, a caller's argument or a sourced file's variable)."""
    if nproc is None or nproc[0] is UNKNOWN or nproc[1] is None:
        return
    count = nproc[0]
    if launcher.total:
        if not launcher.nnodes.flags:
            return  # the total over machines that no flag names: not known per machine
        machines = _count(options, launcher.nnodes.flags)
        if machines is None:
            # Not on the line: the launcher's config file says (read by who asks), or one the line does not
            # name (`accelerate launch` reads the user's default config): not known.
            named = next((options[f] for f in launcher.nnodes.file if f in options), None)
            if not isinstance(named, Word) or not named.known:
                return
            launch.machines_file = (named, launcher.nnodes.file_key)
        elif machines[0] != 1:
            return
    visible = _devices(env, ("CUDA_VISIBLE_DEVICES",))
    launch.per_node = Fact(count, "processes per machine", nproc[1], Origin.LAUNCH, detail=nproc[2])
    if visible is not None and visible[0] is not UNKNOWN and visible[1] is not None:
        launch.visible = Fact(visible[0], "visible devices", visible[1], Origin.LAUNCH, detail=visible[2])


def _on_hosts(launch: Launch, launcher: Launcher, options: dict, env: dict, script: str) -> bool:
    """W from the options that name hosts (spec.Hosts), the hostfile left for the engine to read
    (launch.hosts); False when the line names none, and W is the product of the counts."""
    spec = launcher.hosts
    if spec is None:
        return False
    picked = {name: next(((option, options[option]) for option in names if option in options), None)
              for name, names in (("file", spec.file), ("include", spec.include), ("exclude", spec.exclude))}
    nproc, nnodes = _count(options, launcher.nproc.flags), _count(options, launcher.nnodes.flags)
    if not any(picked.values()):
        visible = _count_free(env, spec.visible)
        # Without options naming hosts or counts the runner takes the visible devices as its include list.
        if visible is None or nproc is not None or (nnodes is not None and nnodes[0] != 1):
            return False
        picked["include"] = (visible[0], Word(f"{spec.local}:{visible[1].value}" if visible[1].known else UNKNOWN,
                                              visible[1].span, visible[1].raw))
        nnodes = None
    given = [word for _, word in filter(None, picked.values())]
    counts = [found for found in (nproc, nnodes) if found is not None]
    if not all(word.known and isinstance(word.value, str) for word in given) \
            or any(value is UNKNOWN for value, _, _ in counts):
        return True  # W unknown
    text = {name: found[1].value if found else "" for name, found in picked.items()}
    request = HostRequest(
        picked["file"][1] if picked["file"] else None, spec.local, text["include"], text["exclude"],
        nnodes[0] if nnodes else None, nproc[0] if nproc else None,
        tuple(f"{option} {word.value}" for option, word in filter(None, picked.values()))
        + tuple(description for _, _, description in counts))
    if request.file is not None:
        launch.hosts = request
        return True
    counted = request.count(None)
    named = picked["include"] or picked["exclude"]  # a list of hosts: there is no hostfile
    if counted is not None and named is not None:
        span = named[1].span
        launch.world_size = Fact(counted[0], "world size", span.elsewhere(script), Origin.LAUNCH, detail=counted[2])
        launch.world_size_given = True
    return True


def _count_free(env: dict, names: tuple) -> Optional[tuple]:
    """(name, Word) of the first of `names` in the environment."""
    return next(((name, env[name]) for name in names if isinstance(env.get(name), Word)), None)


def _hostfile(text: str) -> tuple:
    """({host: slots}, {host: line}) of an MPI-style hostfile (`worker-1 slots=8`, `#` comments), or
    ({}, {}) when the launcher would refuse it: a line of another shape, a host twice, no host."""
    pool: dict = {}
    lines: dict = {}
    for number, line in enumerate(text.split("\n")[:_MAX_HOSTS], 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _HOST_LINE.match(line)
        if not match or match.group(1) in pool or len(match.group(2)) > 6:
            return {}, {}
        pool[match.group(1)] = int(match.group(2))
        lines[match.group(1)] = Span(number, 1, number, len(line) + 1)
    return pool, lines


_HOST_LINE = LazyPattern(r"(\S+)\s+slots=(\d+)")
_MAX_HOSTS = 100_000  # lines of a hostfile read


def _select(pool: dict, include: str, exclude: str, nodes: Optional[int], per_node: Optional[int]) -> Optional[list]:
    """[(host, processes)] the launcher starts on `pool` ({host: slots, None when not known}), or
    None when it is not known or the launcher would refuse the options."""
    if (include and exclude) or ((include or exclude) and (nodes is not None or per_node is not None)):
        return None  # refused: the filters exclude each other and the counts
    active = {host: None if slots is None else set(range(slots)) for host, slots in pool.items()}
    if include or exclude:
        listed = _node_list(include or exclude)
        if listed is None or any(host not in active for host in listed):
            return None  # a host the pool does not have: refused
        for host, slots in listed.items():
            known = active[host]
            if (include and not slots) or (not include and known is None) \
                    or (known is not None and not slots <= known):
                # A whole host included: all its slots before one release and none after (runner.py
                # parse_inclusion_exclusion); a slot the hostfile does not give it: refused.
                return None
            active[host] = slots if include else known - slots if slots else set()
        if include:
            active = {host: slots for host, slots in active.items() if host in listed}
        active = {host: slots for host, slots in active.items() if slots}
    chosen = list(active.items())[:nodes] if nodes else list(active.items())
    if per_node:
        chosen = [(host, set(range(per_node))) for host, _ in chosen]
    if not chosen or any(slots is None for _, slots in chosen):
        return None
    return [(host, len(slots)) for host, slots in chosen if slots is not None]


def _node_list(text: str) -> Optional[dict]:
    """`worker-1:0,1@worker-2` -> {host: {slots}} (an empty set: the whole host); None when malformed."""
    listed: dict = {}
    for node in text.split("@"):
        host, colon, slots = node.partition(":")
        numbers = slots.split(",") if colon else []
        if not host or not all(n.isascii() and n.isdigit() and len(n) < 7 for n in numbers):
            return None
        listed.setdefault(host, set()).update(int(n) for n in numbers)
    return listed


def _factor(count: Count, options: dict, env: dict, given: dict, args: list) -> Optional[tuple]:
    """(value or UNKNOWN, span, description) of one factor of W; None when not given and no default."""
    found = _count(options, count.flags) or _count(env, count.env) or _keyed(count.key, given, args) \
        or _devices(env, count.devices)
    if found is None and any(option in options for option in count.unknown_with):
        return UNKNOWN, None, next(option for option in count.unknown_with if option in options)
    if found is None and count.flags and _OPAQUE in options:  # a variable among the launcher's options may set it
        return UNKNOWN, None, options[_OPAQUE].raw
    if found is None and count.default is not None:
        return count.default, None, f"assumed: {count.name} defaults to {count.default}"
    return found


def _keyed(key: str, given: dict, args: list) -> Optional[tuple]:
    """A count given as a Hydra override `key=value`."""
    if not key:
        return None
    path = _path(key)
    for word in args:
        # `trainer.nnodes=$NODES` with NODES unknown is an unknown word, not in the overrides:
        # its key still shows in the text as written, and W is then unknown, not the default.
        if not word.known and _path(word.raw.strip("'\"").lstrip("+~").partition("=")[0]) == path:
            return UNKNOWN, None, key
    word = given.get(path)
    if word is None:
        return None
    value = whole_number(word.value) if word.known else None
    if value is None:
        return UNKNOWN, word.span, key  # an interpolation or a variable from the environment
    return value, word.span, f"{key}={word.value}"


def _devices(env: dict, names: tuple) -> Optional[tuple]:
    """(the number of devices, span, description) the first of `names` lists (`0,1,2,3`: 4); UNKNOWN for a
    value not written out; None when none is given."""
    for name in names:
        word = env.get(name)
        if word is None:
            continue
        text = word.value if isinstance(word, Word) and word.known and isinstance(word.value, (str, int)) else None
        listed = str(text).split(",") if text is not None else []
        if listed and all(d.strip().isascii() and d.strip().isdigit() for d in listed):
            return len(listed), word.span, f"{name}={text} ({len(listed)} devices)"
        return UNKNOWN, getattr(word, "span", None), name
    return None


def _count(source: dict, names: tuple) -> Optional[tuple]:
    """(value or UNKNOWN, span, description) of the first of `names` given."""
    for name in names:
        word = source.get(name)
        if word is None:
            continue
        if not isinstance(word, Word):  # an array (`NPROC_PER_NODE=(4 4) cmd`): no count
            return UNKNOWN, None, name
        text = word.value if word.known and isinstance(word.value, str) else ""
        # torchrun's elastic `--nproc_per_node 8:8` (min:max, equal) counts as 8.
        low, colon, high = text.partition(":")
        value = whole_number(low) if not colon or low == high else None
        if value is not None:
            return value, word.span, f"{name} {text}"
        return UNKNOWN, word.span, name
    return None


def _configs_and_overrides(args: list, spec: Launcher) -> tuple:
    """The config files among a program's arguments (`--config x.yaml`, a positional
    `x.yaml`), the overrides among the rest, and the files of the `linked` flags
    (`--deepspeed ds.json`: an override like any other, and a file to lint as it is), and the configs
    standing alone after other arguments (Launch.guessed)."""
    linked = spec.linked
    names = spec.config_flags or ("*",)
    # A line whose flags are a whole config (Launcher.inline) names a config only by a flag called so (or
    # standing alone): `--deepspeed ds.json`, `--dataset x.json` are settings of it, not its config.
    named = _surely_config if spec.inline else _names_config
    configs, rest, files, guessed = [], [], [], []
    # After a flag's file value that is no config, the suffix of that file: words with the same one are
    # more values of that flag (`--plugins a.py b.py`, `--data_files a.json b.json`: argparse's nargs).
    listed = ""
    index = 0
    while index < len(args):
        word = args[index]
        text = word.value if word.known else None
        following = args[index + 1] if index + 1 < len(args) else None
        flag, eq, value = text.partition("=") if isinstance(text, str) and text.startswith("-") else ("", "", "")
        if flag and not eq and following is not None and _is_code(following.value, flag, names):
            # `--external_plugins plugin.py`, `--reward_funcs_file rewards.py`: code the program imports,
            # not its config (a config in Python is named by a config flag or stands alone).
            rest += [word, following]
            listed = ".py"
            index += 2
            continue
        if isinstance(text, str) and listed and not text.startswith("-") and "=" not in text and text.endswith(listed):
            rest.append(word)
            index += 1
            continue
        listed = ""
        if flag and flag.lstrip("-") in linked:
            rest.append(word)
            if eq and _is_config(value):
                files.append(Word(value, _value_span(word, value), word.raw))
            elif not eq and following is not None and _is_config(following.value):
                rest.append(following)
                files.append(following)
                index += 1
        elif flag and eq and _is_config(value) and named(flag, names) and not _is_code(value, flag, names):
            configs.append(Word(value, _value_span(word, value), word.raw))
            if not _surely_config(flag, names):
                guessed.append(configs[-1])
        elif flag and not eq and following is not None and _is_config(following.value) and named(flag, names):
            configs.append(following)
            if not _surely_config(flag, names):
                guessed.append(following)
            index += 1
        elif isinstance(text, str) and not text.startswith("-") and "=" not in text and _is_config(text):
            configs.append(word)
            if index:
                guessed.append(word)
        elif _assigned_config(text, spec):
            # `config=x.yaml` (OmegaConf.from_cli): a config flag written as an assignment.
            value = text.partition("=")[2]
            configs.append(Word(value, _value_span(word, value), word.raw))
        elif flag and not eq and following is not None and not str(following.value).startswith("-"):
            rest += [word, following]  # `--data_path data.json`: the flag's value, not a config
            listed = os.path.splitext(str(following.value))[1] if _is_config(following.value) else ""
            index += 1
        else:
            rest.append(word)
        index += 1
    return configs, _flags(rest, spec.flags), files, guessed


def _assigned_config(text: object, spec: Launcher) -> TypeGuard[str]:
    """`key=x.yaml` whose key is one of the launcher's own config flags, for `key=value` programs."""
    if spec.flags != ASSIGN or not spec.config_flags or not isinstance(text, str) or text.startswith(("-", "+", "~")):
        return False
    key, eq, value = text.partition("=")
    return bool(eq) and _names_config(key, spec.config_flags) and _is_config(value)


def _names_config(flag: str, names: tuple) -> bool:
    return any(_fits(flag.lstrip("-"), glob) for glob in names)


def _surely_config(flag: str, names: tuple) -> bool:
    """A flag the launcher names as its config's, or one called so (`--config`, `--cfg_file`); a
    launcher that takes a config under any flag (`*`) also takes `--train_file data.json` for one."""
    return _names_config(flag, names if names != ("*",) else _CONFIG_FLAGS)


def _is_code(value, flag: str, names: tuple) -> bool:
    """A Python file given to a flag that names no config (`--external_plugins plugin.py`)."""
    return isinstance(value, str) and value.endswith(".py") and "=" not in value \
        and not _names_config(flag, names if names != ("*",) else _CONFIG_FLAGS)


# Flags whose Python file is a config, for launchers that take a config under any flag.
_CONFIG_FLAGS = ("*config*", "*cfg*")


def _is_config(value) -> bool:
    return isinstance(value, str) and value.endswith(CONFIG_SUFFIXES) and "=" not in value


def _flags(args: list, style: str) -> list:
    """[(key path, value Word, key Word)] from `--a.b value`, `--a.b=value` and `a.b=value` words."""
    found = []
    index = 0
    while index < len(args):
        word = args[index]
        text = word.value if word.known else None
        index += 1
        if text is None:
            text = _unknown_assignment(word)  # `a.b=$VAR`, `--a.b=$VAR`: the key is written, its value not known
        if not isinstance(text, str):
            continue
        if text.startswith("--"):
            key, eq, value = text[2:].partition("=")
            if eq:
                value_word = Word(value, _value_span(word, value), word.raw, truncation=word.truncation) if word.known \
                    else Word(UNKNOWN, word.span, word.raw)
                found.append((_path(key), value_word, word))
            elif index < len(args) and not (args[index].known and str(args[index].value).startswith("--")):
                found.append((_path(key), args[index], word))
                index += 1
            else:
                found.append((_path(key), Word("true", word.span, word.raw), word))  # a bare flag
        elif "=" in text and style == "key=value":
            key, _, value = text.partition("=")
            value_word = Word(value, _value_span(word, value), word.raw, truncation=word.truncation) if word.known \
                else Word(UNKNOWN, word.span, word.raw)
            found.append((_path(key.lstrip("+~")), value_word, word))
    return [(keys, _as_argument(value), key) for keys, value, key in found] if style == FLAGS else found


class ArgumentText(str):
    """A `--key value` word an argparse program takes as text, typed by the field it sets: YAML 1.1's
    yes/no/on/off/y/n are words there, not booleans (`--eval_strategy no` is the strategy "no"; an
    argparse-based parser turns text into a bool only for a bool field), where a YAML file's
    `eval_strategy: no` is false."""


# What YAML 1.1 reads as a boolean and argparse as text (true/false are booleans to both).
_YAML11_BOOLEANS = LazyPattern(r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)\Z")


def _as_argument(value: Word) -> Word:
    if value.known and isinstance(value.value, str) and _YAML11_BOOLEANS.match(value.value):
        return replace(value, value=ArgumentText(value.value))
    return value


def _unknown_assignment(word: Word) -> Optional[str]:
    """`key=` of a word not known whose key is written as is (`trainer.nnodes=$NNODES`), else None."""
    raw = word.raw.strip("'\"")
    match = WRITTEN_KEY.match(raw)
    return match.group() if match else None


def _path(key: str) -> tuple:
    return tuple(part for part in key.split(".") if part)


def _value_span(word: Word, value: str) -> Span:
    """The span of `value` at the end of `key=value`: where its variable was set for
    `key=${VAR}`, else the word's tail (when the word was written in one piece)."""
    if word.value_span is not None:
        return word.value_span
    span = word.span
    if span.line == span.end_line and span.end_column - span.column >= len(value):
        return Span(span.line, span.end_column - len(value) - (1 if word.raw.endswith(("'", '"')) else 0),
                    span.end_line, span.end_column)
    return span


# -- applying a launch to a config ---------------------------------------------------

def typed(text) -> object:
    """A command-line value as the frameworks' parsers read it: numbers, booleans, else text."""
    from ..sources.plain import typed_plain

    if isinstance(text, ArgumentText):
        return str(text)
    return typed_plain(text) if isinstance(text, str) else text


@lean_dataclass(eq=False)
class Computed(Scalar):
    """A launch-line value bash computed by a division that dropped a remainder."""

    truncation: Optional[Truncation] = None


def apply_overrides(doc: Document, overrides: list, script: Optional[str]) -> None:
    """Write each override into the config's tree; its span points into the script."""
    entry = getattr(overrides, "entry", None)
    if entry is not None and script is not None and not isinstance(doc, LaunchDocument):
        doc.program = (script, entry)
    for keys, value, key_word in overrides:
        if not keys:
            continue
        node = doc.root
        for key in keys[:-1]:
            child = node.items.get(key)
            if not isinstance(child, Mapping):
                child = Mapping(span=key_word.span.elsewhere(script))
                node.items[key] = child
                node.key_spans[key] = key_word.span.elsewhere(script)
            node = child
        # `key=$VAR` with VAR not known here: the key is set, to a value not known (never the default).
        where = value.span.elsewhere(script)
        if not value.known:
            node.items[keys[-1]] = Unknown(where, why=f"{value.raw} is not known before the job runs")
        elif value.truncation is not None:  # BL604 says what the remainder bash dropped does to the batch
            node.items[keys[-1]] = Computed(typed(value.value), where, truncation=value.truncation)
        else:
            node.items[keys[-1]] = Scalar(typed(value.value), where)
        node.key_spans[keys[-1]] = key_word.span.elsewhere(script)


def inline_document(launch: Launch, script: str, text: str) -> Document:
    """The settings of a launch line that holds them all (its `Launcher.inline` settings)."""
    doc = LaunchDocument(path=script, format="yaml", root=Mapping(span=launch.command.span), text=text,
                         launched_by=launch.framework, entry=launch.entry, handed_over=launch.handed_over,
                         config_path=launch.config_path,
                         config_name=launch.config_name,
                         overrides=list(launch.overrides))
    if launch.config_name is not None and launch.config_name.known:
        # Hydra composes the overrides over the named primary config, as a defaults list would.
        name = Scalar(launch.config_name.value, launch.config_name.span)
        doc.root.items["defaults"] = Sequence(items=[name], span=launch.config_name.span)
    apply_overrides(doc, launch.overrides, script=None)
    return doc
