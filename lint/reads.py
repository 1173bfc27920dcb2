"""What linting one file touched besides the file itself: the other files it
read (a launch line's config, a linked DeepSpeed JSON), so a cached result can
be checked against them, and the notices it left (a reference outside the
project, a FIFO skipped), which the CLI prints on stderr."""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping

from .lean_dataclass import field, lean_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, TypeVar

    T = TypeVar("T")


@lean_dataclass
class Touched:
    """What one file's lint read and noticed."""

    paths: dict = field(default_factory=dict)  # absolute path -> sha256 of the bytes read ("" if not read)
    # Of those, the files only looked through as text (a search for the scripts naming a file, for
    # install commands, for a loader of the project's own), never read as a config or a script: a
    # lint that only searched a file judged none of its directives (run.py, BL005).
    searched: set = field(default_factory=set)
    read: set = field(default_factory=set)  # read as a config or a script (not only searched)
    notices: list = field(default_factory=list)
    # Searches through every file of a kind in a folder ("callers:/repo" -> one digest of them all): one
    # entry, not every file read, so a run's cost stays linear in its files (`search`).
    searches: dict = field(default_factory=dict)
    # Only the cache and --fix compare digests: a plain lint records the paths without them ("")
    # and never imports hashlib.
    digests: bool = True


_log: Optional[Touched] = None
_searching = 0  # > 0 inside `searching()`


class searching:
    """`with searching():` the reads inside are a search through files as text (Touched.searched)."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _searching
        _searching += 1

    def __exit__(self, *exc: object) -> None:
        global _searching
        _searching -= 1


def _seen(path: str) -> None:
    assert _log is not None
    (_log.searched if _searching else _log.read).add(path)


def record(path: str, data: Optional[bytes] = None) -> None:
    """`path` was read (its bytes given) or looked for (None: creating it changes the result)."""
    if _log is None:
        return
    absolute = os.path.abspath(path)
    if data is not None:
        _log.paths[absolute] = digest(data) if _log.digests else ""
    else:
        _log.paths.setdefault(absolute, "")
    _seen(absolute)


def replay(path: str, sha256: str) -> None:
    """Record again what an earlier `record` saw (a cached read's digest; "" when looked for):
    `path` as `record` keeps it, absolute."""
    if _log is not None:
        _log.paths[path] = sha256 or _log.paths.get(path, "")
        _seen(path)


def search(key: str, digest: Callable[[], str]) -> None:
    """A search through many files was made (`key`: "kind:folder", which `SEARCHES[kind]` digests
    again for the cache), its result depending on all of them: one entry."""
    if _log is not None and key not in _log.searches:
        _log.searches[key] = digest() if _log.digests else ""


def replay_search(key: str, sha256: str) -> None:
    if _log is not None:
        _log.searches[key] = sha256 or _log.searches.get(key, "")


# kind -> the digest of what a search of that kind reads in a folder now (registered by the module
# that searches: lint/launching/callers.py), for the cache to tell whether a stored result still holds.
SEARCHES: dict = {}


def digest(data: bytes) -> str:
    import hashlib  # here: a lint that keeps no cache and fixes nothing may never need it

    return hashlib.sha256(data).hexdigest()


def notice(message: str) -> None:
    if _log is not None and message not in _log.notices:
        _log.notices.append(message)


class tracking:
    """`with tracking() as touched`: collect in `touched` what `record` and `notice` see inside the
    block (each read's digest with `digests`). A class, not a generator: entered for every file."""

    __slots__ = ("touched", "outer")

    def __init__(self, digests: Optional[bool] = True):
        # None: as the tracking around this one does (a cache of reads made inside a file's lint).
        self.touched = Touched(digests=(_log is not None and _log.digests) if digests is None else digests)

    def __enter__(self) -> Touched:
        global _log
        self.outer, _log = _log, self.touched
        return self.touched

    def __exit__(self, *exc: object) -> None:
        global _log
        _log = self.outer


def remembered(cache: MutableMapping, key: object, compute: Callable[[], T]) -> T:
    """`compute()` once for `key` in `cache` (a per_run cache): a search through files as text, its reads
    recorded once and replayed at every ask (as searched): a cached lint result depends on those files."""
    value, paths, searches, _ = _computed(cache, key, compute)
    with searching():
        for path, digest_, _ in paths:
            replay(path, digest_)
    for key_, digest_ in searches:
        replay_search(key_, digest_)
    return value


def kept(cache: MutableMapping, key: object, compute: Callable[[], T]) -> T:
    """`compute()` once for `key` in `cache` (a per_run cache), and at every ask what it touched, as it
    touched it: a file read as read, a file searched as searched, its searches and its notices."""
    value, paths, searches, notices = _computed(cache, key, compute)
    if _log is not None:
        for path, digest_, read in paths:
            if read:
                replay(path, digest_)
            else:
                with searching():
                    replay(path, digest_)
        for key_, digest_ in searches:
            replay_search(key_, digest_)
        for message in notices:
            notice(message)
    return value


def _computed(cache: MutableMapping, key: object, compute: Callable[[], T]) -> tuple:
    """(value, ((path, digest, whether read rather than searched), ...), searches, notices) of `compute()`,
    computed once for `key` in `cache`: what `remembered` and `kept` replay, each its way."""
    found = cache.get(key)
    if found is None:
        with tracking(digests=None) as touched:
            value = compute()
        found = cache[key] = (value, tuple((path, digest_, path in touched.read) for path, digest_ in touched.paths.items()),
                              tuple(touched.searches.items()), tuple(touched.notices))
    return found


def snapshot() -> tuple:
    """(the reads, the searches) of the lint in progress until now, as `replay` takes them."""
    if _log is None:
        return (), ()
    return tuple(_log.paths.items()), tuple(_log.searches.items())
