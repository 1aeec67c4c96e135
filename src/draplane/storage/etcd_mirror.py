"""What the etcd store's mirror applies: the events of one etcd watch response (with `prev` from
the mirror's own state, and the writer's own object where this process wrote it), the
differences after a relist, and the per-key FIFO locks of the store's writes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Any

from draplane.api.meta import Obj
from draplane.storage._engine import Engine
from draplane.storage._writes import Key
from draplane.storage.etcd_keys import KeyLayout
from draplane.storage.etcd_rpc import mvcc
from draplane.storage.etcd_watch import decode
from draplane.storage.interface import Event, EventType


def response_events(
    layout: KeyLayout, engine: Engine, own: dict[int, Obj], raw: Iterable[Any]
) -> list[Event]:
    """The store events of etcd watch events (in revision order); `own` maps a revision this
    process wrote to the object it wrote (used instead of decoding the value again)."""
    events: list[Event] = []
    batch: dict[Key, Obj | None] = {}
    for ev in raw:
        kv = ev.kv
        key = layout.parse(kv.key)
        if key is None:
            continue
        rev = kv.mod_revision
        current = batch[key] if key in batch else engine.get(*key)
        if ev.type == mvcc.Event.DELETE:
            batch[key] = None
            if current is None:
                continue
            last = {**current, "metadata": {**current["metadata"], "resourceVersion": str(rev)}}
            events.append(Event("DELETED", key[0], last, rev, current, len(kv.value) or 1))
            continue
        obj = own.pop(rev, None) or decode(kv.value, rev)
        batch[key] = obj
        typ: EventType = "ADDED" if current is None else "MODIFIED"
        events.append(Event(typ, key[0], obj, rev, current, len(kv.value)))
    return events


def relist_events(engine: Engine, objects: Iterable[tuple[str, Obj]], revision: int) -> list[Event]:
    """The differences between the mirror and a fresh read at `revision`, as events in
    revision order (deletions at `revision`: etcd no longer has theirs)."""
    events: list[Event] = []
    seen: set[Key] = set()
    for resource, obj in objects:
        md = obj["metadata"]
        key = (resource, md.get("namespace") or "", md["name"])
        seen.add(key)
        old = engine.get(*key)
        if old is None or old["metadata"]["resourceVersion"] != md["resourceVersion"]:
            typ: EventType = "ADDED" if old is None else "MODIFIED"
            events.append(Event(typ, resource, obj, int(md["resourceVersion"]), old))
    for resource, old in engine.all_objects():
        md = old["metadata"]
        if (resource, md.get("namespace") or "", md["name"]) not in seen:
            last = {**old, "metadata": {**md, "resourceVersion": str(revision)}}
            events.append(Event("DELETED", resource, last, revision, old))
    events.sort(key=lambda e: e.revision)
    return events


class KeyLocks:
    """One FIFO lock per key while writes of it are in flight."""

    def __init__(self) -> None:
        self._locks: dict[Key, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: Key) -> AsyncIterator[None]:
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
