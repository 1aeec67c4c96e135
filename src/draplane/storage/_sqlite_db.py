"""Blocking SQLite access for `SqliteStorage`: schema, loading at start, and one batch commit.

Every function here runs on the storage's single worker thread, never on the event loop.
Tables: `objects` (current state), `events` (bounded log for watch resume, with the previous state
so a resumed watch after a restart still gets `Event.prev`), `meta` (the current revision, which
the tables alone cannot give after a trailing delete). The file and its -wal/-shm are 0600.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from draplane.api.meta import Obj
from draplane.storage import files
from draplane.storage._marker import RevisionMarker
from draplane.storage._writes import Key, event_key, stored_revision
from draplane.storage.interface import Event, EventType

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    revision INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE TABLE IF NOT EXISTS events (
    revision INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    value BLOB NOT NULL,
    prev BLOB
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""

# Objects are updated in place (a REPLACE deletes the row and inserts it again), in a rowid
# table: its rows, whole objects, are far above the size SQLite advises for WITHOUT ROWID
# tables. A transaction of 10 updates: 1.21 -> 0.51 ms (docs/benchmarks-history.md, 2026-12-06,
# "The objects table updated in place").
# Stores created with the earlier WITHOUT ROWID `objects` keep it; every statement here
# serves both.
_UPSERT_OBJECT = (
    "INSERT INTO objects VALUES (?, ?, ?, ?, ?) ON CONFLICT (resource, namespace, name)"
    " DO UPDATE SET revision = excluded.revision, value = excluded.value"
)
_DELETE_OBJECT = "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?"
_INSERT_EVENT = "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)"
_SET_REVISION = "INSERT OR REPLACE INTO meta VALUES ('revision', ?)"
_SET_PROBE = "INSERT OR REPLACE INTO meta VALUES ('probe', ?)"


@dataclass
class Loaded:
    objects: list[tuple[str, Obj]]
    events: list[Event]
    revision: int


def open_db(path: str, *, lock_timeout: float) -> sqlite3.Connection:
    """Open (creating it 0600 when missing) without creating the tables: `load` first checks
    what is there, `ensure_schema` then creates them. `lock_timeout`: seconds to wait for
    another process's lock on the file before failing."""
    # SQLite gives the -wal and -shm files the database file's mode.
    files.create_private(path)
    conn = sqlite3.connect(
        path, timeout=lock_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL: an acknowledged write survives a crash of the process or the machine.
        conn.execute("PRAGMA synchronous=FULL")
    except BaseException:
        conn.close()
        raise
    for suffix in ("-wal", "-shm"):
        files.restrict(path + suffix)
    return conn


def ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)


def load(conn: sqlite3.Connection) -> Loaded:
    """The persisted state; an empty state when the tables do not exist (yet)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"objects", "events", "meta"} <= tables:
        return Loaded([], [], 0)
    current: dict[Key, Obj] = {}
    objects: list[tuple[str, Obj]] = []
    for resource, namespace, name, value in conn.execute(
        "SELECT resource, namespace, name, value FROM objects ORDER BY resource, namespace, name"
    ):
        obj = orjson.loads(value)
        current[resource, namespace, name] = obj
        objects.append((resource, obj))
    row = conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
    revision = int(row[0]) if row else 0
    events = _load_events(conn, current)
    return Loaded(objects, events, revision)


def _load_events(conn: sqlite3.Connection, current: dict[Key, Obj]) -> list[Event]:
    # Events share objects with the current state and with each other, as they did before the
    # restart; stored `prev` is decoded only for the first retained event of a key.
    last: dict[Key, Obj | None] = {}
    events: list[Event] = []
    rows = conn.execute(
        "SELECT revision, type, resource, namespace, name, value, prev FROM events"
        " ORDER BY revision"
    )
    for revision, type_, resource, namespace, name, value, prev_blob in rows:
        key: Key = (resource, namespace, name)
        now = current.get(key)
        obj = now if now is not None and stored_revision(now) == revision else orjson.loads(value)
        if key in last:
            prev = last[key]
        elif prev_blob is not None:
            prev = orjson.loads(prev_blob)
        else:
            prev = None
        event_type: EventType = type_
        events.append(Event(event_type, resource, obj, revision, prev, len(value)))
        last[key] = None if type_ == "DELETED" else obj
    return events


def commit(
    conn: sqlite3.Connection,
    *,
    events: Sequence[Event],
    keep_from: int | None,
    marker: RevisionMarker,
) -> None:
    """Persist a batch in one durable transaction, then record its last revision in the marker;
    on failure nothing of it is kept. Logged events older than `keep_from` (the oldest
    revision the in-memory history still holds; None: no older events than already dropped)
    are dropped."""
    # A batch may hold several writes to one key; only the last decides the stored state.
    final: dict[Key, tuple[Event, bytes]] = {}
    rows: list[tuple[int, str, str, str, str, bytes, bytes | None]] = []
    for ev in events:
        key = event_key(ev)
        value = orjson.dumps(ev.object)
        final[key] = (ev, value)
        prev = None if ev.prev is None else orjson.dumps(ev.prev)
        rows.append((ev.revision, ev.type, *key, value, prev))
    upserts = [(*k, ev.revision, v) for k, (ev, v) in final.items() if ev.type != "DELETED"]
    deletes = [k for k, (ev, _) in final.items() if ev.type == "DELETED"]
    last = events[-1].revision
    marker.ensure_current()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(_UPSERT_OBJECT, upserts)
        if deletes:
            conn.executemany(_DELETE_OBJECT, deletes)
        conn.executemany(_INSERT_EVENT, rows)
        conn.execute(_SET_REVISION, (last,))
        if keep_from is not None:
            conn.execute("DELETE FROM events WHERE revision < ?", (keep_from,))
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
    marker.advance(last)


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def fence(conn: sqlite3.Connection, revision: int) -> None:
    """Continue a restored store after `revision`: its logged events are dropped (a watch or
    snapshot read from before gets 410 Expired) and the next write gets `revision + 1`."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM events")
        conn.execute(_SET_REVISION, (revision,))
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def probe(conn: sqlite3.Connection, value: int) -> None:
    """A durable write that changes no revision: whether the store can write again."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_SET_PROBE, (value,))
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
