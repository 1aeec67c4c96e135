"""The in-memory engine every backend shares: committed objects, the global revision, the
event history for watch resume (bounded in events and bytes), and the fan-out of committed
events to watches.

Backends decide when a planned write is committed; they then hand its events to `apply`.
A store watch buffers without bound: its one long-lived consumer, the API server's watch cache,
drains it on every wake-up and bounds what it hands on to API watchers.
"""

from __future__ import annotations

import asyncio
import builtins
from collections import deque
from collections.abc import Iterable, Sequence

from draplane.api.meta import Obj
from draplane.storage._writes import event_key
from draplane.storage.errors import RevisionTooOld
from draplane.storage.history import DEFAULT_MAX_BYTES, DEFAULT_MAX_EVENTS, EventLog
from draplane.storage.interface import Event

DEFAULT_HISTORY_SIZE = DEFAULT_MAX_EVENTS
DEFAULT_HISTORY_BYTES = DEFAULT_MAX_BYTES


class EngineWatch:
    """One watch: a buffer of events (retained replay first, then live) and a wake-up future."""

    __slots__ = ("_after", "_buffer", "_closed", "_engine", "_waiter")

    def __init__(self, engine: Engine, replay: Iterable[Event], *, after: int) -> None:
        self._engine = engine
        self._after = after
        self._buffer: deque[Event] = deque(replay)
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None

    def __aiter__(self) -> EngineWatch:
        return self

    async def __anext__(self) -> Event:
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._buffer.popleft()

    def push(self, events: Sequence[Event]) -> None:
        if events[0].revision <= self._after:
            # Only a watch started from a future revision skips committed events.
            events = [ev for ev in events if ev.revision > self._after]
            if not events:
                return
        self._buffer.extend(events)
        self._wake()

    def end(self) -> None:
        self._closed = True
        self._buffer.clear()
        self._wake()

    async def close(self) -> None:
        self._engine.forget(self)
        self.end()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class Engine:
    """Committed state. Reads are O(result); `apply` must be called in revision order."""

    def __init__(
        self,
        *,
        history_size: int = DEFAULT_HISTORY_SIZE,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
    ) -> None:
        if history_size < 1:
            raise ValueError("history_size must be at least 1")
        # resource -> namespace -> name -> object
        self._objects: dict[str, dict[str, dict[str, Obj]]] = {}
        self.revision = 0
        self._history = EventLog(max_events=history_size, max_bytes=history_bytes)
        self._watches: set[EngineWatch] = set()

    @property
    def oldest_revision(self) -> int:
        first = self._history.first_revision
        return self.revision + 1 if first is None else first

    @property
    def history_bytes(self) -> int:
        """The bytes the retained history counts for (see `storage.history`)."""
        return self._history.bytes

    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        by_ns = self._objects.get(resource)
        if by_ns is None:
            return None
        by_name = by_ns.get(namespace)
        return None if by_name is None else by_name.get(name)

    def list(self, resource: str, namespace: str | None) -> list[Obj]:
        by_ns = self._objects.get(resource)
        if not by_ns:
            return []
        if namespace is not None:
            by_name = by_ns.get(namespace)
            return [by_name[n] for n in sorted(by_name)] if by_name else []
        out: list[Obj] = []
        for ns in sorted(by_ns):
            by_name = by_ns[ns]
            out.extend(by_name[n] for n in sorted(by_name))
        return out

    def all_objects(self) -> builtins.list[tuple[str, Obj]]:
        """(resource, object) for every stored object."""
        return [
            (resource, obj)
            for resource, by_ns in self._objects.items()
            for by_name in by_ns.values()
            for obj in by_name.values()
        ]

    def list_at(self, resource: str, namespace: str | None, revision: int) -> builtins.list[Obj]:
        """The objects as they were at `revision`: the current state with the retained events
        after it undone (410 Expired when that history is gone), sorted like `list`."""
        if revision >= self.revision:
            return self.list(resource, namespace)
        if revision < self.oldest_revision - 1:
            raise RevisionTooOld(revision, self.oldest_revision - 1)
        state: dict[tuple[str, str], Obj] = {
            (obj["metadata"].get("namespace") or "", obj["metadata"]["name"]): obj
            for obj in self.list(resource, namespace)
        }
        for event in reversed(self._history):
            if event.revision <= revision:
                break
            _, ns, name = event_key(event)
            if event.resource != resource or (namespace is not None and ns != namespace):
                continue
            if event.type == "ADDED" or event.prev is None:
                state.pop((ns, name), None)
            else:
                state[ns, name] = event.prev
        return [state[k] for k in sorted(state)]

    def apply(self, events: Sequence[Event]) -> None:
        """Make committed writes visible, retain them for resume, then publish them."""
        for event in events:
            self._store(event)
        self._history.extend(events)
        self.revision = events[-1].revision
        for watch in self._watches:
            watch.push(events)

    def _store(self, event: Event) -> None:
        resource, namespace, name = event_key(event)
        by_name = self._objects.setdefault(resource, {}).setdefault(namespace, {})
        if event.type == "DELETED":
            by_name.pop(name, None)
            if not by_name:
                del self._objects[resource][namespace]
        else:
            by_name[name] = event.object

    def load(
        self, *, objects: Iterable[tuple[str, Obj]], events: Iterable[Event], revision: int
    ) -> None:
        """Initialise from a persisted state (before any watch or write)."""
        for resource, obj in objects:
            md = obj["metadata"]
            by_ns = self._objects.setdefault(resource, {})
            by_ns.setdefault(md.get("namespace") or "", {})[md["name"]] = obj
        self._history.extend(events)
        self.revision = revision

    def watch(self, from_revision: int) -> EngineWatch:
        if from_revision < self.oldest_revision - 1:
            raise RevisionTooOld(from_revision, self.oldest_revision - 1)
        replay: Iterable[Event] = ()
        if from_revision < self.revision:
            replay = self._history.since(from_revision)
        watch = EngineWatch(self, replay, after=from_revision)
        self._watches.add(watch)
        return watch

    def forget(self, watch: EngineWatch) -> None:
        self._watches.discard(watch)

    def end_watches(self) -> None:
        watches, self._watches = self._watches, set()
        for watch in watches:
            watch.end()
