"""The store lock `<store file>.lock`: one process at a time opens a SQLite store.

Two API servers on one SQLite file would each keep their own in-memory state and revision
counter, and their writes would then collide in the database (`UNIQUE constraint failed`). The
second process is refused at start instead, before it reads or writes anything: the lock is an
exclusive `flock` on the lock file, held for as long as the store is open and released by the
kernel when the process ends, so a crashed server never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os

from draplane.storage.interface import StoreError

SUFFIX = ".lock"


class StoreLock:
    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, db_path: str) -> StoreLock:
        """The lock of the store at `db_path`; StoreError when another process holds it."""
        path = db_path + SUFFIX
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise StoreError(
                f"store {db_path} is in use by another draplane process{holder} (lock {path}); "
                "stop it first, or use another --data-dir (several API servers share one store "
                "through etcd: --store etcd --etcd-servers ...)"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, b"%d\n" % os.getpid())
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def _holder(fd: int) -> str:
    """`" (pid N)"` from the lock file, or "" when it does not say."""
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
