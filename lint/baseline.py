"""Baselines: record today's findings so a legacy repository can adopt
batchlint and fail only on new ones.

A finding is matched by code, path and the fingerprint of its line's text, so
it stays matched when lines above it move; matching counts, so a second
identical finding on a copied line is new.
"""

from __future__ import annotations

import json
from collections import Counter

from .config import ConfigError
from .fingerprint import SourceLines, fingerprint

VERSION = 1


def write(path: str, diagnostics: list, lines: SourceLines) -> None:
    entries = [
        {"code": d.code, "path": d.path, "fingerprint": fingerprint(d, lines), "line": d.span.line, "message": d.message}
        for d in diagnostics
    ]
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"batchlint_baseline": VERSION, "findings": entries}, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    except OSError as exc:
        raise ConfigError(f"cannot write baseline {path}: {exc.strerror or exc}") from None


def load(path: str) -> Counter:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        entries = data["findings"]
        return Counter((e["code"], e["path"], e["fingerprint"]) for e in entries)
    except OSError as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError):
        raise ConfigError(f"{path} is not a batchlint baseline (write one with --write-baseline)") from None


def new_findings(diagnostics: list, known: Counter, lines: SourceLines) -> list:
    """The findings the baseline does not account for."""
    left = Counter(known)
    fresh = []
    for d in diagnostics:
        key = (d.code, d.path, fingerprint(d, lines))
        if left[key] > 0:
            left[key] -= 1
        else:
            fresh.append(d)
    return fresh
