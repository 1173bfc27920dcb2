"""Every file batchlint writes goes through here: `--fix`, `--write-baseline`,
`--output` and the cache index.

`write_atomic` writes a temporary file in the target's folder, flushes it to
disk and renames it over the target, so a reader sees the old file or the new
one, never half of one, and a failure (a full disk, a folder that is not
writable) leaves the old file as it was, removes the temporary file and raises
`WriteError`: an OSError whose message is one line fit for the user.

`rewrite_in_place` is for a file with other hard links, which a rename would
split from them: it keeps a copy of the old content next to the file, writes
the new content into the same inode, and puts the old content back if that
fails.
"""

from __future__ import annotations

import errno as errnos
import os
import stat
import tempfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Union

_TEMP_SUFFIX = ".batchlint-tmp"


class WriteError(OSError):
    """A write that did not happen: `strerror` is the reason ("No space left on
    device"), `filename` the target, str() the whole line."""

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def write_atomic(path: str, data: Union[bytes, str], *, mode: Optional[int] = None,
                 owner: Optional[tuple] = None, follow_symlinks: bool = True, encoding: str = "utf-8") -> None:
    """Replace the file at `path` by `data` (str is encoded, newlines untouched), atomically.

    `mode`: the permission bits of the new file (default: those of the file it
    replaces, else 0o666 less the umask, as `open(path, "w")` would give).
    `owner`: (uid, gid) to give it; when that is not permitted the write fails,
    unless the file already has that owner. `follow_symlinks`: a symlink at
    `path` is written through (its target replaced, the link kept); without it
    the link itself is replaced. Raises WriteError; on any failure the old file
    is intact and no temporary file is left.
    """
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    target = os.path.realpath(path) if follow_symlinks else os.path.abspath(path)
    folder = os.path.dirname(target)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
    try:
        fd, temporary = tempfile.mkstemp(prefix="." + os.path.basename(target)[:64] + ".", suffix=_TEMP_SUFFIX,
                                         dir=folder)
    except OSError as exc:
        raise _error(exc, path) from None
    try:
        try:
            _write_all(fd, payload)
            if owner is not None:
                _chown(fd, owner)
            os.fchmod(fd, mode)  # after fchown, which may clear set-id bits
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException as exc:
        _remove(temporary)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise _error(exc, path) from None
        raise
    _sync_folder(folder)


def rewrite_in_place(path: str, data: bytes, old: bytes) -> None:
    """Write `data` into the file at `path` itself (same inode: hard links, owner,
    mode and ACLs stay). `old` is its current content: a copy of it is written
    next to the file first, and if writing `data` fails the old content is put
    back; if even that fails, the error names the copy, which is then kept.
    Raises WriteError."""
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    try:
        fd, backup = tempfile.mkstemp(prefix="." + os.path.basename(target)[:64] + ".", suffix=".batchlint-old",
                                      dir=folder)
    except OSError as exc:
        raise _error(exc, path) from None
    keep_backup = False
    try:
        try:
            _write_all(fd, old)
            os.fsync(fd)
        finally:
            os.close(fd)
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
        try:
            try:
                _reserve(fd, len(data))
                os.lseek(fd, 0, os.SEEK_SET)
                _write_all(fd, data)
                os.ftruncate(fd, len(data))
                os.fsync(fd)
            except OSError as exc:
                try:
                    os.lseek(fd, 0, os.SEEK_SET)
                    _write_all(fd, old)
                    os.ftruncate(fd, len(old))
                    os.fsync(fd)
                except OSError:
                    keep_backup = True
                    raise WriteError(exc.errno or errnos.EIO, f"{exc.strerror or exc}; the old content is in {backup}",
                                     path) from None
                raise
        finally:
            os.close(fd)
    except OSError as exc:
        if isinstance(exc, WriteError):
            raise
        raise _error(exc, path) from None
    finally:
        if not keep_backup:
            _remove(backup)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - os.write raises rather than return 0 for files
            raise OSError(errnos.EIO, "short write")
        view = view[written:]


def _chown(fd: int, owner: tuple) -> None:
    uid, gid = owner
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) == (uid, gid):
        return
    try:
        os.fchown(fd, uid, gid)
    except PermissionError:
        raise PermissionError(errnos.EPERM, f"cannot keep its owner (uid {uid}, gid {gid})") from None


def _reserve(fd: int, size: int) -> None:
    """Claim the blocks before overwriting anything, so a full disk fails before a byte changes."""
    if not hasattr(os, "posix_fallocate") or size == 0:
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in (errnos.ENOSPC, errnos.EDQUOT, errnos.EFBIG):
            raise
        # EOPNOTSUPP, EINVAL...: the file system cannot tell in advance; write and see


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:  # pragma: no cover - nothing more can be done
        pass


def _error(exc: OSError, path: str) -> WriteError:
    return WriteError(exc.errno or errnos.EIO, exc.strerror or str(exc), path)


def _umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
