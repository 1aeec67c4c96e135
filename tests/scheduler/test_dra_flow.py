"""The seed's two claims, end to end: the real control plane (claim controller, scheduler,
example driver, nodes) on memory storage and a FakeClock, driven through the API.

(a) With PreEnqueue on, a pod whose template claim cannot be created yet is never attempted.
(b) With queueing hints on, the pod is scheduled as soon as what it waits for arrives: the
clock is never stepped, so no backoff was waited for; the classic template flow takes exactly
two attempts (ask the driver, then bind). Without the improvements the pod needs backoff.
(c) Pods created at once that fill every device stay at the attempts floor (2, or 3 with two
drivers): a pod waiting for its driver counts on its selected node, so the others spread.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from draplane.api import versions
from draplane.api.kinds import PODS, RESOURCE_CLAIM_TEMPLATES
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_pod, make_template
from draplane.testing.clock import FakeClock


@dataclass(frozen=True)
class Flow:
    hints: bool
    pre_enqueue: bool
    attempts_before_template: float
    """Failed attempts while the template (so the claim) does not exist."""
    backoff_steps: int
    """Times the test must step the clock past a backoff before the pod is bound."""
    attempts: float
    """All attempts until bound."""


FLOWS = [
    pytest.param(Flow(True, True, 0, 0, 2), id="hints-and-pre-enqueue"),
    pytest.param(Flow(False, True, 0, 1, 2), id="hints-off"),
    pytest.param(Flow(True, False, 1, 1, 3), id="pre-enqueue-off"),
]


@pytest.fixture
async def start_plane() -> AsyncIterator[Callable[[Flow], ControlPlane]]:
    planes: list[ControlPlane] = []

    def build(flow: Flow) -> ControlPlane:
        config = ControlPlaneConfig(
            port=0,
            nodes=2,
            store="memory",
            queueing_hints=flow.hints,
            pre_enqueue=flow.pre_enqueue,
            kubernetes_version=versions.CLASSIC,
        )
        plane = ControlPlane(config, clock=FakeClock())
        planes.append(plane)
        return plane

    yield build
    for plane in planes:
        await plane.stop()


def sample(plane: ControlPlane, name: str, labels: dict[str, str]) -> float:
    return plane.metrics.get_sample_value(name, labels) or 0.0


def attempts(plane: ControlPlane, result: str) -> float:
    labels = {"result": result, "profile": "default-scheduler"}
    return sample(plane, "scheduler_schedule_attempts_total", labels)


@pytest.mark.parametrize("flow", FLOWS)
async def test_template_claim_flow(start_plane: Callable[[Flow], ControlPlane], flow: Flow) -> None:
    plane = start_plane(flow)
    await plane.start()
    clock = plane.clock
    assert isinstance(clock, FakeClock)
    scheduler = plane.components["scheduler"]
    assert isinstance(scheduler, Scheduler)
    client = plane.client()
    start = clock.monotonic()

    pod = make_pod("p").claim_template("gpu", "gpu-template").obj()
    await client.create(PODS, pod, "default")

    # The claim controller tried and failed (no template); the scheduler has the pod.
    async def claim_controller_failed() -> bool:
        return sample(plane, "workqueue_retries_total", {"name": "resource_claim"}) >= 1

    await wait_for(claim_controller_failed, what="claim controller retry")

    async def settled() -> bool:
        where = scheduler.queue.where("default/p")
        return where == ("gated" if flow.pre_enqueue else "unschedulable")

    await wait_for(settled, what="pod parked")
    assert (attempts(plane, "unschedulable"), attempts(plane, "scheduled")) == (
        flow.attempts_before_template,
        0,
    )

    template = make_template("gpu-template").resource_class("example").obj()
    await client.create(RESOURCE_CLAIM_TEMPLATES, template, "default")

    async def node_name() -> str:
        live = await client.get(PODS, "p", "default")
        return str(live["spec"].get("nodeName") or "")

    # Without hints every event sends the pod through backoff: step the fake clock past each
    # backoff until it is bound (how many depends on when the driver's answer arrives).
    steps = 0

    async def bound_stepping_backoffs() -> str:
        nonlocal steps
        qpi = scheduler.queue.queued_pod_info("default/p")
        if scheduler.queue.where("default/p") == "backoff" and qpi is not None:
            assert await node_name() == ""
            clock.step(scheduler.queue.backoff_duration(qpi.attempts))
            steps += 1
        return await node_name()

    await wait_for(bound_stepping_backoffs, what="pod bound")
    assert (steps > 0) == (flow.backoff_steps > 0)
    assert await wait_for(node_name, what="pod bound") in ("node-0", "node-1")
    unschedulable = attempts(plane, "unschedulable")
    assert attempts(plane, "scheduled") == 1
    if flow.hints:
        assert unschedulable == flow.attempts - 1
    else:
        # Without hints the driver's answer may land during an attempt and cost one more.
        assert flow.attempts - 1 <= unschedulable <= flow.attempts
    if flow.backoff_steps == 0:
        assert clock.monotonic() == start  # never stepped: nothing waited for a backoff
    assert (backoff_entries(plane) > 0) == (flow.backoff_steps > 0)


def backoff_entries(plane: ControlPlane) -> float:
    """How often any pod entered the backoff queue, whatever the event."""
    return sum(
        s.value
        for metric in plane.metrics.collect()
        if metric.name == "scheduler_queue_incoming_pods"
        for s in metric.samples
        if s.name.endswith("_total") and s.labels.get("queue") == "backoff"
    )


@dataclass(frozen=True)
class Fill:
    """Pods created at once that fill every device of every node exactly."""

    nodes: int
    pods: int
    drivers: tuple[DriverSpec, ...]
    templates: tuple[tuple[str, str, tuple[str, ...]], ...]
    """(template, resource class, pod claim names drawn from it)"""
    attempts_per_pod: int


FILLS = [
    pytest.param(
        Fill(3, 6, (DriverSpec(devices_per_node=2),), (("t", "example", ("gpu",)),), 2),
        id="one-claim",
    ),
    pytest.param(
        Fill(
            2,
            4,
            (
                DriverSpec(devices_per_node=4),
                DriverSpec(
                    name="driver2.example.com", resource_class="example2", devices_per_node=4
                ),
            ),
            (("t1", "example", ("a", "b")), ("t2", "example2", ("c", "d"))),
            3,
        ),
        id="two-drivers-four-claims",
    ),
]


@pytest.mark.parametrize("fill", FILLS)
async def test_concurrent_pods_fill_the_cluster_at_the_attempts_floor(fill: Fill) -> None:
    # A pod waiting for its driver counts on its selected node, so the pods scheduled
    # meanwhile pick other nodes and no driver has to reject a node (no extra attempt).
    plane = ControlPlane(
        ControlPlaneConfig(
            port=0,
            nodes=fill.nodes,
            store="memory",
            drivers=list(fill.drivers),
            kubernetes_version=versions.CLASSIC,
        ),
        clock=FakeClock(),
    )
    try:
        await plane.start()
        client = plane.client()
        for template, resource_class, _ in fill.templates:
            obj = make_template(template).resource_class(resource_class).obj()
            await client.create(RESOURCE_CLAIM_TEMPLATES, obj, "default")
        for i in range(fill.pods):
            pod = make_pod(f"p{i}")
            for template, _, pod_claims in fill.templates:
                for pod_claim in pod_claims:
                    pod = pod.claim_template(pod_claim, template)
            await client.create(PODS, pod.obj(), "default")

        async def nodes_of_bound_pods() -> list[str] | None:
            listed = await client.list(PODS, "default")
            nodes = [p["spec"].get("nodeName") for p in listed["items"]]
            return None if not all(nodes) else sorted(nodes)

        nodes = await wait_for(nodes_of_bound_pods, timeout=10, what="every pod bound")
        per_node = fill.pods // fill.nodes
        assert nodes == sorted(f"node-{n}" for n in range(fill.nodes) for _ in range(per_node))
        assert (attempts(plane, "unschedulable"), attempts(plane, "scheduled")) == (
            fill.pods * (fill.attempts_per_pod - 1),
            fill.pods,
        )
    finally:
        await plane.stop()
