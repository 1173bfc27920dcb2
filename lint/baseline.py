"""Baselines: record today's findings so a legacy repository can adopt
batchlint and fail only on new ones.

A finding is matched by code, path and the fingerprint of its line's text, so
it stays matched when lines above it move; matching counts, so a second
identical finding on a copied line is new.
"""

from __future__ import annotations

import json
from collections import Counter

from .atomic import write_atomic
from .codes import canonical
from .config import ConfigError
from .document import SURROGATE
from .fingerprint import SourceLines, fingerprint
from .project import read_bytes

VERSION = 1
# A baseline records every finding of a legacy repository: far more than one config holds.
MAX_BASELINE_BYTES = 1 << 28


def write(path: str, diagnostics: list, lines: SourceLines) -> None:
    entries = [
        {"code": d.code, "path": d.path, "fingerprint": fingerprint(d, lines), "line": d.span.line, "message": d.message}
        for d in diagnostics
    ]
    text = json.dumps({"batchlint_baseline": VERSION, "findings": entries}, indent=2, ensure_ascii=False) + "\n"
    # A path that is not UTF-8 holds lone surrogates: written as \u escapes, the file stays valid
    # UTF-8 and reads back to the same path.
    text = SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    try:
        # A full disk leaves the old baseline as it was. A path that is not UTF-8 keeps its bytes.
        write_atomic(path, text.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise ConfigError(f"cannot write baseline {path}: {exc.strerror or exc}") from None


def load(path: str) -> Counter:
    try:
        # A regular file only (a FIFO would block), bounded.
        data = json.loads(read_bytes(path, MAX_BASELINE_BYTES).decode("utf-8-sig", "surrogateescape"))
        entries = data["findings"]
        return Counter((e["code"], e["path"], e["fingerprint"]) for e in entries)
    except OSError as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, RecursionError):
        raise ConfigError(f"{path} is not a batchlint baseline (write one with --write-baseline)") from None


def new_findings(diagnostics: list, known: Counter, lines: SourceLines) -> list:
    """The findings the baseline does not account for."""
    left: Counter = Counter()
    for (code, path, print_), count in known.items():
        left[(canonical(code), path, print_)] += count  # an entry of a retired code matches its successor
    fresh = []
    for d in diagnostics:
        key = (d.code, d.path, fingerprint(d, lines))
        if left[key] > 0:
            left[key] -= 1
        else:
            fresh.append(d)
    return fresh
