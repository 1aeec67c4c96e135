"""run_workers: forget on success, rate-limited retry on failure, done always, stop on cancel."""

from __future__ import annotations

import asyncio

from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.client.workers import run_workers
from draplane.client.workqueue import RateLimitingQueue
from draplane.testing.clock import FakeClock


async def test_failed_keys_retry_with_backoff_and_succeed() -> None:
    clock = FakeClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue(
        name="t", rate_limiter=ItemExponentialFailureRateLimiter(base=1.0, cap=10.0), clock=clock
    )
    calls: list[str] = []
    failures = {"b": 2}
    synced = asyncio.Event()
    errors: list[tuple[str, str]] = []

    async def sync(key: str) -> None:
        calls.append(key)
        if failures.get(key, 0) > 0:
            failures[key] -= 1
            raise RuntimeError(f"boom {key}")
        if key == "b":
            synced.set()

    runner = asyncio.create_task(
        run_workers(
            queue,
            sync,
            workers=2,
            name="t",
            log_error=lambda key, err: errors.append((key, str(err))),
        )
    )
    queue.add("a")
    queue.add("b")
    for _ in range(50):
        await asyncio.sleep(0)
    assert sorted(calls) == ["a", "b"]
    assert queue.num_requeues("a") == 0
    assert queue.num_requeues("b") == 1
    clock.step(1.0)
    for _ in range(50):
        await asyncio.sleep(0)
    assert calls.count("b") == 2
    clock.step(2.0)
    await asyncio.wait_for(synced.wait(), 5)
    assert calls.count("b") == 3
    assert queue.num_requeues("b") == 0
    assert errors == [("b", "boom b"), ("b", "boom b")]
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    queue.add("c")
    assert len(queue) == 0
