"""`CacheWatcher`: one API watch fed by the watch cache, with its queue bounded in bytes.

A watcher's start-up events (the listed state, replayed history) reference objects the cache or
the store holds anyway: they are delivered first and not counted. The live events queued behind
them count `Event.size` plus a fixed overhead. When a live event does not fit, the cache's
dispatcher waits a little for the client to catch up (drawing on a `TimeBudget`, as
kube-apiserver's cacher does before it terminates an unresponsive watcher); a watcher still full
then is closed and its queue dropped. Its client re-watches from the last event it received, or
re-lists on 410 Gone.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from draplane.api.handler import WatchEvent
from draplane.api.meta import Obj
from draplane.storage.history import ENTRY_OVERHEAD
from draplane.storage.interface import Event

log = logging.getLogger(__name__)

Filter = Callable[[Obj], bool]

DEFAULT_WATCHER_BYTES = 8 * 1024 * 1024
"""How far (in counted bytes of queued live events) a watcher may fall behind."""


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


class TimeBudget:
    """Seconds the dispatcher may spend waiting for full watchers: at most `capacity`, refilled
    at `capacity` per second (kube-apiserver's cacher: 100 ms, refilled every second)."""

    def __init__(self, capacity: float = 0.1) -> None:
        self._capacity = capacity
        self._available = capacity
        self._stamp: float | None = None

    def take(self, now: float) -> float:
        if self._stamp is not None:
            self._available = min(
                self._capacity, self._available + (now - self._stamp) * self._capacity
            )
        self._stamp = now
        taken, self._available = self._available, 0.0
        return taken

    def give_back(self, unused: float) -> None:
        self._available = min(self._capacity, self._available + max(0.0, unused))


class CacheWatcher:
    """One API watch: an async iterator of WatchEvent."""

    def __init__(
        self,
        spec: WatchSpec,
        last_revision: int,
        *,
        max_bytes: int = DEFAULT_WATCHER_BYTES,
        on_close: Callable[[CacheWatcher], None] = lambda _: None,
    ) -> None:
        self.spec = spec
        self.last_revision = last_revision
        self._on_close = on_close
        self._initial: deque[WatchEvent] = deque()
        self._live: deque[tuple[WatchEvent, int]] = deque()
        self.buffered_bytes = 0
        """Counted bytes of the queued live events."""
        self._max_bytes = max_bytes
        self._blocked: tuple[WatchEvent, int] | None = None
        """A live event that did not fit, waiting for room (see `admit_blocked`)."""
        self._room: asyncio.Future[None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.slow = False
        """Closed because its client fell too far behind."""
        self.on_slow: Callable[[], None] | None = None
        """Called once the watcher is closed as slow (the HTTP watch drops the connection)."""
        self.buffer: list[Event] | None = None
        """While set, events are held here instead of being delivered (start-up listing)."""

    def offer(self, event: Event, *, initial: bool = False) -> bool:
        """Deliver `event` as this watcher sees it; True when it is blocked for lack of room
        (the dispatcher then waits on `room()` and calls `admit_blocked`)."""
        if self.buffer is not None:
            self.buffer.append(event)
            return False
        if self.closed or event.revision <= self.last_revision:
            return False
        self.last_revision = event.revision
        out = self._as_seen(event)
        if out is None:
            return False
        if initial:
            self.push_initial(out)
            return False
        return not self.push(out, event.size)

    def _as_seen(self, event: Event) -> WatchEvent | None:
        obj = event.object
        if (
            self.spec.namespace
            and (obj.get("metadata") or {}).get("namespace") != self.spec.namespace
        ):
            return None
        now = self.spec.matches(obj)
        before = event.prev is not None and self.spec.matches(event.prev)
        if event.type == "DELETED":
            return WatchEvent("DELETED", obj) if now else None
        if event.type == "ADDED":
            return WatchEvent("ADDED", obj) if now else None
        if now and before:
            return WatchEvent("MODIFIED", obj)
        if now:
            return WatchEvent("ADDED", obj)
        if before:
            return WatchEvent("DELETED", obj)
        return None

    def push_initial(self, item: WatchEvent) -> None:
        self._initial.append(item)
        self._wake()

    def push(self, item: WatchEvent, size: int = 0) -> bool:
        """Queue a live event of `size` bytes; False when it does not fit (it is then held as
        the blocked event, and later events wait behind it)."""
        if self.closed:
            return True
        if self._blocked is not None:
            # Only one event can wait for room; a second one means the dispatcher gave up.
            self._close_slow()
            return True
        counted = size + ENTRY_OVERHEAD
        if not self._fits(counted):
            self._blocked = (item, counted)
            return False
        self._append(item, counted)
        return True

    def _fits(self, counted: int) -> bool:
        return not self._live or self.buffered_bytes + counted <= self._max_bytes

    def _append(self, item: WatchEvent, counted: int) -> None:
        self._live.append((item, counted))
        self.buffered_bytes += counted
        self._wake()

    def room(self) -> asyncio.Future[None]:
        """Done once the blocked event fits (or the watcher is closed)."""
        if self._room is None:
            self._room = asyncio.get_running_loop().create_future()
            self._check_room()
        return self._room

    def _check_room(self) -> None:
        room = self._room
        if room is None or room.done():
            return
        if self.closed or self._blocked is None or self._fits(self._blocked[1]):
            room.set_result(None)

    def admit_blocked(self) -> None:
        """After the dispatcher's wait: queue the blocked event, or close a still-full watcher."""
        self._room = None
        blocked, self._blocked = self._blocked, None
        if blocked is None or self.closed:
            return
        if self._fits(blocked[1]):
            self._append(*blocked)
            return
        self._close_slow()

    def _close_slow(self) -> None:
        self._blocked = None
        log.warning(
            "closing slow watcher of %s: %d bytes (%d events) not yet read by its client",
            self.spec.resource,
            self.buffered_bytes,
            len(self._live),
        )
        self._initial.clear()
        self._live.clear()
        self.buffered_bytes = 0
        self.slow = True
        self.close_now()
        if self.on_slow is not None:
            self.on_slow()

    def bookmark(self, revision: int) -> None:
        idle = not self._initial and not self._live and self._blocked is None
        if self.spec.allow_bookmarks and not self.closed and idle:
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
        """End the watch once what is already queued has been read."""
        if not self.closed:
            self.closed = True
            self._on_close(self)
            self._wake()
            self._check_room()

    async def close(self) -> None:
        self.close_now()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._iterate()

    def take_ready(self, limit: int) -> list[WatchEvent]:
        """Up to `limit` events already queued, in order, without waiting (a client's writer
        sends them together)."""
        taken: list[WatchEvent] = []
        while len(taken) < limit:
            item = self._pop()
            if item is None:
                break
            taken.append(item)
        return taken

    def _pop(self) -> WatchEvent | None:
        if self._initial:
            return self._initial.popleft()
        if self._live:
            item, counted = self._live.popleft()
            self.buffered_bytes -= counted
            self._check_room()
            return item
        return None

    async def _iterate(self) -> AsyncIterator[WatchEvent]:
        while True:
            item = self._pop()
            if item is not None:
                yield item
            elif self.closed:
                return
            else:
                self._waiter = asyncio.get_running_loop().create_future()
                try:
                    await self._waiter
                finally:
                    self._waiter = None
