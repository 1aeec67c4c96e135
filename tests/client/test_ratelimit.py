"""Rate limiters: exponential growth and cap, the token bucket, and their maximum."""

from __future__ import annotations

import pytest

from draplane.client.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)
from draplane.testing.clock import FakeClock


@pytest.mark.parametrize(
    ("base", "cap", "want"),
    [
        pytest.param(0.005, 1000.0, [0.005, 0.01, 0.02, 0.04, 0.08], id="client-go-default"),
        pytest.param(1.0, 5.0, [1.0, 2.0, 4.0, 5.0, 5.0], id="capped"),
    ],
)
def test_exponential_backoff_grows_and_caps(base: float, cap: float, want: list[float]) -> None:
    limiter = ItemExponentialFailureRateLimiter(base=base, cap=cap)
    assert [limiter.when("a") for _ in want] == pytest.approx(want)
    assert limiter.num_requeues("a") == len(want)
    assert limiter.when("b") == pytest.approx(base)


def test_exponential_backoff_survives_huge_failure_counts() -> None:
    limiter = ItemExponentialFailureRateLimiter(base=0.005, cap=1000.0)
    delays = [limiter.when("a") for _ in range(1100)]
    assert delays[-1] == 1000.0


def test_exponential_forget_restarts_backoff() -> None:
    limiter = ItemExponentialFailureRateLimiter(base=1.0, cap=100.0)
    limiter.when("a")
    limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0


def test_bucket_allows_burst_then_spaces_by_qps() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.when(3) == pytest.approx(0.1)
    assert limiter.when(4) == pytest.approx(0.2)
    clock.step(1.0)
    assert limiter.when(5) == 0.0
    assert limiter.num_requeues(5) == 0


def test_bucket_refill_is_capped_at_burst() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=1, burst=2, clock=clock)
    clock.step(100)
    assert [limiter.when(i) for i in range(3)] == pytest.approx([0.0, 0.0, 1.0])


def test_max_of_takes_longest_and_forgets_everywhere() -> None:
    clock = FakeClock()
    limiter = MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base=1.0, cap=100.0),
        BucketRateLimiter(qps=1, burst=1, clock=clock),
    )
    assert limiter.when("a") == 1.0
    assert limiter.when("a") == 2.0
    assert limiter.when("b") == pytest.approx(2.0)  # bucket: two tokens borrowed
    assert limiter.num_requeues("a") == 2
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_default_controller_rate_limiter_matches_client_go() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    for i in range(97):
        limiter.when(i)
    assert limiter.when("b") == pytest.approx(0.1)  # the 101st take waits on the bucket
