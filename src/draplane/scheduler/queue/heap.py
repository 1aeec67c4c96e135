"""A keyed binary heap with O(log n) push/pop and O(1) removal by key (lazy deletion)."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("alive", "item", "key", "less", "seq")

    def __init__(self, *, key: str, item: T, seq: int, less: Callable[[T, T], bool]) -> None:
        self.key = key
        self.item = item
        self.seq = seq
        self.less = less
        self.alive = True

    def __lt__(self, other: _Entry[T]) -> bool:
        if self.less(self.item, other.item):
            return True
        if self.less(other.item, self.item):
            return False
        return self.seq < other.seq


class KeyedHeap(Generic[T]):
    """Items ordered by `less`; equal items pop in insertion order."""

    def __init__(self, less: Callable[[T, T], bool]) -> None:
        self._less = less
        self._heap: list[_Entry[T]] = []
        self._entries: dict[str, _Entry[T]] = {}
        self._seq = itertools.count()

    def push(self, key: str, item: T) -> None:
        """Insert, or replace (and re-order) the item stored under `key`."""
        old = self._entries.get(key)
        if old is not None:
            old.alive = False
        entry = _Entry(key=key, item=item, seq=next(self._seq), less=self._less)
        self._entries[key] = entry
        heapq.heappush(self._heap, entry)

    def peek(self) -> T | None:
        self._drop_dead()
        return self._heap[0].item if self._heap else None

    def pop(self) -> T | None:
        self._drop_dead()
        if not self._heap:
            return None
        entry = heapq.heappop(self._heap)
        del self._entries[entry.key]
        return entry.item

    def remove(self, key: str) -> T | None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        entry.alive = False
        if len(self._heap) > 64 and len(self._heap) > 2 * len(self._entries):
            self._heap = [e for e in self._heap if e.alive]
            heapq.heapify(self._heap)
        return entry.item

    def get(self, key: str) -> T | None:
        entry = self._entries.get(key)
        return entry.item if entry is not None else None

    def _drop_dead(self) -> None:
        heap = self._heap
        while heap and not heap[0].alive:
            heapq.heappop(heap)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[T]:
        return iter([e.item for e in self._entries.values()])
