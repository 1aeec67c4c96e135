"""A SQLite store never starts silently behind what it issued: a missing, emptied, rolled-back
or WAL-damaged database is refused with a clear StoreError; a store restored on purpose is
fenced (it continues after the highest issued revision, older history gone); files are 0600."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from draplane.api.kinds import CONFIGMAPS
from draplane.apiserver.storageerrors import to_status
from draplane.storage import StoreError
from draplane.storage.errors import StorageError
from draplane.storage.factory import open_storage
from draplane.storage.sqlite import SqliteStorage

CM = CONFIGMAPS.key
WAL_HEADER = 32


def _cm(name: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v" * 200}}


async def _write(store: SqliteStorage, names: range) -> int:
    for i in names:
        await store.create(CM, _cm(f"cm-{i}"))
    return store.revision


def _crash_image(src: Path, dst: Path) -> Path:
    """The files of a running store, as a kill -9 would leave them (every acknowledged write
    is on disk: in the database file or in its write-ahead log)."""
    dst.mkdir()
    for name in ("d.db", "d.db-wal", "d.db.revision"):
        if (src / name).exists():
            shutil.copyfile(src / name, dst / name)
    return dst / "d.db"


def _wal_frames(wal: Path) -> tuple[int, int]:
    """(frame size, number of frames) of a WAL file."""
    header = wal.read_bytes()[:WAL_HEADER]
    frame = 24 + int.from_bytes(header[8:12], "big")
    return frame, (wal.stat().st_size - WAL_HEADER) // frame


def _truncate_wal(db: Path) -> None:
    wal = Path(f"{db}-wal")
    frame, frames = _wal_frames(wal)
    os.truncate(wal, WAL_HEADER + frame * (frames // 2))


def _corrupt_wal(db: Path) -> None:
    wal = Path(f"{db}-wal")
    frame, frames = _wal_frames(wal)
    with open(wal, "r+b") as f:
        f.seek(WAL_HEADER + frame * (frames // 2) + 100)
        f.write(b"\xff" * 64)


def _delete_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def _empty_db(db: Path) -> None:
    _delete_db(db)
    db.write_bytes(b"")


Damage = Callable[[Path], None]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        pytest.param(_delete_db, "is missing", id="database-deleted"),
        pytest.param(_empty_db, "is empty (0 bytes)", id="database-emptied"),
        pytest.param(_truncate_wal, "was truncated or corrupted", id="wal-truncated"),
        pytest.param(_corrupt_wal, "was truncated or corrupted", id="wal-corrupted"),
    ],
)
async def test_a_store_that_lost_writes_refuses_to_start(
    tmp_path: Path, damage: Damage, expected: str
) -> None:
    live = tmp_path / "live"
    live.mkdir()
    store = SqliteStorage(str(live / "d.db"))
    await store.start()
    try:
        issued = await _write(store, range(20))
        db = _crash_image(live, tmp_path / "crashed")
    finally:
        await store.close()
    damage(db)

    restarted = SqliteStorage(str(db))
    with pytest.raises(StoreError) as exc:
        await restarted.start()

    message = str(exc.value)
    assert expected in message
    assert f"resourceVersions up to {issued} were issued" in message
    assert "--restored-store" in message and "new data dir" in message
    assert "\n" not in message


async def test_a_database_replaced_by_an_older_copy_refuses_to_start(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    store = SqliteStorage(str(live / "d.db"))
    await store.start()
    try:
        old = await _write(store, range(5))
        shutil.copytree(live, tmp_path / "backup")
        issued = await _write(store, range(5, 10))
    finally:
        await store.close()
    for name in ("d.db", "d.db-wal"):
        (live / name).unlink(missing_ok=True)
        if (tmp_path / "backup" / name).exists():
            shutil.copyfile(tmp_path / "backup" / name, live / name)

    with pytest.raises(StoreError) as exc:
        await SqliteStorage(str(live / "d.db")).start()

    assert f"is at resourceVersion {old}" in str(exc.value)
    assert f"up to {issued} were issued" in str(exc.value)


async def test_a_restored_store_continues_after_every_issued_revision(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    store = SqliteStorage(str(live / "d.db"))
    await store.start()
    try:
        await _write(store, range(20))
        issued = store.revision
        db = _crash_image(live, tmp_path / "crashed")
    finally:
        await store.close()
    _truncate_wal(db)

    restored = SqliteStorage(str(db), restored=True)
    await restored.start()
    try:
        kept, revision = await restored.list(CM, "default")
        created = await restored.create(CM, _cm("after-restore"))
        with pytest.raises(StorageError) as expired:
            restored.watch(issued - 1)
    finally:
        await restored.close()
    reopened = SqliteStorage(str(db))
    await reopened.start()
    try:
        after_restart = (reopened.revision, reopened.oldest_revision)
    finally:
        await reopened.close()

    assert 0 < len(kept) < 20
    assert revision == issued
    assert created["metadata"]["resourceVersion"] == str(issued + 1)
    assert to_status(expired.value).code == 410
    assert after_restart == (issued + 1, issued + 1)


@pytest.mark.parametrize(
    "content", [b"", b"not a number\n", b"-5\n"], ids=["empty", "garbage", "negative"]
)
async def test_a_damaged_revision_marker_refuses_to_start(tmp_path: Path, content: bytes) -> None:
    store = SqliteStorage(str(tmp_path / "d.db"))
    await store.start()
    await _write(store, range(2))
    await store.close()
    (tmp_path / "d.db.revision").write_bytes(content)

    with pytest.raises(StoreError, match=r"revision marker .* is damaged"):
        await SqliteStorage(str(tmp_path / "d.db")).start()


async def test_a_store_without_marker_gets_one_from_its_database(tmp_path: Path) -> None:
    store = SqliteStorage(str(tmp_path / "d.db"))
    await store.start()
    await _write(store, range(3))
    await store.close()
    (tmp_path / "d.db.revision").unlink()

    store = SqliteStorage(str(tmp_path / "d.db"))
    await store.start()
    try:
        created = await store.create(CM, _cm("next"))
    finally:
        await store.close()

    assert created["metadata"]["resourceVersion"] == "4"
    assert int((tmp_path / "d.db.revision").read_text()) == 4


async def test_a_database_that_is_not_sqlite_is_reported_damaged(tmp_path: Path) -> None:
    (tmp_path / "d.db").write_bytes(b"this is not a database" * 200)

    with pytest.raises(StoreError, match=r"d\.db is damaged \(file is not a database\)"):
        await SqliteStorage(str(tmp_path / "d.db")).start()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_store_files_are_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    old_umask = os.umask(0o022)
    try:
        store = open_storage("sqlite", str(data_dir))
        await store.start()
        try:
            await store.create(CM, _cm("a"))
            modes = {p.name: _mode(p) for p in data_dir.iterdir()}
        finally:
            await store.close()
    finally:
        os.umask(old_umask)

    assert _mode(data_dir) == 0o700
    assert modes == {
        "draplane.db": 0o600,
        "draplane.db-wal": 0o600,
        "draplane.db-shm": 0o600,
        "draplane.db.revision": 0o600,
        "draplane.db.lock": 0o600,
    }


async def test_existing_store_files_are_narrowed_to_0600(tmp_path: Path) -> None:
    store = SqliteStorage(str(tmp_path / "d.db"))
    await store.start()
    await store.close()
    os.chmod(tmp_path / "d.db", 0o644)

    store = SqliteStorage(str(tmp_path / "d.db"))
    await store.start()
    try:
        await store.create(CM, _cm("a"))
        modes = {p.name: _mode(p) for p in tmp_path.glob("d.db*")}
    finally:
        await store.close()

    assert set(modes.values()) == {0o600}
