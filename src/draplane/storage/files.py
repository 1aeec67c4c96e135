"""Files of the data dir: private modes, atomic writes, and a clear error for a full disk.

The data dir holds the store, keys and tokens, so it is created 0700 and every file in it 0600
(as etcd does with its data dir). An existing directory keeps its mode, with a warning when
others can read it; files draplane owns are narrowed to 0600 when found wider.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
NEARLY_FULL = 1024 * 1024
"""Below this many available bytes, a SQLite I/O error is taken for a full disk (SQLite
reports some failed writes, e.g. of its -shm file, as I/O errors without the errno)."""


class DiskFullError(OSError):
    """A file could not be written because its filesystem is full (or over quota)."""

    def __init__(self, path: str | Path, cause: BaseException) -> None:
        super().__init__(
            errno.ENOSPC,
            f"cannot write {path}: the disk is full ({cause}); free some space and start again",
        )
        self.path = str(path)

    def __str__(self) -> str:
        return str(self.strerror)


def is_disk_full(exc: BaseException, path: str | Path | None = None) -> bool:
    """Whether `exc` says that the disk is full: an OSError ENOSPC/EDQUOT, SQLite's SQLITE_FULL,
    or a SQLite I/O error while the filesystem of `path` has (almost) no space left."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL:
            return True
        if code is not None and code & 0xFF == sqlite3.SQLITE_IOERR and path is not None:
            return available_bytes(path) < NEARLY_FULL
    return False


def available_bytes(path: str | Path) -> int:
    """Bytes available to this process on the filesystem of `path` (or of its directory)."""
    target = Path(path)
    while not target.exists() and target != target.parent:
        target = target.parent
    try:
        st = os.statvfs(target)
    except OSError:
        return NEARLY_FULL
    return st.f_bavail * st.f_frsize


_warned: set[Path] = set()


def private_dir(path: str | Path) -> Path:
    """Create `path` (and missing parents) 0700; warn (once) when an existing one is open to
    others."""
    path = Path(path)
    if path.is_dir():
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077 and path not in _warned:
            _warned.add(path)
            log.warning(
                "data dir %s has mode %o: others can read it; the recommended mode is 700",
                path,
                mode,
            )
        return path
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    return path


def restrict(path: str | Path) -> None:
    """Narrow an existing file draplane owns to 0600 (missing files are ignored)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_IMODE(os.stat(path).st_mode) & ~FILE_MODE:
            os.chmod(path, FILE_MODE)


def create_private(path: str | Path) -> None:
    """Create `path` empty with mode 0600 unless it exists; narrow it to 0600 if it does."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        restrict(path)
        return
    os.close(fd)


def fsync_dir(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_private(path: str | Path, data: bytes | str) -> None:
    """Replace `path` atomically with `data` (mode 0600) through a temporary file of its own
    beside it (`<name>.<random>.tmp`, so writers racing on one path, such as API server
    replicas sharing a data dir, never rename each other's), which never stays behind;
    DiskFullError when the disk is full, other OSErrors as they are."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
        tmp = Path(name)
        try:
            os.fchmod(fd, FILE_MODE)
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        if is_disk_full(exc):
            raise DiskFullError(path, exc) from exc
        raise


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (created 0600) for the block: processes that
    share a data dir (API server replicas starting at once) take turns."""
    create_private(path)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
