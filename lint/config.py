"""Project configuration: `[tool.batchlint]` in pyproject.toml, or batchlint.toml.

Each file is linted with the nearest config upward from its own folder, as
ruff finds it (a monorepo's sub-projects each keep their own); a file with
none above it takes the one nearest the working directory. `--config FILE`
names one for every file. A file that is present but broken is a usage error
(exit 2), never silently ignored.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Callable

from .codes import canonical_all
from .directives import CODES, code_matches
from .lean_dataclass import field, lean_dataclass, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


class ConfigError(Exception):
    """A broken project config or option; the CLI prints it and exits 2."""


# Codes a run checks only when a selector names them (`--extend-select BL005`, `select = ["BL"]`,
# ALL), as ruff's default set leaves out RUF100: whether a suppression is used can depend on
# files the run does not lint (the launch script that runs a config), so it is asked for.
OPT_IN = frozenset({"BL005"})


@lean_dataclass
class Settings:
    select: tuple = ()  # empty: every rule but the OPT_IN ones
    extend_select: tuple = ()  # added to `select` (or to the default set)
    ignore: tuple = ()
    exclude: tuple = ()
    per_file_ignores: dict = field(default_factory=dict)  # glob -> codes
    world_size: Optional[int] = None
    global_batch: Optional[int] = None
    root: str = "."  # where exclude and per-file-ignores patterns are anchored
    # Folders outside the project that references may still resolve into (lint/project.py).
    reference_paths: tuple = ()
    source: str = ""  # the config file, for messages
    # `versions = { verl = "0.4.1" }`: the release of a framework the project runs, over what
    # its requirement files say (lint/versions.py).
    versions: dict = field(default_factory=dict)
    fail_on: Optional[str] = None  # `fail-on`: the least severity that fails the run (None: DEFAULT_FAIL_ON)

    def enabled(self, code: str, relpath: str) -> bool:
        """The most specific selector decides, as in ruff: `select BL101, ignore BL1`
        keeps BL101; at equal specificity ignore wins. No select means every code but OPT_IN."""
        chosen = specificity(code, self.select) if self.select else -1 if code in OPT_IN else 0
        if self.extend_select:
            chosen = max(chosen, specificity(code, self.extend_select))
        if chosen < 0 or specificity(code, self.ignore) >= chosen:
            return False
        for pattern, codes in self.per_file_ignores.items():
            if _path_matches(relpath, pattern) and code_matches(code, codes):
                return False
        return True

    def excluded(self, relpath: str) -> bool:
        return any(_path_matches(relpath, pattern) for pattern in self.exclude)

    def excludes(self, path: str) -> bool:
        """Whether `exclude` leaves out the file or folder at `path`."""
        return bool(self.exclude) and self.excluded(self.relative(path))

    def for_path(self, path: str) -> Settings:
        """The settings of `path`: these, for every file (see Configs for the nearest config of each)."""
        return self

    def relative(self, path: str) -> str:
        """A path relative to the config's folder, with forward slashes."""
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        return rel.replace(os.sep, "/")


def specificity(code: str, selectors) -> int:
    """How specific the most specific selector naming `code` is (ALL: 0, BL1: 3), -1 if none."""
    selectors = canonical_all(selectors)  # a retired code selects its successor
    return max((0 if s == "ALL" else len(s) for s in selectors if s == "ALL" or code.startswith(s)), default=-1)


def unknown_codes(settings: Settings, known: set) -> None:
    """Raise ConfigError for a selector that names no rule: a typo would silently
    select nothing (or ignore nothing)."""
    for field_name, selectors in (("select", settings.select), ("extend-select", settings.extend_select),
                                  ("ignore", settings.ignore),
                                  *(("per-file-ignores", codes) for codes in settings.per_file_ignores.values())):
        for selector in selectors:
            if selector != "ALL" and not any(code.startswith(selector) for code in known):
                raise ConfigError(f"{field_name}: {selector!r} names no rule (`batchlint rule --all` lists them)")


def _path_matches(relpath: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relpath, pattern) or fnmatch.fnmatch(relpath, pattern + "/*"):
        return True
    # A pattern without a slash also matches any single path component.
    return "/" not in pattern and any(fnmatch.fnmatch(part, pattern) for part in relpath.split("/"))


# A `[tool.batchlint]` key -> the Settings field it sets.
_FIELDS = {"select": "select", "extend-select": "extend_select", "ignore": "ignore", "exclude": "exclude",
           "reference-paths": "reference_paths", "per-file-ignores": "per_file_ignores", "versions": "versions",
           "fail-on": "fail_on", "world-size": "world_size", "global-batch": "global_batch"}
_KEYS = frozenset(_FIELDS)
# The least severity that makes a run fail (exit 1), as `--fail-on` and `fail-on` say: the findings below it
# are shown, and a commit or a CI job passes with them (yamllint's strict, hadolint's failure-threshold).
FAIL_ON = ("error", "warning", "info")
DEFAULT_FAIL_ON = "warning"


def find_config(start: str) -> Optional[tuple]:
    """(path, table) of the nearest batchlint.toml or pyproject.toml with [tool.batchlint]."""
    folder = os.path.abspath(start)
    while True:
        found = _config_in(folder)
        if found is not None:
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _config_in(folder: str) -> Optional[tuple]:
    """(path, table) of the project config in `folder` itself, or None."""
    for name in ("batchlint.toml", "pyproject.toml"):
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            if name == "pyproject.toml" and not _may_hold_batchlint(candidate):
                continue  # no batchlint table: not ours
            table = _load(candidate)
            section = _tool_section(table)
            if name == "batchlint.toml":
                return candidate, table if section is None else section
            if section is not None:
                return candidate, section
    return None


class Configs:
    """The settings of each file of a run: the nearest project config above the file's folder
    (each loaded once), as `adjust` (the command line's overrides) leaves it; a file with none
    above it takes `default`, the one nearest the working directory. Raises ConfigError for a
    broken config when it is first needed."""

    def __init__(self, adjust: Callable[[Settings], Settings], start: str = "."):
        self.adjust = adjust
        self.default = adjust(load_settings(None, start))
        self._folders: dict = {}  # folder -> its config's path, or "" for none up to the root
        self._given: dict = {}  # a path's folder as given (relative: with the working directory) -> Settings
        self._loaded: dict = {}  # config path -> Settings
        if self.default.source:
            self._loaded[os.path.abspath(os.path.join(self.default.root, os.path.basename(self.default.source)))] = self.default

    def for_path(self, path: str) -> Settings:
        """The settings of the file (or folder) at `path`: those of the folder it is in. (Asked
        for every file, twice: remembered by the folder as written, the paths of one folder
        sharing it.)"""
        given = os.path.dirname(path)
        key = given if os.path.isabs(given) else (os.getcwd(), given)
        found = self._given.get(key)
        if found is None:
            found = self._given[key] = self._settings_of(os.path.dirname(os.path.abspath(path)))
        return found

    def _settings_of(self, folder: str) -> Settings:
        config = self._nearest(folder)
        if not config:
            return self.default
        if config not in self._loaded:
            self._loaded[config] = self.adjust(_settings_from(_table_of(config), config))
        return self._loaded[config]

    def _nearest(self, folder: str) -> str:
        walked = []
        while folder not in self._folders:
            walked.append(folder)
            found = _config_in(folder)
            parent = os.path.dirname(folder)
            if found is not None or parent == folder:
                self._folders[folder] = found[0] if found is not None else ""
                break
            folder = parent
        config = self._folders[folder]
        for seen in walked:
            self._folders[seen] = config
        return config

    def excludes(self, path: str) -> bool:
        return self.for_path(path).excludes(path)

    def all(self) -> list:
        """Every settings used so far, the default first."""
        return [self.default] + [s for s in self._loaded.values() if s is not self.default]


def _table_of(path: str) -> dict:
    """The batchlint table of a config file `_config_in` found."""
    table = _load(path)
    section = _tool_section(table)
    return table if section is None else section


def anchored(patterns, root: str, cwd: str = "") -> tuple:
    """Exclude patterns written relative to the working directory (the command line's) as
    patterns relative to `root`, where a config's patterns are matched. A pattern without a
    slash matches a name anywhere and stays as it is; one that points outside `root` is dropped."""
    cwd = os.path.abspath(cwd or os.getcwd())
    result = []
    for pattern in patterns:
        if "/" not in pattern.strip("/"):
            result.append(pattern)
            continue
        moved = os.path.relpath(os.path.normpath(os.path.join(cwd, pattern)), os.path.abspath(root)).replace(os.sep, "/")
        if moved != ".." and not moved.startswith("../"):
            result.append(moved + ("/" if pattern.endswith("/") else ""))
    return tuple(result)


def _tool_section(table: dict):
    """The [tool.batchlint] table of a parsed file, or None when it has none."""
    tool = table.get("tool")
    return tool.get("batchlint") if isinstance(tool, dict) else None


# The ways a TOML file can hold [tool.batchlint]: a dotted header or key (`[tool.batchlint]`,
# `[tool."batchlint".per-file-ignores]`, `tool.batchlint.select = [...]`), a `[tool]` table
# with a `batchlint` key, an inline `tool = {...}`, or a key spelt with escapes.
_MAY_HOLD_BATCHLINT = rb"""tool["']?[ \t]*\.[ \t]*["']?batchlint|^[ \t]*\[[ \t]*["']?tool["']?[ \t]*\]|tool["']?[ \t]*=[ \t]*\{|\\[uU]"""


def _may_hold_batchlint(path: str) -> bool:
    """Whether a pyproject.toml can hold a [tool.batchlint] table (parsing a large one only
    to find none costs a one-file lint ~10 ms). An unreadable file says yes, so that
    reading it reports why."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return True
    return re.search(_MAY_HOLD_BATCHLINT, raw, re.MULTILINE) is not None  # compiled on first use


def _load(path: str) -> dict:
    # Not the TOML reader's module: its patterns are compiled at import, for configs only.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on old interpreters only
        import tomli as tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def load_settings(config_path: Optional[str] = None, start: str = ".") -> Settings:
    found: Optional[tuple]
    if config_path:
        if os.path.isdir(config_path):
            raise ConfigError(f"--config {config_path}: is a directory, not a config file")
        if not os.path.isfile(config_path):
            raise ConfigError(f"config file not found: {config_path}")
        table = _load(config_path)
        if os.path.basename(config_path) == "pyproject.toml" or "tool" in table:
            section = _tool_section(table)
            table = {} if section is None else section
        found = (config_path, table)
    else:
        found = find_config(start)
    if found is None:
        return Settings(root=os.path.abspath(start))
    path, table = found
    return _settings_from(table, path)


def _settings_from(table: dict, path: str) -> Settings:
    where = os.path.relpath(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.batchlint] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} in [tool.batchlint] (known: {', '.join(sorted(_KEYS))})")
    settings = Settings(root=os.path.dirname(os.path.abspath(path)), source=where)
    settings.select = _codes(table, "select", where)
    settings.extend_select = _codes(table, "extend-select", where)
    settings.ignore = _codes(table, "ignore", where)
    settings.exclude = tuple(_strings(table, "exclude", where))
    settings.reference_paths = tuple(os.path.normpath(os.path.join(settings.root, p))
                                     for p in _strings(table, "reference-paths", where))
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: per-file-ignores must be a table of glob = [codes]")
    settings.per_file_ignores = {glob: _codes(pfi, glob, where) for glob in pfi}
    settings.versions = _versions(table.get("versions", {}), where)
    if "fail-on" in table:
        if table["fail-on"] not in FAIL_ON:
            raise ConfigError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}, got {table['fail-on']!r}")
        settings.fail_on = table["fail-on"]
    for key in ("world-size", "global-batch"):
        if key in table:
            value = table[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where}: {key} must be a positive integer, got {value!r}")
            setattr(settings, key.replace("-", "_"), value)
    return settings


def split_config_args(values: Optional[str] | tuple) -> tuple[Optional[str], dict]:
    """(the config file, {key: value} given inline) of `--config` values, as ruff takes them: a file's
    path, or a TOML `key = value` of [tool.batchlint] applied over each file's config."""
    path, inline = None, {}
    for value in (values,) if isinstance(values, str) else values or ():
        if "=" not in value or os.path.isfile(value):
            if path is not None:
                raise ConfigError(f"--config names two files: {path} and {value}")
            path = value
            continue
        if sys.version_info >= (3, 11):  # here: a run without an inline setting imports no TOML reader
            import tomllib
        else:  # pragma: no cover - exercised on old interpreters only
            import tomli as tomllib
        try:
            inline.update(tomllib.loads(value))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--config {value!r} is neither a file nor a TOML `key = value`: {exc}") from None
    if inline:
        _settings_from(inline, "--config")  # each key checked as a config file's would be
    return path, inline


def overridden(settings: Settings, inline: dict) -> Settings:
    """`settings` with the keys `--config "key = value"` gives replaced."""
    if not inline:
        return settings
    given = _settings_from(inline, os.path.join(settings.root, "--config"))
    return replace(settings, **{_FIELDS[key]: getattr(given, _FIELDS[key]) for key in inline})


def _versions(value, where: str) -> dict:
    from .versions import version_key

    if not isinstance(value, dict):
        raise ConfigError(f'{where}: versions must be a table of distribution = "version"')
    for name, version in value.items():
        if not isinstance(version, str) or version_key(version) is None:
            raise ConfigError(f'{where}: versions.{name} must be a version string like "0.4.1", got {version!r}')
    return dict(sorted(value.items()))


def _strings(table: dict, key: str, where: str) -> list:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    return value


def _codes(table: dict, key: str, where: str) -> tuple:
    return parse_codes(_strings(table, key, where), f"{where}: {key}")


def parse_codes(values, context: str) -> tuple:
    codes = []
    for value in values:
        for code in value.split(","):
            code = code.strip().upper()
            if not code:
                continue
            if not CODES.match(code):
                raise ConfigError(f"{context}: {code!r} is not a rule code or prefix (like BL101 or BL1)")
            codes.append(code)
    return tuple(codes)
