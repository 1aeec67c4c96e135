"""Opening a SQLite store without ever reusing a resourceVersion.

The revision marker (`_marker`) records the highest revision the store committed. A store that
is missing, empty or behind its marker has lost acknowledged writes (a deleted or emptied
database, a truncated or corrupted write-ahead log, a file replaced by an older copy); starting
it would hand out those revisions again and let resuming watchers silently miss events, so it
is refused with a `StoreError`. A store the operator restored on purpose (`restored=True`) is
fenced instead, as etcd's restore with `--bump-revision` and `--mark-compacted` does: it
continues after the marker's revision, and its older history is gone (410 Expired).

Runs on the storage's worker thread.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass

from draplane.storage import _sqlite_db as db, files
from draplane.storage._lock import StoreLock
from draplane.storage._marker import RevisionMarker, marker_path, read_marker
from draplane.storage.interface import StoreError

log = logging.getLogger(__name__)

WHAT_TO_DO = (
    "restore it from a backup and start once with --restored-store (resourceVersions then "
    "continue after the highest one issued; watches from before get 410 Gone and re-list), "
    "or start with a new data dir"
)


@dataclass
class Opened:
    conn: sqlite3.Connection
    loaded: db.Loaded
    marker: RevisionMarker
    lock: StoreLock


def open_store(path: str, *, lock_timeout: float, restored: bool) -> Opened:
    lock = StoreLock.acquire(path)
    try:
        return _open_locked(path, lock, lock_timeout=lock_timeout, restored=restored)
    except BaseException:
        lock.release()
        raise


def _open_locked(path: str, lock: StoreLock, *, lock_timeout: float, restored: bool) -> Opened:
    mark = marker_path(path)
    issued = read_marker(mark)
    existed = os.path.exists(path)
    if issued and not existed and not restored:
        raise StoreError(_lost(path, "is missing", issued))
    empty = existed and os.path.getsize(path) == 0
    try:
        conn = db.open_db(path, lock_timeout=lock_timeout)
    except (sqlite3.Error, OSError) as exc:
        raise _cannot_open(path, exc) from exc
    try:
        loaded = _verified(conn, path, issued or 0, empty=empty, restored=restored)
        marker = RevisionMarker.create(mark, loaded.revision)
    except BaseException:
        conn.close()
        raise
    return Opened(conn, loaded, marker, lock)


def _verified(
    conn: sqlite3.Connection, path: str, issued: int, *, empty: bool, restored: bool
) -> db.Loaded:
    try:
        loaded = db.load(conn)
    except sqlite3.Error as exc:
        raise _cannot_open(path, exc) from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise _damaged(path, f"unreadable record: {exc!r}") from exc
    try:
        db.ensure_schema(conn)
        if loaded.revision < issued:
            if not restored:
                state = (
                    "is empty (0 bytes)"
                    if empty
                    else f"is at resourceVersion {loaded.revision} (its write-ahead log "
                    f"{path}-wal was truncated or corrupted, or the file was replaced)"
                )
                raise StoreError(_lost(path, state, issued))
            log.warning(
                "store %s restored at resourceVersion %d: continuing after %d, its event "
                "history is dropped",
                path,
                loaded.revision,
                issued,
            )
            db.fence(conn, issued)
            loaded = db.Loaded(loaded.objects, [], issued)
    except sqlite3.Error as exc:
        raise _cannot_open(path, exc) from exc
    return loaded


def _lost(path: str, state: str, issued: int) -> str:
    return (
        f"store {path} {state}, but resourceVersions up to {issued} were issued "
        f"({marker_path(path)}): acknowledged writes are lost; {WHAT_TO_DO}"
    )


def _damaged(path: str, reason: str) -> StoreError:
    return StoreError(f"store {path} is damaged ({reason}); {WHAT_TO_DO}")


def _cannot_open(path: str, exc: BaseException) -> StoreError:
    if files.is_disk_full(exc, path):
        return StoreError(f"cannot open store {path}: the disk is full ({exc}); free some space")
    code = getattr(exc, "sqlite_errorcode", None)
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return _damaged(path, str(exc))
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(f"store {path} is in use by another process ({exc})")
    return StoreError(f"cannot open store {path}: {exc}")
