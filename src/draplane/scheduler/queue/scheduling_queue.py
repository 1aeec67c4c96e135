"""The scheduling queue (kube-scheduler's PriorityQueue, 1.28 semantics: kubernetes/kubernetes
pkg/scheduler/internal/queue).

Three parts: activeQ (a heap ordered by the QueueSort plugin), backoffQ (a heap ordered by
backoff expiry) and the unschedulable pool (a dict that also holds pods gated by PreEnqueue).
Cluster events move pods out of the pool according to the queueing hints of the plugins that
rejected them (`requeue.py`). Everything runs on one event loop, so no locks are needed; time
comes from the injected clock (monotonic seconds).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import REAL_CLOCK, Clock
from draplane.klog import V5
from draplane.scheduler.framework.status import Status
from draplane.scheduler.framework.types import (
    UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
)
from draplane.scheduler.metrics import SchedulerMetrics
from draplane.scheduler.queue.heap import KeyedHeap
from draplane.scheduler.queue.inflight import InFlightEvents
from draplane.scheduler.queue.requeue import (
    HintEntries,
    HintMap,
    HintSelectors,
    is_pod_updated,
    matching_entries,
    queueing_hint,
)
from draplane.scheduler.queue.unschedulable import UnschedulablePods

log = logging.getLogger(__name__)

ACTIVE, BACKOFF, UNSCHEDULABLE, GATED = "active", "backoff", "unschedulable", "gated"


@dataclass(frozen=True)
class QueueOptions:
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    max_in_unschedulable: float = 300.0
    backoff_flush_period: float = 1.0
    unschedulable_flush_period: float = 30.0


class SchedulingQueue:
    def __init__(
        self,
        *,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        hint_map: HintMap,
        selectors: HintSelectors | None = None,
        pre_enqueue: Callable[[Obj], Status] | None = None,
        queueing_hints: bool = True,
        clock: Clock = REAL_CLOCK,
        metrics: SchedulerMetrics | None = None,
        options: QueueOptions | None = None,
    ) -> None:
        """`pre_enqueue` runs the profile's PreEnqueue plugins (None: no gating, 1.27);
        with `queueing_hints` off every hint counts as QueueAfterBackoff and there is no
        in-flight event tracking (the moveRequestCycle rule applies instead). `selectors`
        (from the framework) narrow which pods an event's hints are asked about."""
        self._clock = clock
        self._pre_enqueue = pre_enqueue
        self._hint_map = hint_map
        self._hints = queueing_hints
        self._metrics = metrics
        self.options = options or QueueOptions()
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(less)
        self._backoff: KeyedHeap[QueuedPodInfo] = KeyedHeap(self._backoff_less)
        # Selectors only stand for hints that run: with hints off every pod is asked.
        self._unschedulable = UnschedulablePods(selectors if queueing_hints else None)
        self._entries: dict[ClusterEvent, HintEntries] = {}
        self._in_flight = InFlightEvents()
        self._scheduling_cycle = 0
        self._move_request_cycle = -1
        self._wakeup = asyncio.Event()
        self._closed = False
        if metrics is not None:
            metrics.watch_pending(self.pending_counts)

    # -- cluster-facing operations ------------------------------------------------------------

    def add(self, pod: Obj) -> None:
        """A new unscheduled pod."""
        key = meta.namespaced_key(pod)
        if key in self._active or key in self._backoff or key in self._unschedulable:
            self.update(None, pod)
            return
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self._clock.monotonic())
        self._add_to_active(qpi, "PodAdd")

    def update(self, old: Obj | None, new: Obj) -> None:
        key = meta.namespaced_key(new)
        for heap in (self._active, self._backoff):
            qpi = heap.get(key)
            if qpi is not None:
                qpi.pod_info = PodInfo(new)
                heap.push(key, qpi)
                return
        qpi = self._unschedulable.get(key)
        if qpi is None:
            self.add_new(new)
            return
        qpi.pod_info = PodInfo(new)
        self._unschedulable.put(qpi)  # re-indexed: the new object may name other claims
        if old is not None and not is_pod_updated(old, new):
            return
        if self._is_backing_off(qpi):
            self._unschedulable.pop(key)
            self._push_backoff(qpi, "PodUpdate")
        else:
            self._add_to_active(qpi, "PodUpdate")

    def add_new(self, pod: Obj) -> None:
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self._clock.monotonic())
        self._add_to_active(qpi, "PodUpdate")

    def delete(self, pod: Obj) -> None:
        key = meta.namespaced_key(pod)
        self._active.remove(key)
        self._backoff.remove(key)
        self._unschedulable.pop(key)

    def activate(self, pods: Iterable[Obj]) -> None:
        """Move the given pods from backoffQ or the unschedulable pool straight to activeQ."""
        for pod in pods:
            key = meta.namespaced_key(pod)
            qpi = self._unschedulable.get(key) or self._backoff.remove(key)
            if qpi is not None:
                self._add_to_active(qpi, "ForceActivate")

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        pre_check: Callable[[Obj], bool] | None = None,
    ) -> None:
        """Requeue pods in the unschedulable pool for which `event` may help (as
        MoveAllToActiveOrBackoffQueue)."""
        if self._hints:
            self._in_flight.add_event(event, old, new)
        for qpi in self._unschedulable.candidates(event, old, new):
            if pre_check is not None and not pre_check(qpi.pod):
                continue
            hint = self._hint(qpi, event, old, new)
            if hint is not QueueingHint.QUEUE_SKIP:
                self._requeue(qpi, hint, event.label)
        self._move_request_cycle = self._scheduling_cycle

    # -- scheduler-facing operations ----------------------------------------------------------

    async def pop(self) -> QueuedPodInfo:
        """Wait for the head of activeQ; counts an attempt and marks the pod in flight."""
        while True:
            qpi = self._active.pop()
            if qpi is not None:
                break
            if self._closed:
                raise asyncio.CancelledError
            self._wakeup.clear()
            await self._wakeup.wait()
        qpi.attempts += 1
        qpi.unschedulable_plugins = set()
        self._scheduling_cycle += 1
        if self._hints:
            self._in_flight.pod_popped(qpi.pod_info.uid)
        return qpi

    @property
    def scheduling_cycle(self) -> int:
        return self._scheduling_cycle

    def done(self, uid: str) -> None:
        """The pod's attempt is completely over (after requeue on failure, or binding)."""
        self._in_flight.done(uid)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, cycle: int) -> bool:
        """Requeue a pod whose attempt failed; False when it is already queued again."""
        key = qpi.key
        if key in self._active or key in self._backoff or key in self._unschedulable:
            log.log(V5, "Pod %s already present in the scheduling queue", key)
            return False
        qpi.timestamp = self._clock.monotonic()
        event = "ScheduleAttemptFailure"
        if not qpi.unschedulable_plugins:
            # An error, not a rejection: retry after backoff whatever happens, as upstream.
            self._push_backoff(qpi, event)
        elif self._hints:
            hint = QueueingHint.QUEUE_SKIP
            concerns = self._unschedulable.concerns(qpi)
            for recorded in self._in_flight.events_after(qpi.pod_info.uid):
                if not concerns(recorded.event, recorded.old, recorded.new):
                    continue
                hint = max(hint, self._hint(qpi, recorded.event, recorded.old, recorded.new))
                if hint is QueueingHint.QUEUE_IMMEDIATELY:
                    break
            if hint is QueueingHint.QUEUE_SKIP:
                self._park(qpi, event)
            else:
                self._requeue(qpi, hint, event)
        elif self._move_request_cycle >= cycle:
            self._push_backoff(qpi, event)
        else:
            self._park(qpi, event)
        return True

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    # -- periodic flushes ---------------------------------------------------------------------

    def flush_backoff_completed(self) -> None:
        now = self._clock.monotonic()
        while True:
            qpi = self._backoff.peek()
            if qpi is None or self._backoff_expiry(qpi) > now:
                return
            self._backoff.pop()
            self._add_to_active(qpi, "BackoffComplete")

    def flush_unschedulable_leftover(self) -> None:
        now = self._clock.monotonic()
        stale = [
            qpi
            for qpi in self._unschedulable.values()
            if now - qpi.timestamp > self.options.max_in_unschedulable
        ]
        if not stale:
            return
        if self._hints:
            self._in_flight.add_event(UNSCHEDULABLE_TIMEOUT, None, None)
        for qpi in stale:
            self._requeue(qpi, QueueingHint.QUEUE_AFTER_BACKOFF, UNSCHEDULABLE_TIMEOUT.label)
        self._move_request_cycle = self._scheduling_cycle

    async def run(self) -> None:
        """Run both periodic flushes until cancelled."""
        await asyncio.gather(
            self._every(self.options.backoff_flush_period, self.flush_backoff_completed),
            self._every(self.options.unschedulable_flush_period, self.flush_unschedulable_leftover),
        )

    async def _every(self, period: float, fn: Callable[[], None]) -> None:
        while not self._closed:
            await self._clock.sleep(period)
            fn()

    # -- internals ----------------------------------------------------------------------------

    def _hint(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> QueueingHint:
        entries = self._entries.get(event)
        if entries is None:
            entries = self._entries[event] = matching_entries(self._hint_map, event)
        return queueing_hint(
            hint_map=self._hint_map,
            qpi=qpi,
            event=event,
            objs=(old, new),
            hints_enabled=self._hints,
            entries=entries,
        )

    def _requeue(self, qpi: QueuedPodInfo, hint: QueueingHint, event: str) -> str:
        if hint is QueueingHint.QUEUE_SKIP:
            return self._park(qpi, event)
        if hint is QueueingHint.QUEUE_AFTER_BACKOFF and self._is_backing_off(qpi):
            self._unschedulable.pop(qpi.key)
            self._push_backoff(qpi, event)
            return BACKOFF
        return ACTIVE if self._add_to_active(qpi, event) else UNSCHEDULABLE

    def _add_to_active(self, qpi: QueuedPodInfo, event: str) -> bool:
        """Run PreEnqueue; push to activeQ, or park the pod as gated (addToActiveQ)."""
        if self._pre_enqueue is not None:
            status = self._pre_enqueue(qpi.pod)
            if not status.is_success:
                qpi.gated = True
                qpi.unschedulable_plugins.add(status.plugin)
                log.log(V5, "Pod %s gated by %s: %s", qpi.key, status.plugin, status.message)
                if qpi.key not in self._unschedulable:
                    self._park(qpi, event)
                return False
        qpi.gated = False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.monotonic()
        self._unschedulable.pop(qpi.key)
        self._backoff.remove(qpi.key)
        self._active.push(qpi.key, qpi)
        self._count(ACTIVE, event)
        self._wakeup.set()
        return True

    def _park(self, qpi: QueuedPodInfo, event: str) -> str:
        self._unschedulable.put(qpi)
        self._count(UNSCHEDULABLE, event)
        return UNSCHEDULABLE

    def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        self._backoff.push(qpi.key, qpi)
        self._count(BACKOFF, event)

    def _count(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics.queue_incoming(queue, event)

    def backoff_duration(self, attempts: int) -> float:
        duration = self.options.initial_backoff
        for _ in range(1, attempts):
            duration *= 2
            if duration >= self.options.max_backoff:
                return self.options.max_backoff
        return duration

    def _backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + self.backoff_duration(qpi.attempts)

    def _backoff_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self._backoff_expiry(a) < self._backoff_expiry(b)

    def _is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return not qpi.gated and self._backoff_expiry(qpi) > self._clock.monotonic()

    # -- inspection (metrics, tests) ----------------------------------------------------------

    def pending_counts(self) -> dict[str, int]:
        gated = sum(1 for qpi in self._unschedulable.values() if qpi.gated)
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def where(self, pod_key: str) -> str | None:
        """Which part holds the pod (`namespace/name`): active, backoff, unschedulable, gated."""
        if pod_key in self._active:
            return ACTIVE
        if pod_key in self._backoff:
            return BACKOFF
        qpi = self._unschedulable.get(pod_key)
        if qpi is None:
            return None
        return GATED if qpi.gated else UNSCHEDULABLE

    def in_flight_event_count(self) -> int:
        """Cluster events still kept for the replay of pods in flight."""
        return len(self._in_flight)

    def queued_pod_info(self, pod_key: str) -> QueuedPodInfo | None:
        return (
            self._active.get(pod_key)
            or self._backoff.get(pod_key)
            or self._unschedulable.get(pod_key)
        )
