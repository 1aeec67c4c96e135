"""Work-queue rate limiters, as client-go's `workqueue/default_rate_limiters.go`.

A limiter answers how long an item must wait before it is retried. The controller default is the
larger of a per-item exponential backoff (5 ms doubling up to 1000 s) and a global token bucket
(10 per second, burst 100).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from draplane.clock import REAL_CLOCK, Clock


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float:
        """Seconds the item must wait now; counts one more failure for it."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking the item: its next failure starts the backoff anew."""
        ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """`base * 2**failures`, capped at `cap` seconds, per item."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        self._base = base
        self._cap = cap
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # Beyond 2**1000 the float would overflow; the cap has long been reached by then.
        if exp > 1000:
            return self._cap
        return min(self._base * 2.0**exp, self._cap)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """A global token bucket (golang.org/x/time/rate reservations): `qps` refill, `burst` size.

    Every `when` takes a token; when the bucket is empty the token is borrowed from the future
    and the delay is how long until it will have been refilled.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock = REAL_CLOCK) -> None:
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.monotonic()

    def when(self, item: Hashable) -> float:
        now = self._clock.monotonic()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(self._burst, self._tokens + elapsed * self._qps)
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self._qps

    def forget(self, item: Hashable) -> None:
        """Tokens are global: there is nothing per item to forget."""

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; all of them count every failure."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self._limiters = limiters

    def when(self, item: Hashable) -> float:
        return max((limiter.when(item) for limiter in self._limiters), default=0.0)

    def forget(self, item: Hashable) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max((limiter.num_requeues(item) for limiter in self._limiters), default=0)


def default_controller_rate_limiter(*, clock: Clock = REAL_CLOCK) -> RateLimiter:
    """client-go's `DefaultControllerRateLimiter`."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base=0.005, cap=1000.0),
        BucketRateLimiter(qps=10.0, burst=100, clock=clock),
    )
