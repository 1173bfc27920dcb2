"""Launch lines: which command starts training, on how many GPUs, with which
config file and which overrides.

A table of launchers, not code per launcher: how each spells the process
count, the node count, the config file and the overrides. The world size is
the product of the process and node counts when both are known.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

from .document import Document, Mapping, Scalar, Sequence, Span
from .frameworks.facts import whole_number
from .plan import Fact, Origin
from .sources.shell import UNKNOWN, Command, ShellDocument, Word

CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py")
# Byte strings one of which a launch script contains (the engine skips other scripts).
MARKERS = (b"torchrun", b"torch.distributed", b"deepspeed", b"accelerate", b"swift", b"megatron",
           b"llamafactory-cli", b"xtuner", b"tune", b"verl.trainer", b"pretrain_", b"run_train.sh", b"python")


@dataclass
class Launch:
    launcher: str
    command: Command
    world_size: Optional[Fact] = None
    configs: list = field(default_factory=list)  # Words naming config files
    overrides: list = field(default_factory=list)  # (key path tuple, Word value, Word key)
    framework: Optional[str] = None  # the framework the inline settings belong to, when they are a whole config
    config_name: Optional[Word] = None  # Hydra's --config-name: the primary config the overrides apply to


@dataclass(frozen=True)
class _Launcher:
    name: str
    nproc: tuple = ()  # options giving processes per node (or in all, with `total`)
    nnodes: tuple = ()
    env_nproc: tuple = ()  # environment variables giving processes per node
    env_nnodes: tuple = ()
    default_nproc: Optional[int] = None  # the launcher's own default, quoted as assumed
    total: bool = False  # nproc counts processes across all nodes
    program: bool = False  # options first, then a program and its arguments
    flag_style: str = "--key value"  # how the trained program takes overrides
    framework: Optional[str] = None  # inline settings form a whole config of this framework


_TORCHRUN = _Launcher("torchrun", nproc=("--nproc_per_node", "--nproc-per-node"), nnodes=("--nnodes",), program=True)
_LAUNCHERS = {
    "torchrun": _TORCHRUN,
    "torch.distributed.run": _TORCHRUN,
    "torch.distributed.launch": _TORCHRUN,
    "deepspeed": _Launcher("deepspeed", nproc=("--num_gpus", "--num-gpus"), nnodes=("--num_nodes", "--num-nodes"), program=True),
    "accelerate": _Launcher("accelerate launch", nproc=("--num_processes", "--num-processes"), total=True, program=True),
    "swift": _Launcher("swift", env_nproc=("NPROC_PER_NODE",), env_nnodes=("NNODES",), framework="swift"),
    "megatron": _Launcher("megatron", env_nproc=("NPROC_PER_NODE",), env_nnodes=("NNODES",), framework="swift"),
    "llamafactory-cli": _Launcher("llamafactory-cli", env_nproc=("NPROC_PER_NODE",), env_nnodes=("NNODES",), flag_style="key=value"),
    "xtuner": _Launcher("xtuner", env_nproc=("NPROC_PER_NODE",), env_nnodes=("NNODES",)),
    "tune": _Launcher("tune run", nproc=("--nproc_per_node", "--nproc-per-node"), nnodes=("--nnodes",), flag_style="key=value"),
    "run_train.sh": _Launcher("run_train.sh", env_nproc=("NGPU",), default_nproc=8, flag_style="--key value"),
}
_PYTHON = re.compile(r"(^|/)python(3(\.\d+)?)?$")
_VERL = re.compile(r"verl\.trainer\.main_\w+")


def launches(doc: ShellDocument) -> list:
    found = []
    for command in doc.commands:
        launch = _launch(command, doc.path)
        if launch is not None:
            found.append(launch)
    return found


def _launch(command: Command, script: str) -> Optional[Launch]:
    words = command.words
    if not words or not words[0].known:
        return None
    head = os.path.basename(words[0].value)
    rest = words[1:]
    if _PYTHON.search(words[0].value) and len(words) > 2 and words[1].value == "-m" and words[2].known:
        module = words[2].value
        if module in _LAUNCHERS:
            return _run(_LAUNCHERS[module], command, words[3:], script)
        if _VERL.fullmatch(module):
            return _hydra(command, words[3:], "verl", script)
        return None
    if _PYTHON.search(words[0].value) and len(words) > 1 and words[1].known and os.path.basename(str(words[1].value)).startswith("pretrain_"):
        launch = Launch("python", command, framework="megatron")
        launch.overrides = _flags(words[2:], "--key value")
        return launch
    if head in ("accelerate", "tune") and rest and rest[0].value in ("launch", "run"):
        rest = rest[1:]
    elif head in ("swift", "megatron", "llamafactory-cli", "xtuner") and rest:
        rest = rest[1:]  # the sub-command: sft, pt, rlhf, train...
    if head not in _LAUNCHERS:
        return None
    return _run(_LAUNCHERS[head], command, rest, script)


def _run(launcher: _Launcher, command: Command, args: list, script: str) -> Launch:
    options, program_args = _split_options(args, launcher)
    launch = Launch(launcher.name, command, framework=launcher.framework)
    launch.world_size = _world_size(launcher, options, command, script)
    targets = program_args[1:] if launcher.program else program_args
    if launcher.name == "tune run" and program_args:
        targets = program_args[1:]  # the recipe comes first
    if launcher.program and program_args and program_args[0].known:
        program = os.path.basename(str(program_args[0].value))
        if program.startswith("pretrain_"):
            launch.framework = "megatron"
    launch.configs, launch.overrides = _configs_and_overrides(targets, launcher.flag_style)
    return launch


# Hydra launchers: where the overrides name the process and node counts, and the
# defaults of the framework's own config (verl/trainer/config/ppo_trainer.yaml).
_HYDRA_WORLD = {"verl": (("trainer", "n_gpus_per_node"), 8, ("trainer", "nnodes"), 1)}


def _hydra(command: Command, args: list, framework: str, script: str) -> Launch:
    launch = Launch(framework, command, framework=framework)
    launch.overrides = [o for o in _flags(args, "key=value") if o[0] not in (("config-name",), ("config-path",), ("cn",), ("cp",))]
    named = [value for keys, value, _ in _flags(args, "key=value") if keys in (("config-name",), ("cn",))]
    launch.config_name = named[-1] if named else None
    nproc_key, nproc_default, nodes_key, nodes_default = _HYDRA_WORLD[framework]
    given = {keys: value for keys, value, _ in launch.overrides}
    for word in args:
        # `trainer.nnodes=$NODES` with NODES unknown is an unknown word, not in the overrides:
        # its key still shows in the text as written, and W is then unknown, not the default.
        key = word.raw.strip("'\"").lstrip("+~").partition("=")[0] if not word.known else ""
        if _path(key) in (nproc_key, nodes_key):
            return launch
    counts = []
    for keys, default in ((nproc_key, nproc_default), (nodes_key, nodes_default)):
        word = given.get(keys)
        value = whole_number(word.value) if word is not None and word.known else None
        if word is None:
            counts.append((default, None, f"assumed: {'.'.join(keys)} defaults to {default}"))
        elif value is not None:
            counts.append((value, word.span, f"{'.'.join(keys)}={word.value}"))
        else:
            return launch  # an interpolation or a variable from the environment: W unknown
    (nproc, span, shown), (nodes, node_span, node_shown) = counts
    where = (span or node_span or command.span).elsewhere(script)
    launch.world_size = Fact(nproc * nodes, "world size", where, Origin.LAUNCH, detail=f"{shown} x {node_shown}")
    return launch


# Launcher options that take no value.
_BARE = {"--standalone", "--no_python", "--no-python", "--module", "--run_path", "--run-path", "--multi_gpu",
         "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--no_local_rank", "--no-local-rank", "--force_multi",
         "--bind_cores_to_rank", "--enable_each_rank_log", "--autotuning"}


def _split_options(args: list, launcher: _Launcher) -> tuple:
    """The launcher's own `--opt value` words, and the program with its arguments
    (`-m module` counts as the program)."""
    if not launcher.program:
        return {}, args
    options: dict = {}
    index = 0
    while index < len(args):
        word = args[index]
        text = word.value if word.known else ""
        if not isinstance(text, str) or not text.startswith("-") or text == "-m":
            break
        if "=" in text:
            key, value = text.split("=", 1)
            options[key] = Word(value, word.span, word.raw)
            index += 1
        elif text in _BARE or index + 1 >= len(args):
            options[text] = Word("true", word.span, word.raw)
            index += 1
        else:
            options[text] = args[index + 1]
            index += 2
    if index < len(args) and args[index].value == "-m":
        index += 1
    return options, args[index:]


def _world_size(launcher: _Launcher, options: dict, command: Command, script: str) -> Optional[Fact]:
    nproc = _count(options, launcher.nproc) or _count(command.env, launcher.env_nproc)
    nnodes = _count(options, launcher.nnodes) or _count(command.env, launcher.env_nnodes)
    if nproc is None and launcher.default_nproc is not None and not launcher.nproc:
        nproc = (launcher.default_nproc, None, f"assumed: {launcher.env_nproc[0]} defaults to {launcher.default_nproc}")
    if nproc is None or (nproc[0] is UNKNOWN):
        return None
    if launcher.total:
        nnodes = None
    if nnodes is not None and nnodes[0] is UNKNOWN:
        return None
    nodes = nnodes[0] if nnodes else 1
    span = nproc[1] or command.span
    where = nproc[2] + (f" x {nnodes[2]}" if nnodes else "")
    return Fact(nproc[0] * nodes, "world size", span.elsewhere(script), Origin.LAUNCH, detail=where)


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


def _configs_and_overrides(args: list, style: str) -> tuple:
    """The config files among a program's arguments (`--config x.yaml`, `--deepspeed ds.json`,
    a positional `x.yaml`), and the overrides among the rest."""
    configs, rest = [], []
    index = 0
    while index < len(args):
        word = args[index]
        text = word.value if word.known else None
        following = args[index + 1] if index + 1 < len(args) else None
        if isinstance(text, str) and text.startswith("-") and "=" in text and _is_config(text.split("=", 1)[1]):
            configs.append(Word(text.split("=", 1)[1], _value_span(word, text.split("=", 1)[1]), word.raw))
        elif isinstance(text, str) and text.startswith("-") and following is not None and _is_config(following.value):
            configs.append(following)
            index += 1
        elif isinstance(text, str) and not text.startswith("-") and "=" not in text and _is_config(text):
            configs.append(word)
        else:
            rest.append(word)
        index += 1
    return configs, _flags(rest, style)


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
        if not isinstance(text, str):
            continue
        if text.startswith("--"):
            key, eq, value = text[2:].partition("=")
            if eq:
                found.append((_path(key), Word(value, _value_span(word, value), word.raw), word))
            elif index < len(args) and not (args[index].known and str(args[index].value).startswith("--")):
                found.append((_path(key), args[index], word))
                index += 1
            else:
                found.append((_path(key), Word("true", word.span, word.raw), word))  # a bare flag
        elif "=" in text and style == "key=value":
            key, _, value = text.partition("=")
            found.append((_path(key.lstrip("+~")), Word(value, _value_span(word, value), word.raw), word))
    return found


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
    from .sources.yaml import typed_plain

    return typed_plain(text) if isinstance(text, str) else text


def apply_overrides(doc: Document, overrides: list, script: Optional[str]) -> None:
    """Write each override into the config's tree; its span points into the script."""
    for keys, value, key_word in overrides:
        if not keys or not value.known:
            continue
        node = doc.root
        for key in keys[:-1]:
            child = node.items.get(key)
            if not isinstance(child, Mapping):
                child = Mapping(span=key_word.span.elsewhere(script))
                node.items[key] = child
                node.key_spans[key] = key_word.span.elsewhere(script)
            node = child
        node.items[keys[-1]] = Scalar(typed(value.value), value.span.elsewhere(script))
        node.key_spans[keys[-1]] = key_word.span.elsewhere(script)


def inline_document(launch: Launch, script: str, text: str) -> Document:
    """The settings of a launch line that holds them all (swift flags, verl overrides, Megatron args)."""
    doc = Document(path=script, format="yaml", root=Mapping(span=launch.command.span), text=text,
                   launched_by=launch.framework)
    if launch.config_name is not None and launch.config_name.known:
        # Hydra composes the overrides over the named primary config, as a defaults list would.
        name = Scalar(launch.config_name.value, launch.config_name.span)
        doc.root.items["defaults"] = Sequence(items=[name], span=launch.config_name.span)
    apply_overrides(doc, launch.overrides, script=None)
    return doc
