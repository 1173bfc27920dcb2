"""Project configuration: `[tool.batchlint]` in pyproject.toml, or batchlint.toml.

The nearest file upward from the working directory wins. A file that is
present but broken is a usage error (exit 2), never silently ignored.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

from .codes import canonical_all
from .directives import CODES, code_matches


class ConfigError(Exception):
    """A broken project config or option; the CLI prints it and exits 2."""


@dataclass
class Settings:
    select: tuple = ()  # empty: every rule
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

    def enabled(self, code: str, relpath: str) -> bool:
        """The most specific selector decides, as in ruff: `select BL101, ignore BL1`
        keeps BL101; at equal specificity ignore wins. No select means every code."""
        chosen = specificity(code, self.select) if self.select else 0
        if chosen < 0 or specificity(code, self.ignore) >= chosen:
            return False
        for pattern, codes in self.per_file_ignores.items():
            if _path_matches(relpath, pattern) and code_matches(code, codes):
                return False
        return True

    def excluded(self, relpath: str) -> bool:
        return any(_path_matches(relpath, pattern) for pattern in self.exclude)

    def relative(self, path: str) -> str:
        """A path relative to the config's folder, with forward slashes."""
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        return rel.replace(os.sep, "/")


def specificity(code: str, selectors) -> int:
    """How specific the most specific selector naming `code` is (ALL: 0, BL1: 3), -1 if none."""
    selectors = canonical_all(selectors)  # a retired code selects its successor
    return max((0 if s == "ALL" else len(s) for s in selectors if s == "ALL" or code.startswith(s)), default=-1)


def unknown_codes(settings: "Settings", known: set) -> None:
    """Raise ConfigError for a selector that names no rule: a typo would silently
    select nothing (or ignore nothing)."""
    for field_name, selectors in (("select", settings.select), ("ignore", settings.ignore),
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


_KEYS = {"select", "ignore", "exclude", "per-file-ignores", "world-size", "global-batch", "reference-paths", "versions"}


def find_config(start: str) -> Optional[tuple]:
    """(path, table) of the nearest batchlint.toml or pyproject.toml with [tool.batchlint]."""
    folder = os.path.abspath(start)
    while True:
        for name in ("batchlint.toml", "pyproject.toml"):
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                table = _load(candidate)
                section = _tool_section(table)
                if name == "batchlint.toml":
                    return candidate, table if section is None else section
                if section is not None:
                    return candidate, section
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _tool_section(table: dict):
    """The [tool.batchlint] table of a parsed file, or None when it has none."""
    tool = table.get("tool")
    return tool.get("batchlint") if isinstance(tool, dict) else None


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
    if config_path:
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
    settings.ignore = _codes(table, "ignore", where)
    settings.exclude = tuple(_strings(table, "exclude", where))
    settings.reference_paths = tuple(os.path.normpath(os.path.join(settings.root, p))
                                     for p in _strings(table, "reference-paths", where))
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: per-file-ignores must be a table of glob = [codes]")
    settings.per_file_ignores = {glob: _codes(pfi, glob, where) for glob in pfi}
    settings.versions = _versions(table.get("versions", {}), where)
    for key in ("world-size", "global-batch"):
        if key in table:
            value = table[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where}: {key} must be a positive integer, got {value!r}")
            setattr(settings, key.replace("-", "_"), value)
    return settings


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
