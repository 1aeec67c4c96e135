"""Scheduling queue with a FakeClock: gating, backoff, flushes, hint routing, in-flight replay."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from draplane.api.meta import Obj
from draplane.scheduler.framework import (
    GVK,
    ActionType,
    ClusterEvent,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from draplane.scheduler.metrics import SchedulerMetrics
from draplane.scheduler.plugins.queuesort import PrioritySort
from draplane.scheduler.queue import SchedulingQueue
from draplane.testing.builders import from_pod, make_pod
from draplane.testing.clock import FakeClock

CLAIM_UPDATE = ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.UPDATE, "ResourceClaimUpdate")
NODE_ADD = ClusterEvent(GVK.NODE, ActionType.ADD, "NodeAdd")
POD_DELETE = ClusterEvent(GVK.POD, ActionType.DELETE, "AssignedPodDelete")


@dataclass
class Gate:
    """A PreEnqueue stand-in: rejects pods whose names are in `closed`."""

    closed: set[str] = field(default_factory=set)

    def __call__(self, pod: Obj) -> Status:
        if pod["metadata"]["name"] in self.closed:
            return Status.unresolvable("waiting").with_plugin("Gate")
        return Status()


@dataclass
class Harness:
    queue: SchedulingQueue
    clock: FakeClock
    gate: Gate
    hint: list[QueueingHint]
    metrics: SchedulerMetrics

    async def pop(self) -> QueuedPodInfo:
        return await asyncio.wait_for(self.queue.pop(), timeout=1)

    async def fail(self, pod: Obj, *, plugins: set[str]) -> QueuedPodInfo:
        """Pop `pod` and report its attempt as rejected by `plugins`."""
        qpi = await self.pop()
        assert qpi.pod["metadata"]["name"] == pod["metadata"]["name"]
        cycle = self.queue.scheduling_cycle
        qpi.unschedulable_plugins = set(plugins)
        self.queue.add_unschedulable_if_not_present(qpi, cycle)
        self.queue.done(qpi.pod_info.uid)
        return qpi


def make_harness(*, hints: bool = True, pre_enqueue: bool = True) -> Harness:
    clock = FakeClock()
    gate = Gate()
    hint = [QueueingHint.QUEUE_IMMEDIATELY]

    def claim_hint(pod: Obj, old: Any, new: Any) -> QueueingHint:
        return hint[0]

    metrics = SchedulerMetrics(CollectorRegistry())
    queue = SchedulingQueue(
        less=PrioritySort().less,
        hint_map={
            ClusterEvent(GVK.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE): [
                ("Gate", claim_hint),
                ("Claims", claim_hint),
            ],
            ClusterEvent(GVK.NODE, ActionType.ADD): [("Nodes", None)],
        },
        pre_enqueue=gate if pre_enqueue else None,
        queueing_hints=hints,
        clock=clock,
        metrics=metrics,
    )
    return Harness(queue, clock, gate, hint, metrics)


POD_A = make_pod("a").obj()
POD_B = make_pod("b").obj()


async def test_pop_orders_by_priority_then_arrival() -> None:
    h = make_harness()
    low = make_pod("low").obj()
    high = from_pod(make_pod("high").obj()).priority(10).obj()
    h.queue.add(low)
    h.clock.step(1)
    h.queue.add(POD_A)
    h.queue.add(high)
    popped = [(await h.pop()).pod["metadata"]["name"] for _ in range(3)]
    assert popped == ["high", "low", "a"]


async def test_gated_pod_is_never_attempted_until_released() -> None:
    h = make_harness()
    h.gate.closed.add("a")
    h.queue.add(POD_A)
    assert h.queue.where("default/a") == "gated"
    assert h.queue.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(h.queue.pop(), timeout=0.01)
    qpi = h.queue.queued_pod_info("default/a")
    assert qpi is not None
    assert (qpi.attempts, qpi.gated, qpi.unschedulable_plugins) == (0, True, {"Gate"})

    # An event while the gate is still closed re-runs PreEnqueue and keeps the pod gated.
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})
    assert h.queue.where("default/a") == "gated"

    h.gate.closed.clear()
    h.hint[0] = QueueingHint.QUEUE_AFTER_BACKOFF
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})
    # A gated pod is never backing off: even an after-backoff hint makes it active at once.
    assert h.queue.where("default/a") == "active"
    qpi = await h.pop()
    assert (qpi.attempts, qpi.gated) == (1, False)


async def test_gated_pod_is_released_by_its_pod_update() -> None:
    h = make_harness()
    h.gate.closed.add("a")
    pod = make_pod("a").claim_template("gpu", "t").obj()
    h.queue.add(pod)
    h.gate.closed.clear()
    updated = from_pod(pod).claim_status("gpu", "a-gpu").obj()
    h.queue.update(pod, updated)
    assert h.queue.where("default/a") == "active"
    qpi = await h.pop()
    assert qpi.pod["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": "a-gpu"}
    ]


@pytest.mark.parametrize(
    ("change", "moves"),
    [
        pytest.param(lambda b: b.claim_status("gpu", "a-gpu"), True, id="claim-status-recorded"),
        pytest.param(lambda b: b.label("x", "y"), True, id="label-added"),
        pytest.param(
            lambda b: b.condition("PodScheduled", "False", "Unschedulable"),
            False,
            id="only-conditions",
        ),
        pytest.param(lambda b: b.resource_version("99"), False, id="only-resource-version"),
        pytest.param(lambda b: b.finalizer("example.com/keep"), False, id="only-finalizers"),
        pytest.param(lambda b: b.set("metadata.generation", 7), False, id="only-generation"),
        pytest.param(
            lambda b: b.set("metadata.managedFields", [{"manager": "kubectl"}]),
            False,
            id="only-managed-fields",
        ),
        pytest.param(lambda b: b.phase("Pending"), False, id="only-phase"),
        pytest.param(lambda b: b.node_selector({"a": "b"}), True, id="spec-changed"),
    ],
)
async def test_update_moves_unschedulable_pod_only_when_relevant(change: Any, moves: bool) -> None:
    h = make_harness()
    pod = make_pod("a").claim_template("gpu", "t").obj()
    h.queue.add(pod)
    await h.fail(pod, plugins={"Claims"})
    h.clock.step(5)
    new = change(from_pod(pod)).obj()
    h.queue.update(pod, new)
    assert h.queue.where("default/a") == ("active" if moves else "unschedulable")


@pytest.mark.parametrize(
    ("where", "wait", "expected"),
    [
        pytest.param("active", 0, "active", id="active-replaced-in-place"),
        pytest.param("backoff", 0, "backoff", id="backoff-replaced-in-place"),
        pytest.param("unschedulable", 0, "backoff", id="unschedulable-backing-off"),
        pytest.param("unschedulable", 5, "active", id="unschedulable-backoff-expired"),
        pytest.param(None, 0, "active", id="not-queued-is-added"),
    ],
)
async def test_update_places_the_new_pod(where: str | None, wait: int, expected: str) -> None:
    h = make_harness()
    pod = make_pod("a").obj()
    if where is not None:
        h.queue.add(pod)
    if where == "backoff":
        await h.fail(pod, plugins=set())
    elif where == "unschedulable":
        await h.fail(pod, plugins={"Claims"})
    assert h.queue.where("default/a") == where
    h.clock.step(wait)
    new = from_pod(pod).label("x", "y").obj()
    h.queue.update(pod, new)
    assert h.queue.where("default/a") == expected
    qpi = h.queue.queued_pod_info("default/a")
    assert qpi is not None
    assert qpi.pod == new


async def test_pop_clears_the_rejecting_plugins_of_the_previous_attempt() -> None:
    h = make_harness()
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins={"Claims"})
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})
    qpi = await h.pop()
    # An Error in this attempt must not be routed by the previous attempt's plugins.
    assert (qpi.attempts, qpi.unschedulable_plugins) == (2, set())
    h.queue.add_unschedulable_if_not_present(qpi, h.queue.scheduling_cycle)
    assert h.queue.where("default/a") == "backoff"


@pytest.mark.parametrize(
    "hints", [pytest.param(True, id="hints-on"), pytest.param(False, id="hints-off")]
)
async def test_error_is_retried_after_backoff(hints: bool) -> None:
    h = make_harness(hints=hints)
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins=set())
    assert h.queue.where("default/a") == "backoff"
    h.clock.step(1)
    h.queue.flush_backoff_completed()
    assert h.queue.where("default/a") == "active"


def test_backoff_doubles_from_one_second_up_to_ten() -> None:
    h = make_harness()
    assert [h.queue.backoff_duration(n) for n in range(0, 7)] == [1, 1, 2, 4, 8, 10, 10]


async def test_backoff_grows_with_attempts_and_is_capped() -> None:
    h = make_harness()
    h.queue.add(POD_A)
    waited = []
    for _ in range(6):
        await h.fail(POD_A, plugins=set())  # an Error: retried after backoff
        assert h.queue.where("default/a") == "backoff"
        seconds = 0
        while h.queue.where("default/a") == "backoff":
            h.clock.step(1)
            seconds += 1
            h.queue.flush_backoff_completed()
        waited.append(seconds)
        assert h.queue.where("default/a") == "active"
    assert waited == [1, 2, 4, 8, 10, 10]


async def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    h = make_harness()
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins={"Claims"})
    h.clock.step(299)
    h.queue.flush_unschedulable_leftover()
    assert h.queue.where("default/a") == "unschedulable"
    h.clock.step(2)
    h.queue.flush_unschedulable_leftover()
    assert h.queue.where("default/a") == "active"
    assert (
        h.metrics.registry.get_sample_value(
            "scheduler_queue_incoming_pods_total",
            {"queue": "active", "event": "UnschedulableTimeout"},
        )
        == 1
    )


async def test_flush_reruns_pre_enqueue_for_gated_pods() -> None:
    h = make_harness()
    h.gate.closed.add("a")
    h.queue.add(POD_A)
    h.clock.step(301)
    h.queue.flush_unschedulable_leftover()
    assert h.queue.where("default/a") == "gated"
    h.gate.closed.clear()
    h.queue.flush_unschedulable_leftover()
    assert h.queue.where("default/a") == "active"


async def test_flush_counts_as_a_move_request_with_hints_off() -> None:
    h = make_harness(hints=False)
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins={"Claims"})
    h.clock.step(301)
    h.queue.add(POD_B)
    b = await h.pop()
    cycle_b = h.queue.scheduling_cycle
    h.queue.flush_unschedulable_leftover()  # moves a while b is being scheduled
    b.unschedulable_plugins = {"Claims"}
    h.queue.add_unschedulable_if_not_present(b, cycle_b)
    assert (h.queue.where("default/a"), h.queue.where("default/b")) == ("active", "backoff")


async def test_periodic_flushes_run_on_the_injected_clock() -> None:
    h = make_harness()
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins=set())
    task = asyncio.create_task(h.queue.run())
    try:
        while h.clock.sleepers < 2:
            await asyncio.sleep(0)
        h.clock.step(1)
        for _ in range(10):
            await asyncio.sleep(0)
        assert h.queue.where("default/a") == "active"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(
    ("hint", "plugins", "event", "wait", "expected"),
    [
        pytest.param(
            QueueingHint.QUEUE_SKIP, {"Claims"}, CLAIM_UPDATE, 0, "unschedulable", id="skip-stays"
        ),
        pytest.param(
            QueueingHint.QUEUE_AFTER_BACKOFF,
            {"Claims"},
            CLAIM_UPDATE,
            0,
            "backoff",
            id="after-backoff-while-backing-off",
        ),
        pytest.param(
            QueueingHint.QUEUE_AFTER_BACKOFF,
            {"Claims"},
            CLAIM_UPDATE,
            5,
            "active",
            id="after-backoff-expired",
        ),
        pytest.param(
            QueueingHint.QUEUE_IMMEDIATELY,
            {"Claims"},
            CLAIM_UPDATE,
            0,
            "active",
            id="immediately-skips-backoff",
        ),
        pytest.param(
            QueueingHint.QUEUE_IMMEDIATELY,
            {"Other"},
            CLAIM_UPDATE,
            0,
            "unschedulable",
            id="rejector-did-not-register",
        ),
        pytest.param(
            QueueingHint.QUEUE_IMMEDIATELY,
            {"Claims"},
            POD_DELETE,
            0,
            "unschedulable",
            id="event-not-registered",
        ),
        pytest.param(
            QueueingHint.QUEUE_SKIP,
            {"Nodes"},
            NODE_ADD,
            0,
            "backoff",
            id="no-hint-function-means-after-backoff",
        ),
        pytest.param(
            QueueingHint.QUEUE_SKIP,
            {"Claims", "Nodes"},
            NODE_ADD,
            5,
            "active",
            id="any-plugin-may-requeue",
        ),
    ],
)
async def test_hints_route_pods(
    hint: QueueingHint, plugins: set[str], event: ClusterEvent, wait: int, expected: str
) -> None:
    h = make_harness()
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins=plugins)
    h.clock.step(wait)
    h.hint[0] = hint
    h.queue.move_all_to_active_or_backoff(event, None, {})
    assert h.queue.where("default/a") == expected


@pytest.mark.parametrize(
    ("hint", "event", "expected"),
    [
        pytest.param(QueueingHint.QUEUE_SKIP, CLAIM_UPDATE, "backoff", id="skip-ignored"),
        pytest.param(
            QueueingHint.QUEUE_IMMEDIATELY, CLAIM_UPDATE, "backoff", id="immediately-ignored"
        ),
        pytest.param(
            QueueingHint.QUEUE_IMMEDIATELY, POD_DELETE, "unschedulable", id="event-not-registered"
        ),
    ],
)
async def test_hints_off_every_registered_event_moves_after_backoff(
    hint: QueueingHint, event: ClusterEvent, expected: str
) -> None:
    h = make_harness(hints=False)
    h.queue.add(POD_A)
    await h.fail(POD_A, plugins={"Claims"})
    h.hint[0] = hint  # never consulted: hints are off
    h.queue.move_all_to_active_or_backoff(event, None, {})
    assert h.queue.where("default/a") == expected


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        pytest.param(QueueingHint.QUEUE_IMMEDIATELY, "active", id="immediately"),
        pytest.param(QueueingHint.QUEUE_AFTER_BACKOFF, "backoff", id="after-backoff"),
        pytest.param(QueueingHint.QUEUE_SKIP, "unschedulable", id="skip"),
    ],
)
async def test_events_while_in_flight_are_replayed(hint: QueueingHint, expected: str) -> None:
    h = make_harness()
    h.queue.add(POD_A)
    h.hint[0] = hint
    qpi = await h.pop()
    cycle = h.queue.scheduling_cycle
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})  # during the attempt
    qpi.unschedulable_plugins = {"Claims"}
    h.queue.add_unschedulable_if_not_present(qpi, cycle)
    h.queue.done(qpi.pod_info.uid)
    assert h.queue.where("default/a") == expected


async def test_in_flight_events_are_dropped_when_no_pod_needs_them() -> None:
    h = make_harness()
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})  # nobody in flight
    assert h.queue.in_flight_event_count() == 0
    h.queue.add(POD_A)
    h.queue.add(POD_B)
    a = await h.pop()
    b = await h.pop()
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})
    h.queue.done(a.pod_info.uid)
    assert h.queue.in_flight_event_count() == 1  # b still needs it
    h.queue.done(b.pod_info.uid)
    assert h.queue.in_flight_event_count() == 0


async def test_in_flight_replay_sees_only_events_after_its_own_pop() -> None:
    h = make_harness()
    h.queue.add(POD_A)
    h.queue.add(POD_B)
    a = await h.pop()
    h.queue.move_all_to_active_or_backoff(CLAIM_UPDATE, None, {})  # while only a is in flight
    b = await h.pop()
    for qpi in (a, b):
        qpi.unschedulable_plugins = {"Claims"}
        h.queue.add_unschedulable_if_not_present(qpi, h.queue.scheduling_cycle)
        h.queue.done(qpi.pod_info.uid)
    assert (h.queue.where("default/a"), h.queue.where("default/b")) == ("active", "unschedulable")


async def test_hints_off_uses_move_request_cycle() -> None:
    h = make_harness(hints=False)
    h.queue.add(POD_A)
    h.queue.add(POD_B)
    a = await h.pop()
    cycle_a = h.queue.scheduling_cycle
    h.queue.move_all_to_active_or_backoff(NODE_ADD, None, {})
    a.unschedulable_plugins = {"Claims"}
    h.queue.add_unschedulable_if_not_present(a, cycle_a)
    b = await h.pop()
    b.unschedulable_plugins = {"Claims"}
    h.queue.add_unschedulable_if_not_present(b, h.queue.scheduling_cycle)
    assert (h.queue.where("default/a"), h.queue.where("default/b")) == ("backoff", "unschedulable")


async def test_pre_enqueue_off_never_gates() -> None:
    h = make_harness(pre_enqueue=False)
    h.gate.closed.add("a")
    h.queue.add(POD_A)
    assert h.queue.where("default/a") == "active"


async def test_delete_and_activate() -> None:
    h = make_harness()
    h.queue.add(POD_A)
    h.queue.add(POD_B)
    await h.fail(POD_A, plugins={"Claims"})
    h.queue.delete(POD_B)
    assert h.queue.where("default/b") is None
    h.queue.activate([POD_A])
    assert h.queue.where("default/a") == "active"
    assert (
        h.queue.add_unschedulable_if_not_present(
            h.queue.queued_pod_info("default/a"),
            0,  # type: ignore[arg-type]
        )
        is False
    )
