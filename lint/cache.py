"""An opt-in cache of lint results (`--cache-dir DIR`), like ruff's.

A result is keyed by the file's bytes and path, under an index per batchlint
version, settings and command-line facts. It also records the other files
linting read (a launch line's config, a linked DeepSpeed JSON) with their size
and mtime, and is reused only while they are unchanged. One index file per
settings, read once and written once, keeps a warm run to reading and hashing
the files. Opt-in because batchlint writes no file it was not asked to.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from typing import Optional

from . import __version__

MAX_ENTRIES = 100_000


class Cache:
    def __init__(self, folder: str, settings, options):
        salt = repr((__version__, settings, options)).encode("utf-8")
        self.index_path = os.path.join(folder, f"{__version__}-{hashlib.sha256(salt).hexdigest()[:16]}.pickle")
        self.entries = self._read_index()
        self.fresh: dict = {}

    def key(self, path: str) -> Optional[str]:
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            return None  # linted without the cache, so the engine reports the error
        return hashlib.sha256(os.path.abspath(path).encode("utf-8") + b"\0" + raw).hexdigest()

    def get(self, key: Optional[str]):
        entry = self.entries.get(key) if key else None
        if entry is None:
            return None
        result, others = entry
        if any(_version(p) != v for p, v in others.items()):
            return None
        self.fresh[key] = entry
        return result

    def put(self, key: Optional[str], result, others: set) -> None:
        if key and result.error is None:
            self.fresh[key] = (result, {p: _version(p) for p in others})

    def save(self) -> None:
        """Keep this run's entries and, room permitting, the older ones."""
        merged = dict(self.fresh)
        for key, entry in self.entries.items():
            if len(merged) >= MAX_ENTRIES:
                break
            merged.setdefault(key, entry)
        try:
            os.makedirs(os.path.dirname(self.index_path), exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(self.index_path))
            with os.fdopen(handle, "wb") as out:
                pickle.dump(merged, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.index_path)
        except OSError:
            pass  # a cache that cannot be written only costs speed

    def _read_index(self) -> dict:
        try:
            with open(self.index_path, "rb") as handle:
                entries = pickle.load(handle)
            return entries if isinstance(entries, dict) else {}
        except (OSError, pickle.PickleError, EOFError, ValueError, TypeError, AttributeError, ImportError):
            return {}


def _version(path: str) -> Optional[tuple]:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
