"""In-flight pods and the cluster events seen while they were being scheduled (1.28 with
SchedulerQueueingHints).

The fixed design of kubernetes/kubernetes#120413: popping a pod inserts a marker for it into one
ordered stream; events are appended while any pod is in flight. A failed pod replays exactly the
events after its own marker, so nothing that happened during its attempt is lost.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from draplane.scheduler.framework.types import ClusterEvent


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    seq: int
    event: ClusterEvent
    old: Any
    new: Any


class InFlightEvents:
    def __init__(self) -> None:
        self._seq = 0
        self._pods: dict[str, int] = {}
        self._events: deque[RecordedEvent] = deque()

    def pod_popped(self, uid: str) -> None:
        self._seq += 1
        self._pods[uid] = self._seq

    def add_event(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """Record an event, only while some pod is in flight."""
        if not self._pods:
            return
        self._seq += 1
        self._events.append(RecordedEvent(self._seq, event, old, new))

    def events_after(self, uid: str) -> list[RecordedEvent]:
        marker = self._pods.get(uid)
        if marker is None:
            return []
        return [e for e in self._events if e.seq > marker]

    def done(self, uid: str) -> None:
        """The pod's attempt is over: forget it and every event no in-flight pod needs."""
        if self._pods.pop(uid, None) is None:
            return
        if not self._pods:
            self._events.clear()
            return
        oldest = min(self._pods.values())
        while self._events and self._events[0].seq <= oldest:
            self._events.popleft()

    def __len__(self) -> int:
        """Recorded events still kept."""
        return len(self._events)
