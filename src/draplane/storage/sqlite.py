"""`SqliteStorage`: the shared in-memory engine made durable in one SQLite file (WAL, FULL sync).

Group commit: each write is checked against the committed state plus a pending overlay (so later
writes in a batch see earlier ones), queued, and one committer task persists everything queued
in a single transaction on a dedicated thread. Only then does the batch become visible to reads
and watches and do the writers' calls return.

Opening checks the store against its revision marker (see `_recovery`). A commit that fails
for lack of disk space fails its writers with 507 InsufficientStorage, and `check()` fails
until a probe write succeeds again.
"""

from __future__ import annotations

import asyncio
import builtins
import itertools
import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.storage import _sqlite_db as db, files
from draplane.storage._engine import DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_SIZE, Engine
from draplane.storage._lock import StoreLock
from draplane.storage._marker import RevisionMarker
from draplane.storage._recovery import open_store
from draplane.storage._writes import (
    Key,
    event_key,
    object_key,
    plan_create,
    plan_delete,
    plan_update,
)
from draplane.storage.interface import Event, Storage, StoreError, Watch

log = logging.getLogger(__name__)

_Pending = tuple[Event, "asyncio.Future[Obj]"]
_Batch = list[_Pending]


def insufficient_storage(path: str, exc: BaseException) -> errors.StatusError:
    return errors.StatusError(
        507,
        "InsufficientStorage",
        f"Insufficient storage: cannot write {path}: {exc}; writes fail until disk space is "
        "freed (reads still work)",
    )


class SqliteStorage:
    def __init__(
        self,
        path: str,
        *,
        history_size: int = DEFAULT_HISTORY_SIZE,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
        lock_timeout: float = 5.0,
        restored: bool = False,
    ) -> None:
        """`restored`: the database was restored from a backup on purpose; when it is behind
        its revision marker, continue after the marker instead of refusing to start."""
        self._path = path
        self._lock_timeout = lock_timeout
        self._restored = restored
        self._engine = Engine(history_size=history_size, history_bytes=history_bytes)
        self._conn: sqlite3.Connection | None = None
        self._marker: RevisionMarker | None = None
        self._lock: StoreLock | None = None
        self._write_error: errors.StatusError | None = None
        """Set while the store cannot write for lack of space (cleared by a good commit)."""
        self._probes = itertools.count(1)
        self._executor: ThreadPoolExecutor | None = None
        # Writes accepted but not yet committed: key -> (state or None when deleted, revision).
        self._overlay: dict[Key, tuple[Obj | None, int]] = {}
        self._queue: _Batch = []
        self._pending_revision = 0
        self._trimmed_to = 0
        """The `keep_from` of the last commit that dropped old logged events."""
        self._wake: asyncio.Event | None = None
        self._committer: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def revision(self) -> int:
        return self._engine.revision

    @property
    def oldest_revision(self) -> int:
        return self._engine.oldest_revision

    async def start(self) -> None:
        """StoreError when the store cannot be opened, or must not be (see `_recovery`)."""
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="draplane-sqlite")
        loop = asyncio.get_running_loop()
        opener = partial(
            open_store, self._path, lock_timeout=self._lock_timeout, restored=self._restored
        )
        try:
            opened = await loop.run_in_executor(self._executor, opener)
        except BaseException as exc:
            self._executor.shutdown(wait=False)
            if isinstance(exc, StoreError) or not isinstance(exc, Exception):
                raise
            raise StoreError(f"cannot open store {self._path}: {exc}") from exc
        self._conn, self._marker, loaded = opened.conn, opened.marker, opened.loaded
        self._lock = opened.lock
        self._engine.load(objects=loaded.objects, events=loaded.events, revision=loaded.revision)
        self._pending_revision = loaded.revision
        self._wake = asyncio.Event()
        self._committer = asyncio.create_task(self._commit_loop(), name="sqlite-committer")

    async def close(self) -> None:
        if self._closing or self._committer is None:
            self._closing = True
            return
        self._closing = True
        assert self._wake is not None
        self._wake.set()
        await self._committer
        self._engine.end_watches()
        if self._executor is not None:
            conn = self._conn
            if conn is not None:
                await asyncio.get_running_loop().run_in_executor(self._executor, conn.close)
            if self._marker is not None:
                self._marker.close()
            self._executor.shutdown(wait=True)
        if self._lock is not None:
            self._lock.release()

    async def check(self) -> None:
        if self._closing or self._conn is None:
            raise errors.internal("storage is closed or not started")
        if self._write_error is None:
            return
        # The last commit failed for lack of space: ready again once a write gets through.
        probe = partial(db.probe, self._conn, next(self._probes))
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, probe)
        except Exception as exc:
            if files.is_disk_full(exc, self._path):
                raise insufficient_storage(self._path, exc) from exc
            raise errors.internal(f"storage probe failed: {exc}") from exc
        self._write_error = None

    async def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self._engine.get(resource, namespace, name)

    async def list(self, resource: str, namespace: str | None = None) -> tuple[list[Obj], int]:
        return self._engine.list(resource, namespace), self._engine.revision

    async def list_at(
        self, resource: str, namespace: str | None, revision: int
    ) -> builtins.list[Obj]:
        return self._engine.list_at(resource, namespace, revision)

    async def create(self, resource: str, obj: Obj) -> Obj:
        key = object_key(resource, obj)
        event = plan_create(
            resource=resource, obj=obj, current=self._current(key), revision=self._next()
        )
        return await self._submit(key, event)

    async def update(self, resource: str, obj: Obj, *, expected_rv: int | None = None) -> Obj:
        key = object_key(resource, obj)
        event = plan_update(
            resource=resource,
            obj=obj,
            current=self._current(key),
            expected_rv=expected_rv,
            revision=self._next(),
        )
        return await self._submit(key, event)

    async def delete(
        self, resource: str, namespace: str, name: str, *, expected_rv: int | None = None
    ) -> Obj:
        key = (resource, namespace, name)
        event = plan_delete(
            resource=resource,
            name=name,
            current=self._current(key),
            expected_rv=expected_rv,
            revision=self._next(),
        )
        return await self._submit(key, event)

    def watch(self, from_revision: int) -> Watch:
        if self._closing:
            raise errors.internal("storage is closed")
        return self._engine.watch(from_revision)

    def _current(self, key: Key) -> Obj | None:
        pending = self._overlay.get(key)
        if pending is not None:
            return pending[0]
        return self._engine.get(*key)

    def _next(self) -> int:
        if self._closing or self._wake is None:
            raise errors.internal("storage is closed or not started")
        return self._pending_revision + 1

    async def _submit(self, key: Key, event: Event) -> Obj:
        assert self._wake is not None
        self._pending_revision = event.revision
        self._overlay[key] = (None if event.type == "DELETED" else event.object, event.revision)
        future: asyncio.Future[Obj] = asyncio.get_running_loop().create_future()
        self._queue.append((event, future))
        self._wake.set()
        # A cancelled caller cancels only its future, not the write: that is already ordered
        # behind others, and the committer skips futures that are done. (No shield: it would
        # cost every write two more turns of the event loop.)
        return await future

    async def _commit_loop(self) -> None:
        assert self._wake is not None
        while True:
            if not self._queue:
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            batch, self._queue = self._queue, []
            await self._commit(batch)

    async def _commit(self, batch: _Batch) -> None:
        events = [ev for ev, _ in batch]
        assert self._conn is not None and self._marker is not None and self._executor is not None
        # New events are above the history's oldest revision: while that stays put, no logged
        # event is due to be dropped.
        keep_from = self._engine.oldest_revision
        persist = partial(
            db.commit,
            self._conn,
            events=events,
            keep_from=keep_from if keep_from > self._trimmed_to else None,
            marker=self._marker,
        )
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def persist_and_report() -> None:
            # The outcome goes straight to `_committed` on the loop: the writers' results are
            # set in the same turn that learns of the commit.
            failure: Exception | None = None
            try:
                persist()
            except Exception as exc:
                failure = exc
            loop.call_soon_threadsafe(self._committed, batch, events, keep_from, failure, done)

        self._executor.submit(persist_and_report)
        await done

    def _committed(
        self,
        batch: _Batch,
        events: builtins.list[Event],
        keep_from: int,
        exc: Exception | None,
        done: asyncio.Future[None],
    ) -> None:
        """On the loop, once the batch's transaction ended: make it visible and answer its
        writers (or fail them with `exc`)."""
        try:
            if exc is not None:
                self._fail(batch, exc)
                return
            self._write_error = None
            self._trimmed_to = max(self._trimmed_to, keep_from)
            self._engine.apply(events)
            for ev, future in batch:
                key = event_key(ev)
                if self._overlay.get(key, (None, -1))[1] == ev.revision:
                    del self._overlay[key]
                if not future.done():
                    future.set_result(ev.object)
        finally:
            if not done.done():
                done.set_result(None)

    def _fail(self, batch: _Batch, exc: Exception) -> None:
        # Writes queued behind the failed batch were checked against its state: fail them too.
        failed = batch + self._queue
        self._queue = []
        self._overlay.clear()
        self._pending_revision = self._engine.revision
        if files.is_disk_full(exc, self._path):
            error = insufficient_storage(self._path, exc)
            self._write_error = error
            log.error("%s", error.message)
        else:
            error = errors.internal(f"storage commit failed: {exc}")
        for _, future in failed:
            if not future.done():
                future.set_exception(error)


if TYPE_CHECKING:
    _conforms: Storage = SqliteStorage("")
