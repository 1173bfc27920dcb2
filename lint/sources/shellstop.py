"""Where bash cannot expand a launch script's command: a variable read before the script sets it.

Under `set -u` an unset `$x` (or name in `$((...))`) is an "unbound variable": a non-interactive
bash exits there, and the launch line after it never runs. Without it, bash reads an unset variable
as 0 in `$((...))`, so `$((N / sp_size))` with `sp_size` set only further down is a "division by 0"
(and `$((64 / $TP))` with an empty `$TP` a syntax error): bash (not in POSIX mode) abandons the
top-level command it is in and goes on with the next, leaving what it would assign unset (`sh` and
`bash --posix` exit). Only an error in the script's own process counts: a `$(...)`, a pipeline,
the background or a `( ... )` subshell fails alone, and the `(( ))` command only returns 1.

The reader (shell.py) follows the script's variables; this module tells it what a command does
that its state does not follow: names it may set (`read`, `getopts`, `declare`...), whether it
turns `set -u` on or off, and which names the script assigns further down whatever happens (the
evidence that the script, not the environment, is meant to give the value).
"""

from __future__ import annotations

from ..document import Span
from ..lazy_pattern import LazyPattern
from ..lean_dataclass import lean_dataclass
from .shellflow import ASSIGNMENT, NAME, Simple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


@lean_dataclass
class Stop:
    """A command of the script that bash cannot expand."""

    span: Span  # the variable, where the expansion reads it
    variable: str
    set_at: Span  # the plain assignment further down
    assignment: str  # as written there (`sp_size=4`)
    expression: str  # the `$((...))` reading it, or "" for a plain `$x`
    # "unbound": `set -u` is on; "division": a divisor is 0 (an unset variable reads as 0); "empty": `$X`
    # expands to nothing, which leaves no valid expression (`64 / $TP` is `64 / `).
    why: str
    nounset: Optional[Span] = None  # the `set -u` in force
    command: Optional[Span] = None  # the command bash abandons
    assigns: tuple = ()  # the variables it would have set

    @property
    def exits(self) -> bool:
        """Whether bash exits there (`set -u`); else it goes on with the next command."""
        return self.why == "unbound"


# Names the shell, the scheduler or the machine give a script without its writing them: an
# assignment further down replaces such a value, it does not give the first one.
_GIVEN = frozenset({
    "HOME", "PATH", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "PWD", "OLDPWD", "TMPDIR", "HOSTNAME", "HOSTTYPE",
    "OSTYPE", "MACHTYPE", "IFS", "PS1", "PS2", "PS4", "PPID", "UID", "EUID", "GROUPS", "RANDOM", "SECONDS", "LINENO",
    "OPTIND", "OPTARG", "OPTERR", "REPLY", "SHLVL", "SHELLOPTS", "COLUMNS", "LINES", "PIPESTATUS", "FUNCNAME",
    "DISPLAY", "EDITOR", "PYTHONPATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "VIRTUAL_ENV", "CONDA_PREFIX",
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
    "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
})
_GIVEN_PREFIXES = ("BASH", "LC_", "SLURM_", "SBATCH_", "PMI_", "PMIX_", "OMPI_", "MV2_", "PET_", "KUBERNETES_",
                   "MLP_", "ARNOLD_", "VC_", "CONDA_", "XDG_", "SSH_")

# Builtins that give variables values: a plain name among their arguments may be set.
_SETTERS = frozenset({"read", "mapfile", "readarray", "export", "declare", "local", "typeset", "readonly", "wait"})
_DECLARERS = frozenset({"export", "declare", "local", "typeset", "readonly"})
_VALUED_OPTIONS = {"read": frozenset({"-d", "-i", "-n", "-N", "-p", "-t", "-u"}),
                   "mapfile": frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"})}
# `x = 1`, `x += 1`, `x <<= 1`, `x++` (not == != <= >=)
_ARITH_ASSIGNMENT = LazyPattern(r"\+\+|--|<<=|>>=|(?<![=!<>])=(?!=)")


def given(name: str) -> bool:
    """Whether the environment may hold the variable whatever the script assigns later."""
    return name in _GIVEN or name.startswith(_GIVEN_PREFIXES)


def _opaque(raw: str) -> bool:
    """A word whose name part (before any `=`) the reader cannot read: `$NAME=1`, `` `cmd` ``."""
    head = raw.split("=", 1)[0]
    return "$" in head or "`" in head or "\x00" in head


def names_set(words: list) -> Optional[set]:
    """The names a command may set that the reader's variable state does not follow (its own
    assignments aside), or None when it may set any name (`export $(cat .env)`, `declare -n`,
    `eval "$X"`). `words`: the command's raw words."""
    index = 0
    while index < len(words) and (ASSIGNMENT.match(words[index].raw) or words[index].raw in ("command", "builtin")):
        index += 1
    names: set = set()
    for word in words:  # `${x:=8}`, `$((x = 8))`, `(( x++ ))` anywhere on the line
        for kind, text, _ in word.refs:
            if kind == "set":
                names.add(text)
            elif kind == "arith" and _ARITH_ASSIGNMENT.search(text):
                names.update(NAME.findall(text))
        if word.raw.startswith("((") and _ARITH_ASSIGNMENT.search(word.raw):
            names.update(NAME.findall(word.raw))
    if index >= len(words):
        return names
    command, arguments = words[index].raw, [word.raw for word in words[index + 1:]]
    if command == "eval":
        return names if not any("$" in raw or "`" in raw for raw in arguments) else None
    if command == "let":
        return names | set(NAME.findall(" ".join(arguments)))
    if command == "getopts":
        return names | {"OPTARG", "OPTIND"} | ({arguments[1]} if len(arguments) > 1 and NAME.fullmatch(arguments[1])
                                              else set())
    if command == "printf":
        at = arguments.index("-v") + 1 if "-v" in arguments else len(arguments)
        if at < len(arguments) and _opaque(arguments[at]):
            return None
        return names | set(NAME.findall(arguments[at] if at < len(arguments) else ""))
    if command not in _SETTERS:
        return names
    valued = _VALUED_OPTIONS.get("mapfile" if command == "readarray" else command, frozenset())
    skip = False
    for raw in arguments:
        if skip:
            skip = False
        elif raw.startswith(("-", "+")) and not _opaque(raw):
            if command in _DECLARERS and "n" in raw[1:]:
                return None  # a name reference: assigning it sets the variable it names
            skip = raw in valued
        elif _opaque(raw):
            return None
        else:
            match = NAME.match(raw)
            if match:
                names.add(match.group())
    return names


def nounset_change(words: list) -> Optional[bool]:
    """What `set ...` / `shopt ...` does to `set -u`: True on, False off (or maybe off: a word not
    known), None nothing. `words`: the command's raw words as written."""
    if not words or words[0] not in ("set", "shopt"):
        return None
    if words[0] == "shopt":
        return False if "nounset" in words else None
    change = None
    rest = iter(words[1:])
    for word in rest:
        if "$" in word or "`" in word:
            return False
        if word in ("-", "--") or word[:1] not in ("-", "+"):
            break  # the positional parameters follow
        on = word[0] == "-"
        letters = word[1:]
        if "u" in letters:
            change = on
        if "o" in letters and next(rest, None) == "nounset":
            change = on
    return change


def plain_assignments(nodes: list) -> dict:
    """name -> [(offset, word)] for each plain assignment among a script's top-level commands that
    run whatever happens (not in a block, a function, an `&&`/`||` list, a pipeline, the background
    or a subshell), whose value does not read the variable itself (`N=${N:-8}` leaves it to the caller)."""
    found: dict = {}
    previous = ""
    for node in nodes:
        joined, before, previous = node.joined, previous, node.joined
        if not isinstance(node, Simple) or node.raw.subshell or joined not in ("\n", ";", "") \
                or before not in ("\n", ";", ""):
            continue
        for word in _assignments(node.raw.words):
            match = ASSIGNMENT.match(word.raw)
            if match and match.group(1) not in NAME.findall(word.raw[match.end():]):
                found.setdefault(match.group(1), []).append((word.offset, word))
    return found


def assigned_by(words: list) -> tuple:
    """The names a command assigns in the shell (`A=1 B=2`, `export A=1`), in order."""
    return tuple(dict.fromkeys(match.group(1) for word in _assignments(words) if (match := ASSIGNMENT.match(word.raw))))


def _assignments(words: list) -> list:
    """The words of a plain assignment or declaration that assign (not `A=1 cmd`: A is the command's)."""
    if words and words[0].raw in ("export", "declare", "typeset", "readonly"):
        flags = "".join(word.raw for word in words[1:] if word.raw.startswith(("-", "+")))
        return [] if "n" in flags or "+" in flags else [word for word in words[1:] if ASSIGNMENT.match(word.raw)]
    return list(words) if all(ASSIGNMENT.match(word.raw) for word in words) else []
