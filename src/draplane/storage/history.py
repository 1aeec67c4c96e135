"""`EventLog`: recent events in revision order, bounded both in events and in bytes.

The store's history (watch resume, snapshot reads) and the API server's watch cache both keep
one. Each event counts `Event.size` (its object's encoded size) plus a fixed per-entry overhead,
so many tiny events are bounded as well. The oldest events are dropped first; the newest one is
always kept, however large. Retained revisions are usually contiguous (every revision is one
event), so the events after a revision are found by offset; where they are not (etcd's
revisions also count writes outside the store's prefix), by binary search.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator

from draplane.storage.interface import Event

DEFAULT_MAX_EVENTS = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
ENTRY_OVERHEAD = 128
"""Bytes counted for every event besides its object (the event and its bookkeeping)."""


def event_bytes(event: Event) -> int:
    return event.size + ENTRY_OVERHEAD


class EventLog:
    def __init__(
        self, *, max_events: int = DEFAULT_MAX_EVENTS, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._events: deque[Event] = deque()
        self.bytes = 0
        """The bytes the retained events count for."""

    def __len__(self) -> int:
        return len(self._events)

    def __bool__(self) -> bool:
        return bool(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __reversed__(self) -> Iterator[Event]:
        return reversed(self._events)

    @property
    def first_revision(self) -> int | None:
        """The revision of the oldest retained event (None when empty)."""
        return self._events[0].revision if self._events else None

    def extend(self, events: Iterable[Event]) -> None:
        """Append events (in revision order), then drop the oldest beyond the bounds."""
        retained = self._events
        for event in events:
            retained.append(event)
            self.bytes += event.size + ENTRY_OVERHEAD
        if len(retained) > self.max_events or self.bytes > self.max_bytes:
            self._trim()

    def clear(self) -> None:
        self._events.clear()
        self.bytes = 0

    def since(self, revision: int) -> Iterator[Event]:
        """The retained events with a revision greater than `revision`."""
        events = self._events
        if not events:
            return iter(())
        first = events[0].revision
        if events[-1].revision - first == len(events) - 1:
            start = max(0, revision + 1 - first)
        else:
            lo, hi = 0, len(events)
            while lo < hi:
                mid = (lo + hi) // 2
                if events[mid].revision <= revision:
                    lo = mid + 1
                else:
                    hi = mid
            start = lo
        return itertools.islice(events, start, None)

    def _trim(self) -> None:
        events = self._events
        while len(events) > 1 and (len(events) > self.max_events or self.bytes > self.max_bytes):
            self.bytes -= event_bytes(events.popleft())
