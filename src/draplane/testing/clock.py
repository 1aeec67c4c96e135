"""A fake clock for tests: time moves only when the test calls `step()`."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from datetime import UTC, datetime, timedelta


class FakeClock:
    def __init__(self, start: datetime | None = None) -> None:
        self._wall = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._mono + seconds, next(self._seq), fut))
        await fut

    def step(self, seconds: float) -> None:
        """Advance time and wake every sleeper whose deadline passed."""
        self._mono += seconds
        self._wall += timedelta(seconds=seconds)
        while self._sleepers and self._sleepers[0][0] <= self._mono:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)

    @property
    def sleepers(self) -> int:
        """How many sleeps are pending (tests wait for this to know a task is parked)."""
        return sum(1 for _, _, f in self._sleepers if not f.done())
