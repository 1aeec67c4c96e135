"""The injectable clock every component uses; the only seam where tests substitute time.

`Clock` reads wall time (for timestamps written into objects) and monotonic time (for
backoff and timers) and sleeps.  `FakeClock` lives in `draplane.testing.clock`.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Current wall-clock time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale; only differences are meaningful."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Suspend for `seconds` of this clock's time."""
        ...


class RealClock:
    """The system clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


REAL_CLOCK: Clock = RealClock()


def format_time(t: datetime) -> str:
    """RFC 3339 with second precision, as Kubernetes writes metav1.Time."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(t: datetime) -> str:
    """RFC 3339 with microseconds, as Kubernetes writes metav1.MicroTime."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> datetime:
    """Parse a metav1.Time or MicroTime string."""
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    return datetime.fromisoformat(value)
