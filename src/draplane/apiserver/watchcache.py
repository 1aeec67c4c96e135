"""The watch cache: one store watch feeds every API watcher, filtered per watcher.

A single task consumes `Storage.watch()` and keeps a ring of recent events; each API watch is a
`CacheWatcher` with its own queue. Start semantics: revision "" or "0" sends synthetic ADDED
events for the current state; revision N replays retained events after N (older than the ring:
served by the store directly, or 410 Expired). Selector transitions are turned into ADDED /
DELETED as kube-apiserver does. Slow watchers are closed rather than buffered without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

from draplane.api import errors
from draplane.api.handler import WatchEvent
from draplane.api.meta import Obj
from draplane.storage.interface import Event, Storage

log = logging.getLogger(__name__)

Filter = Callable[[Obj], bool]

_CLOSED = object()
MAX_PENDING = 100_000


@dataclass
class WatchSpec:
    resource: str
    namespace: str
    matches: Filter
    allow_bookmarks: bool
    kind: str
    api_version: str
    node_name: str | None = None
    """The value of a `spec.nodeName=<node>` field selector: such watchers (one per kubelet) are
    indexed by node, so a pod event reaches only the watchers of its old and new node."""


class CacheWatcher:
    """One API watch: an async iterator of WatchEvent."""

    def __init__(self, cache: WatchCache, spec: WatchSpec, last_revision: int) -> None:
        self._cache = cache
        self.spec = spec
        self.last_revision = last_revision
        self._queue: asyncio.Queue[WatchEvent | object] = asyncio.Queue()
        self.closed = False
        self.buffer: list[Event] | None = None
        """While set, events are held here instead of being delivered (start-up listing)."""

    def _offer(self, event: Event) -> None:
        if self.buffer is not None:
            self.buffer.append(event)
            return
        if self.closed or event.revision <= self.last_revision:
            return
        self.last_revision = event.revision
        obj = event.object
        if (
            self.spec.namespace
            and (obj.get("metadata") or {}).get("namespace") != self.spec.namespace
        ):
            return
        now = self.spec.matches(obj)
        before = event.prev is not None and self.spec.matches(event.prev)
        if event.type == "DELETED":
            out = WatchEvent("DELETED", obj) if now else None
        elif event.type == "ADDED":
            out = WatchEvent("ADDED", obj) if now else None
        elif now and before:
            out = WatchEvent("MODIFIED", obj)
        elif now:
            out = WatchEvent("ADDED", obj)
        elif before:
            out = WatchEvent("DELETED", obj)
        else:
            out = None
        if out is not None:
            self.push(out)

    def push(self, item: WatchEvent) -> None:
        if self._queue.qsize() >= MAX_PENDING:
            log.warning("closing slow watcher of %s", self.spec.resource)
            self.close_now()
            return
        self._queue.put_nowait(item)

    def bookmark(self, revision: int) -> None:
        if self.spec.allow_bookmarks and not self.closed and self._queue.empty():
            self.push(
                WatchEvent(
                    "BOOKMARK",
                    {
                        "kind": self.spec.kind,
                        "apiVersion": self.spec.api_version,
                        "metadata": {"resourceVersion": str(max(revision, self.last_revision))},
                    },
                )
            )

    def close_now(self) -> None:
        if not self.closed:
            self.closed = True
            self._cache._remove(self)
            self._queue.put_nowait(_CLOSED)

    async def close(self) -> None:
        self.close_now()

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[WatchEvent]:
        while True:
            item = await self._queue.get()
            if item is _CLOSED:
                return
            assert isinstance(item, WatchEvent)
            yield item


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
        self, storage: Storage, *, history: int = 10_000, bookmark_interval: float = 5.0
    ) -> None:
        self._storage = storage
        self._ring: deque[Event] = deque(maxlen=history)
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
            self._ring.append(event)
            self.revision = event.revision
            if self._fresh_waiters:
                self._wake_fresh()
            watchers = self._watchers.get(event.resource)
            if watchers is not None:
                for watcher in watchers.for_event(event):
                    watcher._offer(event)

    async def _bookmarks(self) -> None:
        while True:
            await asyncio.sleep(self._bookmark_interval)
            for watchers in list(self._watchers.values()):
                for w in watchers.all():
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

    async def watch(self, spec: WatchSpec, resource_version: int | None) -> CacheWatcher:
        """resource_version None: current state as ADDED first, then changes."""
        if resource_version is None:
            return await self._watch_from_now(spec)
        oldest = self._ring[0].revision if self._ring else self.revision + 1
        if resource_version >= oldest - 1 or resource_version >= self.revision:
            watcher = CacheWatcher(self, spec, resource_version)
            for event in self._ring:
                if event.revision > resource_version and event.resource == spec.resource:
                    watcher._offer(event)
            watcher.last_revision = max(watcher.last_revision, self.revision)
            self._register(watcher)
            return watcher
        return await self._watch_from_store(spec, resource_version)

    async def _watch_from_now(self, spec: WatchSpec) -> CacheWatcher:
        watcher = CacheWatcher(self, spec, self.revision)
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
                watcher.push(WatchEvent("ADDED", obj))
        for event in buffered:
            watcher._offer(event)
        return watcher

    async def _watch_from_store(self, spec: WatchSpec, resource_version: int) -> CacheWatcher:
        stream = self._storage.watch(resource_version)  # raises 410 Expired when too old
        watcher = CacheWatcher(self, spec, resource_version)
        ring_start = self._ring[0].revision if self._ring else self.revision + 1
        async for event in stream:
            if event.revision >= ring_start:
                break
            if event.resource == spec.resource:
                watcher._offer(event)
            if event.revision >= self.revision:
                break
        await stream.close()
        for event in self._ring:
            if event.resource == spec.resource:
                watcher._offer(event)
        self._register(watcher)
        return watcher


def expired_event(resource_version: int, oldest: int) -> WatchEvent:
    err = errors.expired(f"too old resource version: {resource_version} ({oldest})")
    return WatchEvent("ERROR", err.status())
