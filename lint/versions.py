"""Which release of a framework a project runs, read from the project's own files.

Nearest evidence first: `versions = { name = "X" }` in the project config wins;
then, from the linted file's folder up to the project root, the first folder
that says anything about the distribution: a copy of the framework's package
inside it (vendored, or the framework's own repository: its version file),
an exact version in uv.lock / poetry.lock, else the requirements in
requirements*.txt, requirements/*.txt, pyproject.toml (PEP 621 and poetry),
setup.cfg and setup.py (read with `ast`, never run), and where those are silent
the folder's README (its install commands, and the environment it lists in a
code block as `pip freeze` or `pip list` prints it). Requirements of one folder
must all hold: an exact `==` pin names the release, a range names it only when
exactly one release a rule knows satisfies it; anything else is unknown.

Only files inside the project are read (lint/project.py), each bounded; what a
folder says is cached per folder and its reads are replayed into each file's
record, so a cached lint result is reused only while those files are unchanged.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Iterator

from . import per_run, project, reads
from .lazy_pattern import LazyPattern
from .lean_dataclass import lean_dataclass
from .project import ProjectView
from .scoped import Scoped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Files a folder's evidence reads: a requirements file past this is no requirements file.
MAX_MANIFEST_BYTES = 1 << 20
MAX_REQUIREMENT_FILES = 32
MAX_LEVELS = 64
MAX_CACHED = 2048

_INF = float("inf")
_VERSION = LazyPattern(
    r"v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:[-_.]?(post|rev|r)[-_.]?(\d*)|-(\d+))?(?:[-_.]?(dev)[-_.]?(\d*))?(?:\+[a-z0-9.]+)?\Z", re.I)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_CLAUSE = LazyPattern(r"\s*(~=|===|==|!=|<=|>=|<|>)\s*([^\s,;]+)\s*\Z")
_REQUIREMENT = LazyPattern(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?\Z", re.S)


def canonical(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# -- PEP 440, the part requirement files use ---------------------------------------------------

@functools.lru_cache(maxsize=4096)  # a premise weighs each release of its framework's table, for every rule
def version_key(text: str) -> Optional[tuple]:
    """A sort key ordering versions as pip does; None for what is no version."""
    if len(text) >= 64:
        return None
    text = text.strip()
    plain = _plain_key(text)
    if plain is not None:
        return plain
    match = _VERSION.match(text)
    if match is None:
        return None
    release, phase, pre_n, post, post_n, post_bare, dev, dev_n = match.groups()
    numbers = [int(part) for part in release.split(".")]
    is_post = post is not None or post_bare is not None
    pre: tuple[float, ...]
    if phase:
        pre = (_PRE[phase.lower()], int(pre_n or 0))
    else:
        pre = (-_INF,) if dev and not is_post else (_INF,)
    post_key = (int(post_n or post_bare or 0),) if is_post else (-_INF,)
    dev_key = (int(dev_n or 0),) if dev else (_INF,)
    return _release_key(numbers, pre, post_key, dev_key)


def _plain_key(text: str) -> Optional[tuple]:
    """version_key of `4.57.1`, `2.0.3.post1`, `0.3.0.dev0`, as release tables write them, without the
    pattern (None: another shape)."""
    parts = text.split(".")
    dev: tuple = (_INF,)
    if parts[-1][:3] == "dev" and len(parts) > 1 and parts[-1][3:].isdigit():
        dev = (int(parts.pop()[3:]),)
    post: tuple = (-_INF,)
    if parts[-1][:4] == "post" and len(parts) > 1 and parts[-1][4:].isdigit():
        post = (int(parts.pop()[4:]),)
    if not (text.isascii() and all(part.isdigit() for part in parts)):
        return None
    pre = (-_INF,) if dev[0] != _INF and post[0] == -_INF else (_INF,)  # a dev release comes before its rcs
    return _release_key([int(part) for part in parts], pre, post, dev)


def _release_key(numbers: list, pre: tuple, post: tuple, dev: tuple) -> tuple:
    while len(numbers) > 1 and numbers[-1] == 0:  # 1.0 is 1.0.0
        numbers.pop()
    return (tuple(numbers), pre, post, dev)


def _written_release(text: str) -> Optional[tuple]:
    """The release numbers as written (`1.0` is (1, 0)), for prefix matches."""
    match = _VERSION.match(text.strip()) if len(text) < 64 else None
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def _clause_admits(op: str, wanted: str, version: str) -> Optional[bool]:
    if op == "===":
        return version.strip() == wanted
    if wanted.endswith(".*") and op in ("==", "!="):
        prefix, numbers = _written_release(wanted[:-2]), _written_release(version)
        if prefix is None or numbers is None:
            return None
        padded = numbers + (0,) * max(0, len(prefix) - len(numbers))
        inside = padded[:len(prefix)] == prefix
        return inside if op == "==" else not inside
    have, want = version_key(version), version_key(wanted)
    if have is None or want is None:
        return None
    if op == "~=":
        numbers = _written_release(wanted)
        if numbers is None or len(numbers) < 2:
            return None
        stem = ".".join(map(str, numbers[:-1]))
        return have >= want and bool(_clause_admits("==", stem + ".*", version))
    return {"==": have == want, "!=": have != want, "<=": have <= want, ">=": have >= want,
            "<": have < want, ">": have > want}[op]


def clauses(spec: str) -> Optional[list]:
    """[(operator, version)] of a specifier (`>=0.1,<0.2`); None when it is not one we read."""
    parts = [p for p in spec.split(",") if p.strip()]
    found = []
    for part in parts:
        match = _CLAUSE.match(part)
        if match is None:
            return None
        found.append(match.groups())
    return found


def admits(spec: str, version: str) -> Optional[bool]:
    """Whether `version` satisfies `spec` (an empty spec admits all); None when unreadable."""
    parsed = clauses(spec)
    if parsed is None:
        return None
    verdicts = [_clause_admits(op, wanted, version) for op, wanted in parsed]
    return None if None in verdicts else all(verdicts)


def exact(spec: str) -> Optional[str]:
    """The version an `==X` (or `===X`) clause names, wildcards aside."""
    for op, wanted in clauses(spec) or ():
        if op in ("==", "===") and not wanted.endswith(".*") and version_key(wanted) is not None:
            return wanted
    return None


def side_of(spec: str, boundary: str) -> Optional[bool]:
    """Whether every release `spec` admits is at or after `boundary` (True) or before it (False);
    None when it admits releases on both sides, or cannot be read (`>=0.29` is after 0.20)."""
    edge = version_key(boundary)
    for op, wanted in clauses(spec) or ():
        key = None if wanted.endswith(".*") else version_key(wanted)
        if key is None or edge is None:
            continue
        if op in (">=", ">", "~=", "==", "===") and key >= edge:
            return True
        if (op in ("<", "==", "===", "<=") and key < edge) or (op == "<" and key == edge):
            return False
    return None


def poetry_spec(text: str) -> str:
    """A poetry constraint (`^0.3.1`, `~0.3`, `0.3.1`, `*`) as a PEP 440 specifier."""
    text = text.strip()
    if text in ("", "*"):
        return ""
    head = text[0]
    if head in "^~" and not text.startswith("~="):
        numbers = _written_release(text[1:])
        if numbers is None:
            return "?"
        written = list(numbers)
        if head == "^":
            cut = next((i for i, n in enumerate(written) if n != 0), len(written) - 1)
        else:
            cut = max(len(written) - 2, 0) if len(written) > 1 else 0
        upper = written[:cut + 1]
        upper[-1] += 1
        return f">={text[1:]},<{'.'.join(map(str, upper))}"
    if head.isdigit():
        return "==" + text
    return text


# -- what a folder says ------------------------------------------------------------------------

@lean_dataclass(frozen=True)
class Distribution:
    """How to find the release of one framework (declared by its spec, lint/frameworks/spec.py).

    names: its distribution names on PyPI, as requirement files and lock files write them.
    package: its import package; a folder of that name holding `__init__.py` is a copy
        of the framework inside the project (vendored, or its own repository).
    version_files: where that copy writes its version, relative to the folder holding the
        package: a text file holding the version, or a `.py` file with `__version__ = "X"`.
    title: how findings name it.
    releases: the releases users run, oldest first, the last the newest checked: what a rule's
        window (lint/premise.py) is weighed against when the project does not say which runs.
        "0.dev0" stands for the layouts before the first release (shown as "before <first>").
    """

    names: tuple
    package: str
    version_files: tuple = ()
    title: str = ""
    releases: tuple = ()

    @property
    def shown(self) -> str:
        return self.title or self.names[0]


@lean_dataclass(frozen=True)
class Release:
    """What the project says about a distribution.

    version: the release in force, None when unknown; where: the file:line (or setting)
    that says so; copy: the folder holding a copy of the package inside the project, whose
    own source a rule may read; spec: the requirement when it named no single release."""

    version: Optional[str]
    where: str
    copy: Optional[str] = None
    spec: str = ""

    def how(self) -> str:
        """Where the release was found, for a message: "pinned in requirements.txt:4"."""
        if self.where.startswith("`versions`"):
            return f"set by {self.where}"
        if self.copy is not None:
            return f"the copy's version, {self.where}"
        if self.spec and exact(self.spec) is None:
            return f"{self.spec} in {self.where}"
        return f"pinned in {self.where}"


@lean_dataclass(frozen=True)
class _Said:
    version: Optional[str] = None  # exact
    where: str = ""
    copy: Optional[str] = None
    pins: tuple = ()  # (spec or None when unreadable, where)


@lean_dataclass(frozen=True)
class _Reading:
    """How one lookup reads the project: through the view the lint was handed, with paths shown relative
    to the project's top."""

    view: ProjectView
    top: str = ""

    def text(self, path: str, limit: int = MAX_MANIFEST_BYTES) -> Optional[str]:
        if not self.view.may_read(path):
            return None
        try:
            return self.view.read_bytes(path, limit).decode("utf-8", "replace")
        except OSError:
            reads.record(path)  # absent: creating it changes what the folder says
            return None

    def where(self, path: str, line: Optional[int] = None) -> str:
        """`path` by its place in the project (relative to the project root), with its line."""
        shown = os.path.relpath(path, self.top) if self.top else os.path.basename(path)
        return shown.replace(os.sep, "/") + (f":{line}" if line else "")


def _line_of(text: str, name: str, start: int = 0) -> Optional[int]:
    pattern = re.compile(r"(?im)^[^#\n]*?[\"' \[]?" + r"[-_.]?".join(map(re.escape, re.split(r"[-_.]", name)))
                         + r"(?![A-Za-z0-9_-])")
    match = pattern.search(text, start)
    return text.count("\n", 0, match.start()) + 1 if match else None


_GIT_URL = LazyPattern(r"(?:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@\s*)?"
                      r"git\+[a-z]+://[^\s@#]*?/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?(?:@(?P<ref>[^\s#;]+))?"
                      r"(?:#egg=(?P<egg>[A-Za-z0-9._-]+))?\s*\Z")
_TAG = LazyPattern(r"v?(\d+(?:\.\d+)+(?:\.?post\d+)?)\Z")


def _git_requirement(line: str, names: set) -> Optional[str]:
    """The specifier a `git+https://...@ref` requirement names: a release tag (`@v0.6.1`) is that
    release; a commit, a branch or no ref names none ("?"). None: another distribution."""
    match = _GIT_URL.match(line.strip())
    if match is None:
        return None
    named = match.group("name") or match.group("egg") or match.group("repo")
    if canonical(named) not in names:
        return None
    tag = _TAG.match(match.group("ref") or "")
    return f"=={tag.group(1)}" if tag else "?"


def _requirement(line: str, names: set) -> Optional[str]:
    """The specifier of a requirement line naming one of `names`; "?" when its form is unread
    (a URL but a release tag's, an unknown operator), None when it names another distribution."""
    if "git+" in line:
        return _git_requirement(line, names)
    match = _REQUIREMENT.match(line)
    if match is None or canonical(match.group(1)) not in names:
        return None
    spec = match.group(2).strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    return spec if clauses(spec) is not None else "?"


def _requirements_file(reading: _Reading, path: str, names: set) -> list:
    text = reading.text(path)
    if text is None:
        return []
    pins, number = [], 0
    logical, first = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not logical:
            first = number
        line = re.sub(r"(^|\s)#.*", "", raw)
        if line.rstrip().endswith("\\"):
            logical += line.rstrip()[:-1] + " "
            continue
        logical += line
        whole, logical = logical.strip(), ""
        if not whole or whole.startswith("-"):
            continue
        whole = re.sub(r"\s--hash[= ]\S+", "", whole)
        spec = _requirement(whole, names)
        if spec is not None:
            pins.append((spec, reading.where(path, first)))
    return pins


# `pip install ...` as shell scripts, Dockerfiles and notebooks write it (`uv pip`, `python -m pip`, `pip3`),
# its `pip` at the start or after a space or one of _PIP_AFTER (checked apart: a pattern that begins with
# `pip` is searched for as a string, several times faster on a long file).
_PIP_INSTALL = LazyPattern(r"pip3?(?:\.\d+)?\s+install\s+([^\n;&|)`]*)")
_PIP_AFTER = frozenset(";&|(`\"'")
# Options of `pip install` that take a value: the value is no requirement.
_PIP_VALUED = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
                         "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root",
                         "--platform", "--python-version", "--trusted-host", "--src", "--upgrade-strategy",
                         "--python", "--implementation", "--abi", "--only-binary", "--no-binary", "--config-settings"})
# A job launcher's image built in Python (`modal.Image...pip_install([...])`, `uv_pip_install(...)`).
_PIP_CALL = LazyPattern(r"\b(?:uv_)?pip_install\s*\(")
_STRING = LazyPattern(r"\"([^\"\n]{1,300})\"|'([^'\n]{1,300})'")


def _pip_installs(text: str) -> Iterator[re.Match]:
    """_PIP_INSTALL's matches whose `pip` starts the text or follows a space or one of _PIP_AFTER."""
    search, start = _PIP_INSTALL.search, 0
    while (match := search(text, start)) is not None:
        at = match.start()
        if at == 0 or text[at - 1].isspace() or text[at - 1] in _PIP_AFTER:
            yield match
            start = max(match.end(), at + 1)
        else:  # not a command (`mypip install`): a command may still start inside what it took
            start = at + 1


def install_requirements(text: str) -> tuple:
    """(requirement as written, line) of each install command in `text`: `pip install x==1.2` lines of a
    shell script or Dockerfile (continued lines joined), and the strings of a `pip_install(...)` call in a
    Python job launcher. Found once per file: a project's lint asks it for each distribution."""
    found = []
    joined = re.sub(r"\\(\r?\n)", " \0", text) if "\\" in text else text  # a continued line goes on; \0 still counts as a line below
    lines, counted = 1, 0  # the line at offset `counted` of `joined`, counted as the matches go on
    for match in _pip_installs(joined):
        skip = False
        for word in re.finditer(r"[^\s\0\"']+", match.group(1)):
            token = word.group()
            if skip or token.startswith("$"):
                skip = False
                continue
            if token.startswith("-"):
                skip = token in _PIP_VALUED
                continue
            at = match.start(1) + word.start()
            lines += joined.count("\n", counted, at) + joined.count("\0", counted, at)
            counted = at
            found.append((token, lines))
    lines, counted = 1, 0
    for call in _PIP_CALL.finditer(text) if "pip_install" in text else ():
        end = text.find(")", call.end())
        inside = text[call.end():end if end >= 0 else call.end() + 4000][:4000]
        for string in _STRING.finditer(inside):
            at = call.end() + string.start()
            if at >= counted:  # strings of one call come in order; a later call's may start inside it
                lines += text.count("\n", counted, at)
            else:
                lines = text.count("\n", 0, at) + 1
            counted = at
            found.append((string.group(1) or string.group(2), lines))
    return tuple(found)


def _toml(text: str) -> Optional[dict]:
    from .document import LimitExceeded, ParseError
    from .sources.toml import read_toml  # the bounded reader: a hostile pyproject must not hang us

    try:
        read_toml("pyproject.toml", text)
    except (LimitExceeded, ParseError, RecursionError):
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on old interpreters only
        import tomli as tomllib

    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


def _pyproject(reading: _Reading, path: str, names: set) -> list:
    text = reading.text(path)
    table = _toml(text) if text else None
    if not text or not isinstance(table, dict):
        return []
    pins = []
    meta = table.get("project")
    meta = meta if isinstance(meta, dict) else {}
    lists = [meta.get("dependencies")] + list((meta.get("optional-dependencies") or {}).values()
                                              if isinstance(meta.get("optional-dependencies"), dict) else [])
    for entries in lists:
        for entry in entries if isinstance(entries, list) else ():
            spec = _requirement(entry, names) if isinstance(entry, str) else None
            if spec is not None:
                pins.append((spec, reading.where(path, _line_of(text, entry.split(";")[0].strip()) or None)))
    poetry = (table.get("tool") or {}).get("poetry") if isinstance(table.get("tool"), dict) else None
    if isinstance(poetry, dict):
        groups = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        groups += [g.get("dependencies") for g in (poetry.get("group") or {}).values() if isinstance(g, dict)] \
            if isinstance(poetry.get("group"), dict) else []
        for deps in groups:
            for name, value in (deps.items() if isinstance(deps, dict) else ()):
                if canonical(str(name)) not in names:
                    continue
                constraint = value.get("version") if isinstance(value, dict) else value
                spec = poetry_spec(constraint) if isinstance(constraint, str) else "?"
                pins.append((spec if clauses(spec) is not None else "?", reading.where(path, _line_of(text, str(name)))))
    return pins


def _setup_cfg(reading: _Reading, path: str, names: set) -> list:
    text = reading.text(path)
    if not text:
        return []
    import configparser  # here: few projects have a setup.cfg, and every lint would import it

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
        value = parser.get("options", "install_requires", fallback="")
    except (configparser.Error, ValueError):
        return []
    pins = []
    for line in value.splitlines():
        spec = _requirement(line.strip(), names) if line.strip() else None
        if spec is not None:
            pins.append((spec, reading.where(path, _line_of(text, line.strip()))))
    return pins


def _setup_py(reading: _Reading, path: str, names: set) -> list:
    """Requirement strings of setup.py naming the distribution, wherever they stand: an
    install_requires list, a name bound to one, or a `_deps` table the arguments index
    (transformers-style setup.py files). Prose that names it is no requirement."""
    text = reading.text(path, 256 << 10)
    if not text:
        return []
    import ast  # here: a project with a setup.py is the rarer case, and a data config's lint needs no parser of Python

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    pins = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            spec = _requirement(node.value, names)
            if spec and spec != "?":  # a bare name (`deps["trl"]`) or prose says nothing of the release
                pins.append((spec, reading.where(path, node.lineno)))
    return pins


def _locked(reading: _Reading, path: str, names: set) -> Optional[tuple]:
    """(version, where) of a uv.lock / poetry.lock package entry (scanned, not parsed: locks are large)."""
    text = reading.text(path, 8 << 20)
    if not text:
        return None
    for match in re.finditer(r'(?m)^\[\[package\]\]\s*\nname = "([^"\n]+)"\s*\nversion = "([^"\n]+)"', text):
        if canonical(match.group(1)) in names and version_key(match.group(2)) is not None:
            return match.group(2), reading.where(path, text.count("\n", 0, match.start()) + 2)
    return None


def _copy(reading: _Reading, folder: str, dist: Distribution) -> Optional[_Said]:
    """A copy of the framework's package in `folder`, or in the framework's repository checked in
    as a folder of that name (`pkg/pkg/`: a fork vendored whole, or a submodule)."""
    return _copy_at(reading, folder, dist) or _copy_at(reading, os.path.join(folder, dist.package), dist)


def _copy_at(reading: _Reading, folder: str, dist: Distribution) -> Optional[_Said]:
    package = os.path.join(folder, dist.package)
    if not reading.view.is_file(os.path.join(package, "__init__.py")) or not reading.view.may_read(package):
        return None
    for relative in dist.version_files:
        path = os.path.join(folder, relative)
        text = reading.text(path, 64 << 10)
        if text is None:
            continue
        if relative.endswith(".py"):
            match = re.search(r"(?m)^__version__\s*(?::\s*str\s*)?=\s*[\"']([^\"'\n]+)[\"']", text)
            found, line = (match.group(1), text.count("\n", 0, match.start()) + 1) if match else (None, None)
        else:
            found, line = text.strip().splitlines()[0].strip() if text.strip() else None, 1
        if found and version_key(found) is not None:
            return _Said(found, reading.where(path, line), folder)
    return _Said(None, reading.where(package) + "/", folder)


def _folder_says(reading: _Reading, folder: str, dist: Distribution) -> Optional[_Said]:
    names = {canonical(n) for n in dist.names}
    copy = _copy(reading, folder, dist)
    if copy is not None:
        return copy
    for lock in ("uv.lock", "poetry.lock"):
        found = _locked(reading, os.path.join(folder, lock), names)
        if found:
            return _Said(found[0], found[1])
    files, readmes = [], []
    try:
        with os.scandir(folder) as entries:
            names_here = sorted(e.name for e in entries)
        files = [name for name in names_here if re.fullmatch(r"requirements.*\.txt", name)]
        readmes = [name for name in names_here if _README.fullmatch(name)]
        sub = os.path.join(folder, "requirements")
        if os.path.isdir(sub):
            with os.scandir(sub) as entries:
                files += sorted(os.path.join("requirements", e.name) for e in entries if e.name.endswith(".txt"))
    except OSError:
        pass
    pins: list = []
    for name in files[:MAX_REQUIREMENT_FILES]:
        pins += _requirements_file(reading, os.path.join(folder, name), names)
    pins += _pyproject(reading, os.path.join(folder, "pyproject.toml"), names)
    pins += _setup_cfg(reading, os.path.join(folder, "setup.cfg"), names)
    pins += _setup_py(reading, os.path.join(folder, "setup.py"), names)
    if not pins:  # the manifests are what pip installs: a README speaks only where they are silent
        for name in readmes[:MAX_REQUIREMENT_FILES]:
            pins += _readme(reading, os.path.join(folder, name), names)
    return _Said(pins=tuple(pins)) if pins else None


# A folder's README, whose setup section says what to install: `pip install x==1.2`, or the environment the
# authors ran as `pip freeze` or `pip list` prints it (`x==1.2`, `x   1.2`) in a fenced code block.
_README = LazyPattern(r"(?i)readme(?:\.(?:md|markdown|rst|txt))?\Z")
_FENCE = LazyPattern(r" {0,3}(?:```|~~~)")
_LISTED = LazyPattern(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\s*==\s*|[ \t]+)v?(\d+(?:\.\d+)+[A-Za-z0-9.+-]*)\s*\Z")


def _readme(reading: _Reading, path: str, names: set) -> list:
    """(spec, where) of each requirement of `names` a README states: its install commands, and each
    `name==version` or `name  version` line of a fenced code block (a freeze, a `pip list`)."""
    text = reading.text(path)
    if text is None:
        return []
    pins = [(spec, reading.where(path, line)) for token, line in install_requirements(text)
            if (spec := _requirement(token, names)) is not None]
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):  # lines as install_requirements counts them
        if _FENCE.match(line):
            fenced = not fenced
            continue
        listed = _LISTED.match(line) if fenced else None
        if listed is not None and canonical(listed.group(1)) in names:
            pins.append((f"=={listed.group(2)}", reading.where(path, number)))
    return pins


# -- per project: cached, and the project config's `versions` ----------------------------------

_cache: per_run.Cache = per_run.cache()  # (folder, top, distribution, view) -> what the folder says, its reads


def configured(versions: Optional[dict], source: str = "") -> Scoped:
    """Inside the block, `versions = { name = "X" }` of the project config (in `source`) wins: the run
    layer sets it, and the views made in it carry it (lint/project.py `ProjectView.pinned`)."""
    return project.pinning({canonical(k): v for k, v in versions.items()} if versions else {}, source)


def _cached_says(reading: _Reading, folder: str, dist: Distribution) -> Optional[_Said]:
    key = (folder, reading.top, dist, reading.view.key)
    if key not in _cache:
        if len(_cache) >= MAX_CACHED:
            _cache.clear()
        with reads.tracking() as touched:
            said = _folder_says(reading, folder, dist)
        _cache[key] = (said, dict(touched.paths))
    said, touched = _cache[key]
    for path, digest in touched.items():  # replayed: a cached lint result depends on these files too
        reads.replay(path, digest)
    return said


def _levels(folder: str, top: str) -> list:
    """`folder` (absolute) and the folders above it up to `top`, as real paths."""
    folder = project.real_path(folder)
    levels = [folder]
    while folder != top and len(levels) < MAX_LEVELS:
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
        levels.append(folder)
    return levels


def release(dist: Distribution, path: str, known: tuple = (), view: Optional[ProjectView] = None) -> Optional[Release]:
    """The release of `dist` the project of the file at `path` runs, read through `view` (an adapter
    passes the one it was handed; None: the view in force, for the run layer); None when the project
    says nothing of it. `known`: the releases the caller can judge by, which decide whether a range
    names one."""
    view = view if view is not None else ProjectView.now()
    versions, source = view.pinned or ({}, "")
    for name in dist.names:
        if canonical(name) in versions:
            return Release(str(versions[canonical(name)]), f"`versions` in {source or 'the project config'}")
    # What the project says depends on the file's folder alone: its configs ask once for all of them.
    folder = os.path.dirname(os.path.abspath(path))
    if len(_releases) >= MAX_CACHED:
        _releases.clear()
    return reads.kept(_releases, (folder, dist, known, view.key), lambda: _release(dist, path, known, view))


_releases: per_run.Cache = per_run.cache()  # (folder, distribution, known, view) -> (Release, what it touched)


def _release(dist: Distribution, path: str, known: tuple, view: ProjectView) -> Optional[Release]:
    reading = _Reading(view, view.top_of(path))
    for folder in _levels(os.path.dirname(os.path.abspath(path)), reading.top):
        said = _cached_says(reading, folder, dist)
        if said is None:
            continue
        if said.copy is not None or said.version is not None:
            return Release(said.version, said.where, said.copy)
        found = _resolve(said.pins, known)
        return _installed(reading, dist, known) or found if found.version is None else found
    return _installed(reading, dist, known)


def _installed(reading: _Reading, dist: Distribution, known: tuple) -> Optional[Release]:
    """What the project's install commands say (`pip install x==1.2` in a script or Dockerfile, a job
    launcher's `pip_install([...])`), where its requirement files name no single release: the
    commands are what runs. They must agree: two scripts installing two releases say none."""
    pins = _cached_installs(reading, dist)
    if not pins:
        return None
    exacts = {exact(spec) for spec, _ in pins if spec not in ("", "?")}
    if None in exacts or len(exacts) > 1 or any(spec == "?" for spec, _ in pins):
        return Release(None, ", ".join(w for _, w in pins[:4]), spec="?")
    if not exacts:
        return None  # `pip install x` alone: no release named
    return _resolve(tuple((spec, where) for spec, where in pins if spec), known)


# Files a project's install commands stand in, and how much of the project is searched for them.
_INSTALL_FILES = LazyPattern(r"(?i)(?:dockerfile.*|.*\.dockerfile|containerfile|.*\.(?:sh|bash|slurm|sbatch|py))\Z")
MAX_INSTALL_FILES = 4000
MAX_INSTALL_BYTES = 256 << 10


_installs: per_run.Cache = per_run.cache()  # (project top, distribution, view) -> (pins, the reads they took)
_install_files: per_run.Cache = per_run.cache()  # (project top, view) -> ((path, install_requirements), reads)


def _cached_installs(reading: _Reading, dist: Distribution) -> tuple:
    names = {canonical(n) for n in dist.names}

    def pins() -> tuple:
        return tuple((spec, reading.where(path, line)) for path, found in _install_commands(reading)
                     for token, line in found if (spec := _requirement(token, names)) is not None)

    return reads.remembered(_installs, (reading.top, dist, reading.view.key), pins)


def _install_commands(reading: _Reading) -> tuple:
    """(path, its install_requirements) of the project's files that hold install commands, read once per
    project."""
    return reads.remembered(_install_files, (reading.top, reading.view.key), lambda: _scan_installs(reading))


def _scan_installs(reading: _Reading) -> tuple:
    found = ((path, install_requirements(raw.decode("utf-8", "replace")))
             for path, raw in reading.view.contents(reading.top, lambda name: _INSTALL_FILES.match(name) is not None,
                                                    MAX_INSTALL_FILES, MAX_INSTALL_BYTES)
             if b"install" in raw and b"pip" in raw)
    return tuple((path, requirements) for path, requirements in found if requirements)


def _resolve(pins: tuple, known: tuple) -> Release:
    where = ", ".join(w for _, w in pins)
    specs = [s for s, _ in pins]
    if "?" in specs:
        return Release(None, where, spec="?")
    joined = ",".join(s for s in specs if s)
    pinned = exact(joined)
    if pinned is not None:
        return Release(pinned if admits(joined, pinned) else None, where, spec=joined)
    fits = [v for v in known if admits(joined, v)]
    return Release(fits[0] if len(fits) == 1 else None, where, spec=joined or "any")


def copy_reader(folder: str, view: Optional[ProjectView] = None) -> Callable[[str], Optional[str]]:
    """Reads files of a copy of a framework inside the project by their path relative to `folder`,
    through `view` (None: the view in force)."""
    reading = _Reading(view if view is not None else ProjectView.now())
    return lambda relative: reading.text(os.path.join(folder, relative))
