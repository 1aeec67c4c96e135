"""The work queue's client-go semantics, driven by a FakeClock (no wall-clock sleeps)."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from draplane.client.ratelimit import ItemExponentialFailureRateLimiter
from draplane.client.workqueue import RateLimitingQueue, ShutDown
from draplane.testing.clock import FakeClock


def new_queue(clock: FakeClock | None = None, **kwargs: object) -> RateLimitingQueue[str]:
    return RateLimitingQueue(clock=clock or FakeClock(), **kwargs)  # type: ignore[arg-type]


async def get_now(queue: RateLimitingQueue[str]) -> str:
    return await asyncio.wait_for(queue.get(), timeout=1)


async def settle() -> None:
    """Let the delaying loop run after a clock step."""
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.mark.parametrize(
    ("adds", "want"),
    [
        pytest.param(["a"], ["a"], id="single"),
        pytest.param(["a", "a", "a"], ["a"], id="dedup"),
        pytest.param(["a", "b", "a", "c", "b"], ["a", "b", "c"], id="fifo-dedup"),
    ],
)
async def test_add_dedups_and_keeps_fifo_order(adds: list[str], want: list[str]) -> None:
    queue = new_queue()
    for item in adds:
        queue.add(item)
    assert len(queue) == len(want)
    assert [await get_now(queue) for _ in want] == want
    assert len(queue) == 0


async def test_item_being_processed_is_not_handed_out_again_until_done() -> None:
    queue = new_queue()
    queue.add("a")
    assert await get_now(queue) == "a"
    queue.add("a")
    assert len(queue) == 0
    second = asyncio.create_task(queue.get())
    await settle()
    assert not second.done()
    queue.done("a")
    assert await asyncio.wait_for(second, 1) == "a"


async def test_done_without_new_add_does_not_requeue() -> None:
    queue = new_queue()
    queue.add("a")
    item = await get_now(queue)
    queue.done(item)
    assert len(queue) == 0


async def test_add_while_processing_merges_repeated_adds() -> None:
    queue = new_queue()
    queue.add("a")
    await get_now(queue)
    queue.add("a")
    queue.add("a")
    queue.done("a")
    assert len(queue) == 1
    assert await get_now(queue) == "a"
    queue.done("a")
    assert len(queue) == 0


async def test_waiting_getters_are_woken_in_turn() -> None:
    queue = new_queue()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await settle()
    for item in ("x", "y", "z"):
        queue.add(item)
    results = await asyncio.wait_for(asyncio.gather(*getters), 1)
    assert sorted(results) == ["x", "y", "z"]


async def test_cancelled_getter_does_not_swallow_item() -> None:
    queue = new_queue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await settle()
    queue.add("a")
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    assert await asyncio.wait_for(second, 1) == "a"


async def test_shut_down_drains_then_raises_and_ignores_adds() -> None:
    queue = new_queue()
    queue.add("a")
    queue.shut_down()
    queue.add("b")
    assert await get_now(queue) == "a"
    with pytest.raises(ShutDown):
        await get_now(queue)


async def test_shut_down_wakes_blocked_getters() -> None:
    queue = new_queue()
    getter = asyncio.create_task(queue.get())
    await settle()
    queue.shut_down()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)


async def test_shut_down_with_drain_waits_for_processing() -> None:
    queue = new_queue()
    queue.add("a")
    await get_now(queue)
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await settle()
    assert not drain.done()
    queue.done("a")
    await asyncio.wait_for(drain, 1)
    assert queue.shutting_down


async def test_add_after_delays_until_clock_passes() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    queue.add_after("a", 10)
    await settle()
    assert len(queue) == 0
    clock.step(9.9)
    await settle()
    assert len(queue) == 0
    clock.step(0.1)
    await settle()
    assert len(queue) == 1
    assert await get_now(queue) == "a"


async def test_add_after_orders_by_ready_time() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    queue.add_after("late", 30)
    queue.add_after("early", 10)
    queue.add_after("middle", 20)
    await settle()
    clock.step(30)
    await settle()
    assert [await get_now(queue) for _ in range(3)] == ["early", "middle", "late"]


@pytest.mark.parametrize(
    ("first", "second", "ready_after"),
    [
        pytest.param(10.0, 5.0, 5.0, id="earlier-wins"),
        pytest.param(5.0, 10.0, 5.0, id="later-ignored"),
    ],
)
async def test_add_after_twice_keeps_earliest(
    first: float, second: float, ready_after: float
) -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    queue.add_after("a", first)
    await settle()
    queue.add_after("a", second)
    await settle()
    clock.step(ready_after - 0.01)
    await settle()
    assert len(queue) == 0
    clock.step(0.01)
    await settle()
    assert len(queue) == 1
    clock.step(20)
    await settle()
    assert len(queue) == 1


async def test_add_after_zero_adds_immediately() -> None:
    queue = new_queue()
    queue.add_after("a", 0)
    assert len(queue) == 1


async def test_add_rate_limited_backs_off_and_forget_resets() -> None:
    clock = FakeClock()
    queue = new_queue(clock, rate_limiter=ItemExponentialFailureRateLimiter(base=1, cap=100))
    queue.add_rate_limited("a")
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 2
    await settle()
    clock.step(1)
    await settle()
    assert await get_now(queue) == "a"
    queue.forget("a")
    assert queue.num_requeues("a") == 0


async def test_metrics_are_recorded_per_queue_name() -> None:
    clock = FakeClock()
    registry = CollectorRegistry()
    queue = new_queue(clock, name="claims", metrics=registry)
    other = new_queue(clock, name="pods", metrics=registry)
    queue.add("a")
    queue.add("b")
    other.add("x")
    clock.step(2)
    item = await get_now(queue)
    clock.step(3)
    queue.done(item)
    queue.add_rate_limited("c")

    def sample(metric: str) -> float | None:
        return registry.get_sample_value(metric, {"name": "claims"})

    assert sample("workqueue_adds_total") == 2
    assert sample("workqueue_depth") == 1
    assert sample("workqueue_queue_duration_seconds_sum") == 2
    assert sample("workqueue_work_duration_seconds_sum") == 3
    assert sample("workqueue_retries_total") == 1
    assert registry.get_sample_value("workqueue_adds_total", {"name": "pods"}) == 1
