"""The revision marker `<store file>.revision`: the highest revision the store ever committed,
kept outside SQLite's files so that losing them (a missing, emptied or replaced database, a
truncated or corrupted write-ahead log) cannot go unnoticed.

It is rewritten in place (one fixed-width line) and made durable after each committed batch,
before any writer of the batch is answered, so no revision that was ever acknowledged or watched
is above it. After a crash between the commit and the marker update it is one batch behind the
database, which is harmless: only a marker *ahead* of the database means lost writes.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from draplane.storage import files
from draplane.storage.interface import StoreError

log = logging.getLogger(__name__)

SUFFIX = ".revision"
_WIDTH = 20


def marker_path(db_path: str) -> str:
    return db_path + SUFFIX


def _line(revision: int) -> bytes:
    return b"%0*d\n" % (_WIDTH, revision)


def read_marker(path: str) -> int | None:
    """The recorded revision, None when there is no marker; StoreError when it is unreadable."""
    try:
        text = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read the revision marker {path}: {exc}") from exc
    try:
        revision = int(text.strip() or b"x")
        if revision < 0:
            raise ValueError(revision)
    except ValueError:
        raise StoreError(
            f"the revision marker {path} is damaged ({text[:40]!r}): it records the highest "
            "resourceVersion the store issued; restore it with the store from a backup, or "
            "start with a new data dir"
        ) from None
    return revision


class RevisionMarker:
    """The open marker file; `advance` after each commit, `ensure_current` before the next."""

    def __init__(self, path: str, fd: int, revision: int) -> None:
        self.path = path
        self._fd = fd
        self.revision = revision
        self._stale = False

    @classmethod
    def create(cls, path: str, revision: int) -> RevisionMarker:
        """Write the marker atomically (0600, durable with its directory entry) and open it."""
        try:
            files.write_private(path, _line(revision))
            files.fsync_dir(os.path.dirname(os.path.abspath(path)))
            # O_DSYNC: each `pwrite` returns once the line is durable (one system call, where
            # `pwrite` + `fdatasync` are two, each a hand-off of the GIL on a busy server).
            fd = os.open(path, os.O_RDWR | os.O_DSYNC)
        except files.DiskFullError as exc:
            raise StoreError(str(exc)) from exc
        except OSError as exc:
            raise StoreError(f"cannot write the revision marker {path}: {exc}") from exc
        return cls(path, fd, revision)

    def _write(self, revision: int) -> None:
        os.pwrite(self._fd, _line(revision), 0)
        self.revision = revision
        self._stale = False

    def advance(self, revision: int) -> None:
        """Record a committed revision. The batch is already durable in the database, so a
        failure here does not fail it: the next commit rewrites the marker first."""
        try:
            self._write(revision)
        except OSError as exc:
            self.revision = revision
            self._stale = True
            log.error("cannot update the revision marker %s: %s", self.path, exc)

    def ensure_current(self) -> None:
        """Rewrite a marker whose last update failed; raises OSError while it still fails."""
        if self._stale:
            self._write(self.revision)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
