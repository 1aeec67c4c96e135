"""The injectable clock every component uses; the only seam where tests substitute time.

`Clock` reads wall time (for timestamps written into objects) and monotonic time (for
backoff and timers) and sleeps.  `FakeClock` lives in `draplane.testing.clock`. `jitter` spreads
the periods of periodic work (k8s.io/apimachinery's wait.Jitter).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
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


def jitter(
    duration: float, max_factor: float, *, uniform: Callable[[], float] = random.random
) -> float:
    """`duration` plus a random share of it up to `max_factor` (wait.Jitter): thousands of
    periodic loops started together drift apart instead of firing in one burst each period.
    `uniform` draws from [0, 1)."""
    return duration + uniform() * max_factor * duration


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
