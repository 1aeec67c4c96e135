"""SQLite-only behaviour: persistence across restarts and durability of acknowledged writes."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import orjson
import pytest

from draplane.api import errors
from draplane.api.kinds import CONFIGMAPS, NODES, PODS
from draplane.apiserver.storageerrors import to_status
from draplane.storage import Event, StoreError, Watch
from draplane.storage.errors import StorageError
from draplane.storage.sqlite import SqliteStorage
from draplane.testing.builders import make_node, make_pod

POD = PODS.key
NODE = NODES.key
CRASH_WRITER = Path(__file__).with_name("crash_writer.py")


async def take(watch: Watch, n: int) -> list[Event]:
    out: list[Event] = []

    async def collect() -> None:
        async for ev in watch:
            out.append(ev)
            if len(out) == n:
                return

    await asyncio.wait_for(collect(), 5)
    return out


async def _reopen(path: Path, *, history_size: int = 10_000) -> SqliteStorage:
    store = SqliteStorage(str(path), history_size=history_size)
    await store.start()
    return store


async def test_restart_preserves_objects_revisions_and_bytes(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = await _reopen(db)
    odd = make_pod("a").annotation("ünïcode", "☃").set("spec.zeta", {"b": [1, 2.5, None]}).obj()
    await store.create(POD, odd)
    await store.create(NODE, make_node("n").obj())
    await store.create(POD, make_pod("b").obj())
    await store.delete(POD, "default", "b")
    before = {
        "pods": orjson.dumps((await store.list(POD))[0]),
        "nodes": orjson.dumps((await store.list(NODE))[0]),
    }
    await store.close()

    store = await _reopen(db)
    try:
        assert store.revision == 4
        assert orjson.dumps((await store.list(POD))[0]) == before["pods"]
        assert orjson.dumps((await store.list(NODE))[0]) == before["nodes"]
        assert (await store.create(POD, make_pod("c").obj()))["metadata"]["resourceVersion"] == "5"
    finally:
        await store.close()


async def test_restart_watch_resumes_from_pre_restart_revision(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = await _reopen(db)
    await store.create(POD, make_pod("a").obj())
    await store.update(POD, make_pod("a").label("x", "1").obj())
    await store.update(POD, make_pod("a").label("x", "2").obj())
    await store.delete(POD, "default", "a")
    await store.close()

    store = await _reopen(db)
    try:
        watch = store.watch(1)
        await store.create(NODE, make_node("n").obj())
        events = await take(watch, 4)
        await watch.close()
    finally:
        await store.close()

    assert [(e.type, e.revision) for e in events] == [
        ("MODIFIED", 2),
        ("MODIFIED", 3),
        ("DELETED", 4),
        ("ADDED", 5),
    ]
    prevs = [e.prev["metadata"].get("labels") if e.prev else None for e in events]
    assert prevs == [None, {"x": "1"}, {"x": "2"}, None]
    assert events[1].prev is events[0].object


async def test_restart_keeps_trimmed_history_bound(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = await _reopen(db, history_size=2)
    for i in range(5):
        await store.create(POD, make_pod(f"p{i}").obj())
    await store.close()

    store = await _reopen(db, history_size=2)
    try:
        assert (store.revision, store.oldest_revision) == (5, 4)
        with pytest.raises(StorageError) as exc:
            store.watch(2)
        assert to_status(exc.value).code == 410
    finally:
        await store.close()


async def test_restart_after_trailing_delete_keeps_revision(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = await _reopen(db, history_size=1)
    await store.create(POD, make_pod("a").obj())
    await store.delete(POD, "default", "a")
    await store.close()

    store = await _reopen(db, history_size=1)
    try:
        assert store.revision == 2
        assert (await store.list(POD)) == ([], 2)
    finally:
        await store.close()


async def test_unopenable_file_is_store_error(tmp_path: Path) -> None:
    store = SqliteStorage(str(tmp_path / "missing-dir" / "d.db"))

    with pytest.raises(StoreError, match=r"cannot open store .*missing-dir/d\.db"):
        await store.start()


async def test_second_opener_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = await _reopen(tmp_path / "d.db")
    await first.create(POD, make_pod("a").obj())
    second = SqliteStorage(str(tmp_path / "d.db"))

    with pytest.raises(
        StoreError, match=rf"d\.db is in use by another draplane process \(pid {os.getpid()}\)"
    ):
        await second.start()
    await first.create(POD, make_pod("b").obj())  # the refused opener changed nothing
    await first.close()

    third = await _reopen(tmp_path / "d.db")
    try:
        items, _ = await third.list(POD)
        assert sorted(o["metadata"]["name"] for o in items) == ["a", "b"]
    finally:
        await third.close()


async def test_write_after_close_is_status_error(tmp_path: Path) -> None:
    store = await _reopen(tmp_path / "d.db")
    await store.close()

    with pytest.raises(errors.StatusError):
        await store.create(POD, make_pod("a").obj())


async def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CRASH_WRITER),
        str(db),
        "8",
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    acked: list[str] = []
    try:
        while len(acked) < 400:
            line = await asyncio.wait_for(proc.stdout.readline(), 20)
            assert line, "writer exited early"
            acked.append(line.decode().strip())
    finally:
        proc.kill()
        await proc.wait()

    store = await _reopen(db)
    try:
        items, revision = await store.list(CONFIGMAPS.key, "crash")
    finally:
        await store.close()

    stored = {o["metadata"]["name"] for o in items}
    assert set(acked) <= stored
    assert revision >= len(stored) >= len(acked)


async def test_failed_commit_fails_its_writers_and_keeps_state(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = SqliteStorage(str(db), lock_timeout=0.05)
    await store.start()
    await store.create(POD, make_pod("a").obj())
    # Another process holding the write lock makes our commit fail with "database is locked".
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        results = await asyncio.gather(
            store.create(POD, make_pod("b").obj()),
            store.update(POD, make_pod("a").label("x", "y").obj(), expected_rv=1),
            return_exceptions=True,
        )
    finally:
        other.execute("ROLLBACK")
        other.close()

    try:
        assert [getattr(r, "code", None) for r in results] == [500, 500]
        assert store.revision == 1
        assert await store.get(POD, "default", "b") is None
        updated = await store.update(POD, make_pod("a").label("x", "z").obj(), expected_rv=1)
        assert updated["metadata"]["resourceVersion"] == "2"
    finally:
        await store.close()


async def test_batched_writes_to_one_key_persist_the_last_state(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    store = await _reopen(db)
    await asyncio.gather(
        store.create(POD, make_pod("a").obj()),
        store.delete(POD, "default", "a"),
        store.create(POD, make_pod("b").obj()),
        store.update(POD, make_pod("b").label("x", "1").obj()),
        store.delete(POD, "default", "b"),
        store.create(POD, make_pod("b").label("x", "2").obj()),
    )
    await store.close()

    store = await _reopen(db)
    try:
        items, revision = await store.list(POD)
        watch = store.watch(0)
        events = await take(watch, 6)
        await watch.close()
    finally:
        await store.close()

    assert revision == 6
    assert [(o["metadata"]["name"], o["metadata"]["labels"]) for o in items] == [("b", {"x": "2"})]
    assert [e.type for e in events] == ["ADDED", "DELETED", "ADDED", "MODIFIED", "DELETED", "ADDED"]
    assert events[5].object is items[0]


async def test_cancelled_writer_does_not_cancel_its_write(tmp_path: Path) -> None:
    """A caller that goes away (a dropped client) leaves its queued write to commit, and the
    writes batched with it get their answers."""
    db = tmp_path / "d.db"
    store = await _reopen(db)
    try:
        gone = asyncio.ensure_future(store.create(POD, make_pod("a").obj()))
        kept = asyncio.ensure_future(store.create(POD, make_pod("b").obj()))
        await asyncio.sleep(0)  # both queued
        gone.cancel()
        created = await kept

        assert gone.cancelled()
        assert created["metadata"]["resourceVersion"] == "2"
        assert (await store.get(POD, "default", "a"))["metadata"]["resourceVersion"] == "1"
    finally:
        await store.close()

    store = await _reopen(db)
    try:
        items, revision = await store.list(POD)
    finally:
        await store.close()
    assert (revision, sorted(o["metadata"]["name"] for o in items)) == (2, ["a", "b"])


_WITHOUT_ROWID_OBJECTS = """
CREATE TABLE objects (
    resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    revision INTEGER NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
"""


def _objects_without_rowid(db: Path) -> bool:
    conn = sqlite3.connect(db)
    try:
        (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'objects'").fetchone()
    finally:
        conn.close()
    return "WITHOUT ROWID" in str(sql)


@pytest.mark.parametrize("earlier_schema", [False, True], ids=["rowid", "without-rowid"])
async def test_objects_updated_in_place_survive_restart_on_either_schema(
    tmp_path: Path, earlier_schema: bool
) -> None:
    db = tmp_path / "d.db"
    if earlier_schema:
        # A store created before `objects` became a rowid table.
        conn = sqlite3.connect(db)
        conn.executescript(_WITHOUT_ROWID_OBJECTS)
        conn.close()
    store = await _reopen(db)
    for name in ("b", "a", "c"):
        await store.create(POD, make_pod(name).obj())
    a = (await store.list(POD))[0][0]
    a["metadata"]["labels"] = {"step": "1"}
    await store.update(POD, a)
    await store.update(POD, {**a, "metadata": {**a["metadata"], "labels": {"step": "2"}}})
    await store.delete(POD, "default", "c")
    await store.close()

    store = await _reopen(db)
    try:
        pods, revision = await store.list(POD)
        assert revision == 6
        assert [(p["metadata"]["name"], p["metadata"].get("labels")) for p in pods] == [
            ("a", {"step": "2"}),
            ("b", None),
        ]
        assert _objects_without_rowid(db) is earlier_schema
    finally:
        await store.close()
