"""The watch cache: one store watch feeds every API watcher, filtered per watcher.

A single task consumes `Storage.watch()` and keeps a ring of recent events (bounded in events and
in bytes, `storage.history.EventLog`); each API watch is a `CacheWatcher` whose queue is bounded
in bytes (see `cachewatcher`). Start semantics: revision "" or "0" sends synthetic ADDED events
for the current state; revision N replays retained events after N (older than the ring: served
by the store directly, or 410 Expired); N newer than the cache waits up to `fresh_timeout` for
it, then the watch is one ERROR event, 504 "Too large resource version" (as kube-apiserver's
cacher fails a watch it cannot serve). Selector transitions are turned into ADDED / DELETED as
kube-apiserver does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterable, Callable

from draplane.api import errors
from draplane.api.handler import WatchEvent
from draplane.api.meta import Obj
from draplane.apiserver import listoptions
from draplane.apiserver.cachewatcher import (
    DEFAULT_WATCHER_BYTES,
    CacheWatcher,
    TimeBudget,
    WatchSpec,
)
from draplane.storage.history import EventLog
from draplane.storage.interface import Event, Storage

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_WATCHER_BYTES", "CacheWatcher", "WatchCache", "WatchSpec", "expired_event"]

DEFAULT_HISTORY_BYTES = 64 * 1024 * 1024
DEFAULT_BOOKMARK_INTERVAL = 60.0
"""Seconds between two bookmarks to one idle watcher (kube-apiserver's cacher: one a minute)."""
BOOKMARK_SLICES = 10
"""The bookmark period is cut into this many ticks, each serving a tenth of the watchers, so
that thousands of watchers (one per kubelet) do not all get theirs in one turn of the loop."""


class _Watchers:
    """The watchers of one resource: unindexed ones, and those indexed by `spec.nodeName`."""

    def __init__(self) -> None:
        self.unindexed: set[CacheWatcher] = set()
        self.by_node: dict[str, set[CacheWatcher]] = {}

    def add(self, watcher: CacheWatcher) -> None:
        node = watcher.spec.node_name
        if node is None:
            self.unindexed.add(watcher)
        else:
            self.by_node.setdefault(node, set()).add(watcher)

    def discard(self, watcher: CacheWatcher) -> None:
        node = watcher.spec.node_name
        if node is None:
            self.unindexed.discard(watcher)
            return
        bucket = self.by_node.get(node)
        if bucket is not None:
            bucket.discard(watcher)
            if not bucket:
                del self.by_node[node]

    def for_event(self, event: Event) -> list[CacheWatcher]:
        targets = list(self.unindexed)
        if self.by_node:
            nodes = {_node_name(event.object)}
            if event.prev is not None:
                nodes.add(_node_name(event.prev))
            for node in nodes:
                targets.extend(self.by_node.get(node, ()))
        return targets

    def all(self) -> list[CacheWatcher]:
        out = list(self.unindexed)
        for bucket in self.by_node.values():
            out.extend(bucket)
        return out


def _node_name(obj: Obj) -> str:
    return str((obj.get("spec") or {}).get("nodeName") or "")


class WatchCache:
    def __init__(
        self,
        storage: Storage,
        *,
        history: int = 10_000,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
        watcher_bytes: int = DEFAULT_WATCHER_BYTES,
        bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
        fresh_timeout: float = listoptions.FRESH_TIMEOUT,
    ) -> None:
        self._storage = storage
        self._ring = EventLog(max_events=history, max_bytes=history_bytes)
        self._watcher_bytes = watcher_bytes
        self.fresh_timeout = fresh_timeout
        """How long a watch from a revision the cache has not reached waits for it."""
        self.slow_watchers_closed = 0
        self._budget = TimeBudget()
        self._watchers: dict[str, _Watchers] = {}
        self._observers: list[Callable[[Event], None]] = []
        self._task: asyncio.Task[None] | None = None
        self._bookmark_task: asyncio.Task[None] | None = None
        self._bookmark_interval = bookmark_interval
        self._fresh_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.revision = 0

    async def start(self) -> None:
        self.revision = self._storage.revision
        stream = self._storage.watch(self.revision)
        self._task = asyncio.create_task(self._consume(stream), name="watch-cache")
        self._bookmark_task = asyncio.create_task(self._bookmarks(), name="watch-bookmarks")

    async def stop(self) -> None:
        for task in (self._task, self._bookmark_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for watchers in list(self._watchers.values()):
            for w in watchers.all():
                w.close_now()

    def add_observer(self, observer: Callable[[Event], None]) -> None:
        """Call `observer` with every event, before any watcher is offered it."""
        self._observers.append(observer)

    async def _consume(self, stream: AsyncIterable[Event]) -> None:
        async for event in stream:
            for observer in self._observers:
                observer(event)
            self._ring.extend((event,))
            self.revision = event.revision
            if self._fresh_waiters:
                self._wake_fresh()
            watchers = self._watchers.get(event.resource)
            if watchers is not None:
                blocked = [w for w in watchers.for_event(event) if w.offer(event)]
                if blocked:
                    await self._wait_for_room(blocked)

    async def _wait_for_room(self, blocked: list[CacheWatcher]) -> None:
        """Give full watchers' clients a moment to catch up, then close those still full."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        timeout = self._budget.take(started)
        await asyncio.wait([w.room() for w in blocked], timeout=timeout)
        self._budget.give_back(timeout - (loop.time() - started))
        for watcher in blocked:
            watcher.admit_blocked()
            if watcher.slow:
                self.slow_watchers_closed += 1

    async def _bookmarks(self) -> None:
        tick = 0
        while True:
            await asyncio.sleep(self._bookmark_interval / BOOKMARK_SLICES)
            tick = (tick + 1) % BOOKMARK_SLICES
            for watchers in list(self._watchers.values()):
                for w in watchers.all():
                    if hash(w) % BOOKMARK_SLICES == tick:
                        w.bookmark(self.revision)

    def _wake_fresh(self) -> None:
        waiting: list[tuple[int, asyncio.Future[None]]] = []
        for revision, future in self._fresh_waiters:
            if revision <= self.revision:
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((revision, future))
        self._fresh_waiters = waiting

    async def wait_until_fresh(self, revision: int, timeout: float) -> bool:
        """Whether the cache reached `revision` within `timeout` seconds."""
        if revision <= self.revision:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._fresh_waiters.append((revision, future))
        try:
            async with asyncio.timeout(timeout):
                await future
        except TimeoutError:
            return False
        finally:
            self._fresh_waiters = [(r, f) for r, f in self._fresh_waiters if f is not future]
        return True

    @property
    def history_bytes(self) -> int:
        """The bytes the ring of recent events counts for."""
        return self._ring.bytes

    def buffered_bytes(self) -> int:
        """The counted bytes of live events queued for all watchers, not yet read."""
        return sum(w.buffered_bytes for group in self._watchers.values() for w in group.all())

    def watcher_count(self, resource: str | None = None) -> int:
        """Open watchers (of one resource key, or of all)."""
        groups = (
            self._watchers.values()
            if resource is None
            else [self._watchers[resource]]
            if resource in self._watchers
            else []
        )
        return sum(len(group.all()) for group in groups)

    def close_watchers(self, resource: str) -> int:
        """End every open watch of `resource` (their clients re-watch from their last
        revision), as kube-apiserver ends watches at their timeout. Returns how many."""
        group = self._watchers.get(resource)
        watchers = group.all() if group is not None else []
        for watcher in watchers:
            watcher.close_now()
        return len(watchers)

    def _register(self, watcher: CacheWatcher) -> None:
        self._watchers.setdefault(watcher.spec.resource, _Watchers()).add(watcher)

    def _remove(self, watcher: CacheWatcher) -> None:
        watchers = self._watchers.get(watcher.spec.resource)
        if watchers is not None:
            watchers.discard(watcher)

    def _watcher(self, spec: WatchSpec, last_revision: int) -> CacheWatcher:
        return CacheWatcher(
            spec, last_revision, max_bytes=self._watcher_bytes, on_close=self._remove
        )

    async def watch(self, spec: WatchSpec, resource_version: int | None) -> CacheWatcher:
        """resource_version None: current state as ADDED first, then changes."""
        if resource_version is None:
            return await self._watch_from_now(spec)
        if not await self.wait_until_fresh(resource_version, self.fresh_timeout):
            return self._error(spec, listoptions.too_large(resource_version, self.revision))
        first = self._ring.first_revision
        oldest = self.revision + 1 if first is None else first
        if resource_version >= oldest - 1:
            watcher = self._watcher(spec, resource_version)
            for event in self._ring.since(resource_version):
                if event.resource == spec.resource:
                    watcher.offer(event, initial=True)
            watcher.last_revision = max(watcher.last_revision, self.revision)
            self._register(watcher)
            return watcher
        return await self._watch_from_store(spec, resource_version)

    def _error(self, spec: WatchSpec, err: errors.StatusError) -> CacheWatcher:
        """A watch that is one ERROR event, as kube-apiserver's cacher fails a started watch."""
        watcher = self._watcher(spec, self.revision)
        watcher.push_initial(WatchEvent("ERROR", err.status()))
        watcher.closed = True
        return watcher

    async def _watch_from_now(self, spec: WatchSpec) -> CacheWatcher:
        watcher = self._watcher(spec, self.revision)
        # Register first so nothing committed after the list is missed; events the list
        # already contains are dropped by revision below.
        self._register(watcher)
        watcher.buffer = []
        try:
            objs, revision = await self._storage.list(spec.resource, spec.namespace or None)
        finally:
            buffered, watcher.buffer = watcher.buffer, None
        watcher.last_revision = revision
        for obj in objs:
            if spec.matches(obj):
                watcher.push_initial(WatchEvent("ADDED", obj))
        for event in buffered:
            watcher.offer(event, initial=True)
        return watcher

    async def _watch_from_store(self, spec: WatchSpec, resource_version: int) -> CacheWatcher:
        stream = self._storage.watch(resource_version)  # raises 410 Expired when too old
        watcher = self._watcher(spec, resource_version)
        first = self._ring.first_revision
        ring_start = self.revision + 1 if first is None else first
        async for event in stream:
            if event.revision >= ring_start:
                break
            if event.resource == spec.resource:
                watcher.offer(event, initial=True)
            if event.revision >= self.revision:
                break
        await stream.close()
        for event in self._ring:
            if event.resource == spec.resource:
                watcher.offer(event, initial=True)
        self._register(watcher)
        return watcher


def expired_event(resource_version: int, oldest: int) -> WatchEvent:
    err = errors.expired(f"too old resource version: {resource_version} ({oldest})")
    return WatchEvent("ERROR", err.status())
