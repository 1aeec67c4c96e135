"""client-go's rate-limiting work queue, on asyncio.

Fair (FIFO) and stingy: adds of an item already waiting are merged (the `dirty` set), and an
item being processed (the `processing` set) is never handed out again until `done`; if it was
added meanwhile it is queued again at `done`. `add_after` delays an item; `add_rate_limited`
delays it by the rate limiter's answer. After `shut_down`, adds are ignored, `get` still hands
out what is queued and then raises `ShutDown`.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from draplane.client.ratelimit import RateLimiter, default_controller_rate_limiter
from draplane.clock import REAL_CLOCK, Clock

T = TypeVar("T", bound=Hashable)

_DURATION_BUCKETS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0)


class ShutDown(Exception):
    """The queue was shut down and has nothing left to hand out."""


@dataclass(frozen=True, slots=True)
class _QueueMetrics:
    depth: Gauge
    adds: Counter
    queue_duration: Histogram
    work_duration: Histogram
    retries: Counter

    def of(self, name: str) -> _QueueMetrics:
        """The families' series of the queue `name`, looked up once: as client-go's
        newQueueMetrics, a queue's series exist from its creation."""
        return _QueueMetrics(
            depth=self.depth.labels(name),
            adds=self.adds.labels(name),
            queue_duration=self.queue_duration.labels(name),
            work_duration=self.work_duration.labels(name),
            retries=self.retries.labels(name),
        )


_METRICS: weakref.WeakKeyDictionary[CollectorRegistry, _QueueMetrics] = weakref.WeakKeyDictionary()


def _metrics_for(registry: CollectorRegistry) -> _QueueMetrics:
    """One metric family set per registry: queues sharing a registry differ by the name label."""
    found = _METRICS.get(registry)
    if found is None:
        found = _QueueMetrics(
            depth=Gauge(
                "workqueue_depth", "Current depth of workqueue", ["name"], registry=registry
            ),
            adds=Counter(
                "workqueue_adds",
                "Total number of adds handled by workqueue",
                ["name"],
                registry=registry,
            ),
            queue_duration=Histogram(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                ["name"],
                buckets=_DURATION_BUCKETS,
                registry=registry,
            ),
            work_duration=Histogram(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes",
                ["name"],
                buckets=_DURATION_BUCKETS,
                registry=registry,
            ),
            retries=Counter(
                "workqueue_retries",
                "Total number of retries handled by workqueue",
                ["name"],
                registry=registry,
            ),
        )
        _METRICS[registry] = found
    return found


class RateLimitingQueue(Generic[T]):
    def __init__(
        self,
        *,
        name: str = "",
        rate_limiter: RateLimiter | None = None,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        self.name = name
        self._clock = clock
        self._rate_limiter = rate_limiter or default_controller_rate_limiter(clock=clock)
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._shutting_down = False
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drained: list[asyncio.Future[None]] = []
        # Delayed items: heap of (ready time, sequence, item); `_ready_at` keeps the earliest
        # ready time per item so a second add_after only ever brings an item forward.
        self._waiting: list[tuple[float, int, T]] = []
        self._ready_at: dict[T, float] = {}
        self._seq = itertools.count()
        self._waiting_task: asyncio.Task[None] | None = None
        self._waiting_changed: asyncio.Event | None = None
        self._metrics = _metrics_for(metrics).of(name) if metrics is not None else None
        self._added_at: dict[T, float] = {}
        self._started_at: dict[T, float] = {}

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def add(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        if self._metrics is not None:
            self._metrics.adds.inc()
            self._added_at.setdefault(item, self._clock.monotonic())
        if item in self._processing:
            return
        self._push(item)

    def _push(self, item: T) -> None:
        self._queue.append(item)
        if self._metrics is not None:
            self._metrics.depth.set(len(self._queue))
        self._wake_one()

    async def get(self) -> T:
        """The next item, now marked as processing; raises `ShutDown` once shut down and empty."""
        if self._waiting:
            self._ensure_waiting_loop()
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                # A wake-up meant for this getter must pass on to the next one.
                if getter.done() and not getter.cancelled() and self._queue:
                    self._wake_one()
                raise
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        if self._metrics is not None:
            now = self._clock.monotonic()
            self._metrics.depth.set(len(self._queue))
            added = self._added_at.pop(item, None)
            if added is not None:
                self._metrics.queue_duration.observe(now - added)
            self._started_at[item] = now
        return item

    def _wake_one(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return

    def done(self, item: T) -> None:
        """Processing of `item` finished; queue it again if it was added meanwhile."""
        self._processing.discard(item)
        if self._metrics is not None:
            started = self._started_at.pop(item, None)
            if started is not None:
                self._metrics.work_duration.observe(self._clock.monotonic() - started)
        if item in self._dirty:
            self._push(item)
        elif not self._processing:
            for fut in self._drained:
                if not fut.done():
                    fut.set_result(None)
            self._drained.clear()

    def shut_down(self) -> None:
        """Ignore further adds; `get` raises `ShutDown` once the queue is empty."""
        self._shutting_down = True
        for getter in self._getters:
            if not getter.done():
                getter.set_result(None)
        self._getters.clear()
        if self._waiting_task is not None:
            self._waiting_task.cancel()
            self._waiting_task = None

    async def shut_down_with_drain(self) -> None:
        """Shut down, then wait until every item handed out has been marked done."""
        self.shut_down()
        while self._processing:
            fut = asyncio.get_running_loop().create_future()
            self._drained.append(fut)
            await fut

    # Delaying queue.

    def add_after(self, item: T, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        ready = self._clock.monotonic() + delay
        current = self._ready_at.get(item)
        if current is not None and current <= ready:
            return
        self._ready_at[item] = ready
        heapq.heappush(self._waiting, (ready, next(self._seq), item))
        self._ensure_waiting_loop()
        if self._waiting_changed is not None:
            self._waiting_changed.set()

    def is_waiting(self, item: T) -> bool:
        """Whether `item` was added with a delay that has not passed yet."""
        return item in self._ready_at

    def _ensure_waiting_loop(self) -> None:
        if self._waiting_task is not None and not self._waiting_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # started by the next add_after made inside the event loop
        self._waiting_changed = asyncio.Event()
        self._waiting_task = loop.create_task(self._run_waiting(), name=f"workqueue-{self.name}")

    def _add_ready(self) -> float | None:
        """Add every delayed item whose time has come; the next ready time, if any."""
        now = self._clock.monotonic()
        while self._waiting:
            ready, _, item = self._waiting[0]
            if self._ready_at.get(item) != ready:
                heapq.heappop(self._waiting)  # superseded by an earlier add_after
                continue
            if ready > now:
                return ready
            heapq.heappop(self._waiting)
            del self._ready_at[item]
            self.add(item)
        return None

    async def _run_waiting(self) -> None:
        changed = self._waiting_changed
        assert changed is not None
        while not self._shutting_down:
            changed.clear()
            next_ready = self._add_ready()
            if next_ready is None:
                await changed.wait()
                continue
            sleeper = asyncio.ensure_future(self._clock.sleep(next_ready - self._clock.monotonic()))
            waker = asyncio.ensure_future(changed.wait())
            try:
                await asyncio.wait((sleeper, waker), return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                waker.cancel()

    # Rate limiting.

    def add_rate_limited(self, item: T) -> None:
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retries.inc()
        self.add_after(item, self._rate_limiter.when(item))

    def forget(self, item: T) -> None:
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self._rate_limiter.num_requeues(item)
