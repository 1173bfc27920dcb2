"""An opt-in cache of lint results (`--cache-dir DIR`), like ruff's.

A result is keyed by the file's bytes, its path and the working directory
(results show paths relative to it), under an index per batchlint version,
settings, command-line facts and result schema. It also records the other
files linting read (a launch line's config, a linked DeepSpeed JSON) with the
sha256 of the bytes read, and is reused only while they still hold those bytes
(a file that was looked for and missing must still be missing). A search through
many files (the scripts that may launch a config) is recorded by their stamps
instead: each one's path, size, inode and times, as ruff's and mypy's caches judge
files, so that a warm run stats the project's scripts rather than reading them all;
a script changed within two seconds of its stat is stamped with its bytes' digest
too, since a rewrite within the file system's clock tick keeps its times (git's
"racily clean" files).

A file's bytes are known by their digest, kept in the index with the file's stamp (size, inode, times)
when it was read: a warm run stats a file whose stamp is unchanged instead of reading it again, as git's
index does, unless it changed within two seconds of a stat (project.RACY_NS), where its times cannot tell;
a stamp is kept only when taken before the bytes were read, or when the file had not changed since before
the run began. Through an overlay (`--fix`) or a git revision every file is read.

The index is JSON, read with a size bound and checked field by field: loading
it runs no code, whoever wrote it (a cache folder committed in a pull request
is data, never a program), and a corrupt, truncated, hostile or foreign index
is ignored and rewritten. One index file per settings, read once and written
once (atomically; not at all by a run that found every result in it), keeps a
warm run to reading and hashing the files it lints. Opt-in
because batchlint writes no file it was not asked to.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import time
import typing
from collections.abc import Callable
from typing import Any, Optional

from . import __version__, project, reads
from .atomic import write_atomic
from .diagnostic import Diagnostic
from .document import Span
from .lazy_pattern import LazyPattern
from .lean_dataclass import fields
from .rule import SEVERITIES, Edit, Related

MAX_ENTRIES = 100_000
# The index is read whole: past this it is not read, and a save keeps the newest entries under it.
MAX_INDEX_BYTES = 64 << 20
FORMAT = 3
MAX_STAMPS = 200_000  # files whose stamps the index keeps
_MAX_INT = 1 << 31

_KEY = LazyPattern(r"[0-9a-f]{64}\Z")
_DIGEST = LazyPattern(r"(?:[0-9a-f]{64})?\Z")
_CODE = LazyPattern(r"BL[0-9]{3}\Z")

_SPAN_FIELDS = ("line", "column", "end_line", "end_column", "path")
_DIAGNOSTIC_FIELDS = ("code", "name", "severity", "message", "path", "span", "framework", "fix", "related", "edits",
                      "unsafe_fix", "notes")
_RELATED_FIELDS = ("message", "span", "path")
_EDIT_FIELDS = ("span", "replacement", "path")


class Invalid(ValueError):
    """Stored data that is not what this version writes."""


# Written once into the cache folder: git ignores it, and batchlint's own discovery skips a
# folder tagged as a cache (https://bford.info/cachedir/), in a git checkout or not.
_MARKERS = {
    ".gitignore": "# Automatically created by batchlint.\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by batchlint.\n",
}

class Cache:
    def __init__(self, folder: str, settings, options):
        salt = repr((__version__, settings, options, _schema())).encode("utf-8")
        self.index_path = os.path.join(folder, f"{__version__}-{hashlib.sha256(salt).hexdigest()[:16]}.json")
        self.started = time.time_ns()  # a file not changed since before this is as the run read it
        self.stamps: dict = {}  # absolute path -> ((size, inode, mtime, ctime), sha256 of its bytes), as stored
        self.entries = self._read_index()  # key -> stored entry (checked when used)
        self.stamped: dict = {}  # the same, of the files this run knew the digest of
        self.fresh: dict = {}  # key -> entry of this run
        self.digests: dict = {}  # path -> sha256 of its bytes now ("" when unreadable)
        self.searched: dict = {}  # "kind:folder" -> sha256 of what that search reads now
        self.project = options.project  # where a search may look, as the lint's
        try:
            self.cwd = os.getcwd()  # results show paths relative to it
        except OSError:
            self.cwd = ""

    def key(self, path: str) -> Optional[str]:
        if not self.cwd:
            return None
        try:
            content = self._content(path)
        except OSError:
            return None  # linted without the cache, so the engine reports it
        where = f"{self.cwd}\0{os.path.abspath(path)}\0{content}".encode("utf-8", "surrogateescape")
        return hashlib.sha256(where).hexdigest()

    def _content(self, path: str) -> str:
        """The sha256 of the bytes of the file at `path`: the one stored, without a read, while the file's
        stamp is the one stored with it; else read, keeping the stamp taken before the read. Raises OSError
        as project.read_bytes."""
        absolute = os.path.abspath(path)
        stamp = None
        if not project.ProjectView.now().substituted:
            try:
                info = os.stat(path)
            except OSError:
                info = None
            if info is not None and stat.S_ISREG(info.st_mode) and not project.is_racy(info) and _storable(info):
                stamp = project.stamp_of(info)
                known = self.stamps.get(absolute)
                if known is not None and known[0] == stamp:
                    self.stamped[absolute] = known
                    return known[1]
        digest = reads.digest(project.read_bytes(path))
        if stamp is not None:
            self.stamped[absolute] = (stamp, digest)  # taken before the read: a change after it shows
        return digest

    def get(self, key: Optional[str]):
        """The stored FileResult for `key`, if every file it read still has the bytes it read."""
        entry = self.entries.get(key) if key else None
        if entry is None:
            return None
        try:
            others = _others(entry.get("others"))
            if any(self._digest(path) != value for path, value in others.items()):
                return None
            if any(self._search(key_) != value for key_, value in _searches(entry.get("searches", {})).items()):
                return None
            result = result_from_dict(entry.get("result"))
        except (Invalid, RecursionError):
            return None
        self.fresh[key] = entry
        return result

    def _search(self, key: str) -> str:
        if key not in self.searched:
            kind, _, folder = key.partition(":")
            searcher = reads.SEARCHES.get(kind)
            if searcher is None:
                import importlib

                importlib.import_module(".launching.callers", __package__)  # the searches it registers
                searcher = reads.SEARCHES.get(kind)
            if searcher is None:
                self.searched[key] = ""
            else:
                with project.using(self.project) if self.project is not None else contextlib.nullcontext():
                    self.searched[key] = searcher(folder)
        return self.searched[key]

    def put(self, key: Optional[str], result, others) -> None:
        """Keep `result`; `others`: {absolute path: sha256 read} of the other files linting read
        (a set of paths is digested now)."""
        if not key or getattr(result, "error", None) is not None or getattr(result, "traceback", None):
            return
        others = getattr(others, "paths", others)  # a reads.Touched
        if not isinstance(others, dict):
            others = {os.path.abspath(p): self._digest(os.path.abspath(p)) for p in others}
        for path, digest in others.items():
            if isinstance(path, str) and isinstance(digest, str):
                self._stamp_read(path, digest)
        try:
            entry = {"result": result_to_dict(result), "others": {str(p): str(d) for p, d in others.items()},
                     "searches": {str(k): str(d) for k, d in getattr(result, "searches", {}).items()}}
        except Invalid:
            return  # a field this cache cannot store as data: not cached
        self.fresh[key] = entry

    def save(self) -> None:
        """Keep this run's entries and, room permitting, the older ones. A run that found every result it
        used in the index, and put none, leaves it as it is: writing it again would change nothing kept."""
        if self.entries and all(self.entries.get(key) is entry for key, entry in self.fresh.items()) and all(
                self.stamps.get(path) == known for path, known in self.stamped.items()):
            return
        stamps = dict(self.stamped)
        for path, known in self.stamps.items():
            if len(stamps) >= MAX_STAMPS:
                break
            stamps.setdefault(path, known)
        try:
            stamps_text = json.dumps({path: [*stamp, digest] for path, (stamp, digest) in stamps.items()})
        except (TypeError, ValueError):
            stamps_text = "{}"
        parts: list[str] = []
        size = 64 + len(stamps_text)  # stamps are at most MAX_STAMPS short lines: the entries take what is left
        for key, entry in list(self.fresh.items()) + [(k, e) for k, e in self.entries.items() if k not in self.fresh]:
            if len(parts) >= MAX_ENTRIES:
                break
            try:
                # ASCII: a path that is not UTF-8 (a lone surrogate) survives as an escape.
                part = f"{json.dumps(key)}: {json.dumps(entry, allow_nan=False)}"
            except (TypeError, ValueError, RecursionError):
                continue
            size += len(part) + 2
            if size > MAX_INDEX_BYTES:
                break
            parts.append(part)
        text = '{"batchlint_cache": %d, "version": %s, "stamps": %s, "entries": {\n%s\n}}\n' % (
            FORMAT, json.dumps(__version__), stamps_text, ",\n".join(parts))
        try:
            folder = os.path.dirname(self.index_path)
            os.makedirs(folder, exist_ok=True)
            for name, content in _MARKERS.items():  # as ruff and pytest do: never committed, never linted
                if not os.path.lexists(os.path.join(folder, name)):
                    write_atomic(os.path.join(folder, name), content, follow_symlinks=False)
            write_atomic(self.index_path, text, follow_symlinks=False)  # a planted symlink is replaced, not followed
        except OSError:
            pass  # a cache that cannot be written only costs speed

    def _digest(self, path: str) -> str:
        if path not in self.digests:
            try:
                self.digests[path] = self._content(path)
            except OSError:
                self.digests[path] = ""
        return self.digests[path]

    def _stamp_read(self, path: str, digest: str) -> None:
        """Keep the stamp of a file a lint read (`digest`: of the bytes it read) when the file has not changed
        since well before the run began: those are the bytes the stamp stands for."""
        if not digest or path in self.stamped or project.ProjectView.now().substituted:
            return
        try:
            info = os.stat(path)
        except OSError:
            return
        if stat.S_ISREG(info.st_mode) and max(info.st_mtime_ns, info.st_ctime_ns) < self.started - project.RACY_NS \
                and _storable(info):
            self.stamped[path] = (project.stamp_of(info), digest)

    def _read_index(self) -> dict:
        """The stored entries; {} for anything that is not an index this version wrote."""
        try:
            data = json.loads(_read_bounded(self.index_path, MAX_INDEX_BYTES))
            if not isinstance(data, dict) or (data.get("batchlint_cache"), data.get("version")) != (FORMAT, __version__):
                return {}
            entries = data.get("entries")
            if not isinstance(entries, dict):
                return {}
            self.stamps = _stamps(data.get("stamps"))
            return {k: e for k, e in entries.items() if isinstance(k, str) and _KEY.match(k) and isinstance(e, dict)}
        except Exception:  # noqa: BLE001 - a cache that cannot be read only costs speed
            return {}


def _read_bounded(path: str, limit: int) -> bytes:
    """A regular file's bytes, not through a symlink, at most `limit` of them; raises OSError or Invalid."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise Invalid("not a cache index")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise Invalid("not a cache index")
    return data


def _storable(info: os.stat_result) -> bool:
    """Whether a stamp's numbers are of the range an index holds (`_stamps`): a time before 1970 is not."""
    return all(type(n) is int and 0 <= n < 1 << 64 for n in project.stamp_of(info))


def _stamps(value) -> dict:
    """{absolute path: ((size, inode, mtime, ctime), sha256)} as stored; {} unless every one is of that form."""
    if not isinstance(value, dict) or len(value) > MAX_STAMPS:
        return {}
    found = {}
    for path, stored in value.items():
        if not (isinstance(path, str) and os.path.isabs(path) and isinstance(stored, list) and len(stored) == 5
                and all(type(n) is int and 0 <= n < 1 << 64 for n in stored[:4])
                and isinstance(stored[4], str) and _KEY.match(stored[4])):
            return {}
        found[path] = (tuple(stored[:4]), stored[4])
    return found


def _searches(value) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(d, str) and _DIGEST.match(d)
                                              for k, d in value.items()):
        raise Invalid("searches")
    return value


def _others(value) -> dict:
    if not isinstance(value, dict):
        raise Invalid("others")
    for path, digest in value.items():
        if not isinstance(digest, str) or not _DIGEST.match(digest) or not os.path.isabs(path):
            raise Invalid("others")
    return value


# -- FileResult as data ---------------------------------------------------------------

def result_to_dict(result) -> dict:
    """Every field of a FileResult: diagnostics explicitly, the rest as plain data."""
    out = {}
    for f in fields(result):
        value = getattr(result, f.name)
        out[f.name] = [diagnostic_to_dict(d) for d in value] if f.name == "diagnostics" else _plain(value)
    return out


def result_from_dict(data):
    """The FileResult `data` describes; raises Invalid unless every field is there with its type."""
    from .engine import FileResult

    names = [f.name for f in fields(FileResult)]
    if not isinstance(data, dict) or set(data) != set(names):
        raise Invalid("result")
    hints = _hints(FileResult)
    values: dict[str, Any] = {}
    for name in names:
        if name == "diagnostics":
            values[name] = [diagnostic_from_dict(d) for d in _list(data[name])]
        else:
            values[name] = _typed(hints.get(name, Any), data[name])
    if not isinstance(values.get("path"), str):
        raise Invalid("path")
    return FileResult(**values)


def diagnostic_to_dict(d: Diagnostic) -> dict:
    _same_fields(Diagnostic, _DIAGNOSTIC_FIELDS)
    return {
        "code": d.code, "name": d.name, "severity": d.severity, "message": d.message, "path": d.path,
        "span": span_to_list(d.span), "framework": d.framework, "fix": d.fix,
        "related": [related_to_dict(r) for r in d.related], "edits": [edit_to_dict(e) for e in d.edits],
        "unsafe_fix": d.unsafe_fix, "notes": list(d.notes),
    }


def diagnostic_from_dict(data) -> Diagnostic:
    _keys(data, _DIAGNOSTIC_FIELDS)
    code = _str(data["code"])
    if not _CODE.match(code):
        raise Invalid("code")
    severity = _str(data["severity"])
    if severity not in SEVERITIES:
        raise Invalid("severity")
    return Diagnostic(
        code, _str(data["name"]), severity, _str(data["message"]), _str(data["path"]), span_from_list(data["span"]),
        _optional_str(data["framework"]), _optional_str(data["fix"]),
        tuple(related_from_dict(r) for r in _list(data["related"])),
        tuple(edit_from_dict(e) for e in _list(data["edits"])),
        _bool(data["unsafe_fix"]), tuple(_str(n) for n in _list(data["notes"])),
    )


def related_to_dict(r: Related) -> dict:
    _same_fields(Related, _RELATED_FIELDS)
    assert r.span is not None  # a Finding drops the related places that have none
    return {"message": r.message, "span": span_to_list(r.span), "path": r.path}


def related_from_dict(data) -> Related:
    _keys(data, _RELATED_FIELDS)
    return Related(_str(data["message"]), span_from_list(data["span"]), _optional_str(data["path"]))


def edit_to_dict(e: Edit) -> dict:
    _same_fields(Edit, _EDIT_FIELDS)
    return {"span": span_to_list(e.span), "replacement": e.replacement, "path": e.path}


def edit_from_dict(data) -> Edit:
    _keys(data, _EDIT_FIELDS)
    return Edit(span_from_list(data["span"]), _str(data["replacement"]), _optional_str(data["path"]))


def span_to_list(span: Span) -> list:
    if Span._fields != _SPAN_FIELDS:
        raise Invalid("Span has fields this cache does not know")
    return [span.line, span.column, span.end_line, span.end_column, span.path]


def span_from_list(data) -> Span:
    if not isinstance(data, list) or len(data) != len(_SPAN_FIELDS):
        raise Invalid("span")
    line, column, end_line, end_column = (_int(v) for v in data[:4])
    return Span(line, column, end_line, end_column, _optional_str(data[4]))


# -- checks -----------------------------------------------------------------------------

def _schema() -> tuple:
    """What a stored result looks like: another shape is another index."""
    from .engine import FileResult

    return (FORMAT, tuple(f.name for f in fields(FileResult)),
            tuple(f.name for f in fields(Diagnostic)), tuple(Span._fields),
            tuple(f.name for f in fields(Related)), tuple(f.name for f in fields(Edit)))


def _same_fields(cls, expected: tuple) -> None:
    if tuple(f.name for f in fields(cls)) != expected:
        raise Invalid(f"{cls.__name__} has fields this cache does not know")


def _keys(data, expected: tuple) -> None:
    if not isinstance(data, dict) or len(data) != len(expected) or any(k not in data for k in expected):
        raise Invalid("fields")


def _str(value) -> str:
    if not isinstance(value, str):
        raise Invalid("str")
    return value


def _optional_str(value) -> Optional[str]:
    return None if value is None else _str(value)


def _bool(value) -> bool:
    if not isinstance(value, bool):
        raise Invalid("bool")
    return value


def _int(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < _MAX_INT:
        raise Invalid("int")
    return value


def _list(value) -> list:
    if not isinstance(value, list):
        raise Invalid("list")
    return value


_SCALARS = (str, int, float, bool, type(None))


def _plain(value):
    """`value` as JSON data (tuples become lists); raises Invalid for anything else."""
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid("float")
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(v) for k, v in value.items()}
    raise Invalid(f"{type(value).__name__} is not plain data")


def _hints(cls) -> dict:
    """The resolved annotations of `cls`, resolved once: typing evaluates each annotation string anew on
    every call, which cost more than reading a warm cache's entries did."""
    found = _HINTS.get(cls)
    if found is None:
        try:
            found = typing.get_type_hints(cls, localns=_TYPING_NAMES)
        except Exception:  # noqa: BLE001 - an annotation that does not resolve: such fields take scalars only
            found = {}
        _HINTS[cls] = found
    return found


_HINTS: dict = {}
# The names of typing's that annotations use: batchlint's modules import them for the type checker only
# (lint/annotations.py), so they are not in the modules whose annotations are resolved here.
_TYPING_NAMES = {name: getattr(typing, name) for name in ("Any", "ClassVar", "NoReturn", "Optional", "Union")}


def _typed(hint, value):
    """`value` checked against the annotation `hint`; a bare list or dict holds scalars."""
    return _checker(hint)(value)


def _checker(hint) -> Callable[[Any], Any]:
    """The check `_typed` makes for `hint`, built once per annotation: a warm run checks every field
    of every stored result, and reading the annotation again for each was most of its time."""
    try:
        return _CHECKERS[hint]
    except KeyError:
        pass
    except TypeError:  # an annotation that cannot be a key: checked, not remembered
        return _build_checker(hint)
    found = _CHECKERS[hint] = _build_checker(hint)
    return found


_CHECKERS: dict = {}


def _build_checker(hint) -> Callable[[Any], Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return _scalar
    if origin is typing.Union or (origin is not None and type(hint).__name__ == "UnionType"):
        options = [_checker(option) for option in args]

        def union(value):
            for option in options:
                try:
                    return option(value)
                except Invalid:
                    continue
            raise Invalid("union")
        return union
    if hint is type(None) or hint is None:
        return _none
    if hint is bool:
        return _bool
    if hint is int:
        return _any_int
    if hint is float:
        return _float
    if hint is str:
        return _str
    if hint in (list, tuple) or origin in (list, tuple):
        as_tuple = hint is tuple or origin is tuple
        if origin is tuple and args and args[-1] is not Ellipsis:
            each = [_checker(a) for a in args]

            def fixed(value):
                items = _list(value)
                if len(each) != len(items):
                    raise Invalid("tuple")
                return tuple(check(v) for check, v in zip(each, items))
            return fixed
        item = _checker(args[0] if args else Any)

        def sequence(value):
            checked = [item(v) for v in _list(value)]
            return tuple(checked) if as_tuple else checked
        return sequence
    if hint is dict or origin is dict:
        key_hint, item_hint = args if len(args) == 2 else (str, Any)
        key, item = _checker(key_hint), _checker(item_hint)

        def mapping(value):
            if not isinstance(value, dict):
                raise Invalid("dict")
            return {key(k): item(v) for k, v in value.items()}
        return mapping

    def unstored(value):
        raise Invalid(f"no stored form for {hint!r}")
    return unstored


def _scalar(value):
    if not isinstance(value, _SCALARS):
        raise Invalid("scalar")
    return value


def _none(value):
    if value is not None:
        raise Invalid("None")
    return None


def _any_int(value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise Invalid("int")
    return value


def _float(value):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise Invalid("float")
    return float(value)
