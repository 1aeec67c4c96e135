"""The scheduler end to end through the real API: informers, queue, plugins, binding.

The resource claim controller's effect is simulated by the test (it creates the claim and
records it in the pod status), and a tiny in-test driver allocates a claim as soon as a
PodSchedulingContext names a selected node. A FakeClock that is never stepped proves that
nothing waited for a backoff.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.api.auth import SCHEDULER, UserInfo
from draplane.api.kinds import (
    EVENTS,
    NODES,
    POD_SCHEDULING_CONTEXTS,
    PODS,
    RESOURCE_CLAIMS,
    RESOURCE_CLASSES,
)
from draplane.api.meta import Obj, deep_copy
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.apistate import wait_for
from draplane.testing.builders import from_pod, make_claim, make_class, make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


@dataclass
class Env:
    cluster: Cluster
    client: Client
    clock: FakeClock
    scheduler: Scheduler
    metrics: CollectorRegistry

    def attempts(self, result: str) -> float:
        value = self.metrics.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": result, "profile": "default-scheduler"}
        )
        return value or 0.0


async def start_env(
    cluster: Cluster, *, hints: bool = True, pre_enqueue: bool = True
) -> AsyncIterator[Env]:
    clock = FakeClock()
    client = cluster.client()
    metrics = CollectorRegistry()
    sched_client = cluster.client(UserInfo(SCHEDULER))
    scheduler = Scheduler(
        sched_client,
        informers=InformerFactory(sched_client, clock=clock),
        clock=clock,
        metrics=metrics,
        queueing_hints=hints,
        pre_enqueue=pre_enqueue,
        mode=versions.CLASSIC,
    )
    task = asyncio.create_task(scheduler.run())
    try:
        await wait_for(scheduler.has_synced)
        yield Env(cluster, client, clock, scheduler, metrics)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await scheduler.wait_idle()


@pytest.fixture
async def env(request: pytest.FixtureRequest, cluster: Cluster) -> AsyncIterator[Env]:
    """The default environment; `indirect` parametrization passes start_env() options."""
    options = getattr(request, "param", {})
    async for e in start_env(cluster, **options):
        yield e


async def test_pods_without_claims_are_bound(env: Env) -> None:
    for i in range(2):
        await env.client.create(NODES, make_node(f"node-{i}").obj())
    for i in range(6):
        await env.client.create(PODS, make_pod(f"pod-{i}").requests(cpu="1").obj(), "default")
    await env.client.create(PODS, make_pod("huge").requests(cpu="5").obj(), "default")

    async def bound() -> dict[str, str]:
        pods = (await env.client.list(PODS, "default"))["items"]
        return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}

    async def settled() -> dict[str, str] | None:
        result = await bound()
        if all(result[f"pod-{i}"] for i in range(6)) and env.attempts("unschedulable"):
            return result
        return None

    result = await wait_for(settled, what="six pods bound, one unschedulable")
    placed = [result[f"pod-{i}"] for i in range(6)]
    assert sorted(placed) == ["node-0"] * 3 + ["node-1"] * 3  # LeastAllocated spreads
    assert result["huge"] == ""
    assert env.attempts("scheduled") == 6
    assert env.attempts("unschedulable") == 1
    await env.scheduler.wait_idle()
    huge = await env.client.get(PODS, "huge", "default")
    condition = next(c for c in huge["status"]["conditions"] if c["type"] == "PodScheduled")
    message = "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate."
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "Unschedulable",
        message,
    )
    events = (await env.client.list(EVENTS, "default"))["items"]
    reasons = sorted((e["involvedObject"]["name"], e["reason"]) for e in events)
    assert reasons == sorted(
        [("huge", "FailedScheduling")] + [(f"pod-{i}", "Scheduled") for i in range(6)]
    )
    assert next(e for e in events if e["reason"] == "FailedScheduling")["message"] == message
    assert env.scheduler.queue.where("default/huge") == "unschedulable"

    # Deleting a bound pod (an AssignedPodDelete event) makes room: NodeResourcesFit's event.
    await env.client.create(
        NODES, make_node("big").capacity(cpu="8", memory="32Gi", pods="110").obj()
    )
    await wait_for(lambda: env.scheduler.queue.where("default/huge") != "unschedulable")


class InTestDriver:
    """Allocates every claim of a pod for the node its PodSchedulingContext selects."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.informers = InformerFactory(client)
        self.tasks: set[asyncio.Task[None]] = set()
        self.informers.informer(POD_SCHEDULING_CONTEXTS).add_handler(
            on_add=self._on_psc, on_update=lambda old, new: self._on_psc(new)
        )

    def _on_psc(self, psc: Obj) -> None:
        node = (psc.get("spec") or {}).get("selectedNode")
        if node:
            task = asyncio.get_running_loop().create_task(self._allocate(psc, node))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _allocate(self, psc: Obj, node: str) -> None:
        md = psc["metadata"]
        pod = await self.client.get(PODS, md["name"], md["namespace"])
        for entry in pod["status"].get("resourceClaimStatuses") or ():
            claim = deep_copy(
                await self.client.get(RESOURCE_CLAIMS, entry["resourceClaimName"], md["namespace"])
            )
            if claim.get("status", {}).get("allocation"):
                continue
            claim["status"] = make_claim().allocation(node=node).reserved_for(pod).obj()["status"]
            await self.client.update(RESOURCE_CLAIMS, claim, subresource="status")


async def create_claim_for(env: Env, pod: Obj) -> None:
    """What the resource claim controller does for a template claim."""
    claim = make_claim("p-gpu").owned_by_pod(pod).obj()
    del claim["metadata"]["uid"]
    await env.client.create(RESOURCE_CLAIMS, claim, "default")
    current = deep_copy(await env.client.get(PODS, "p", "default"))
    current["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "p-gpu"}]
    await env.client.update(PODS, current, subresource="status")


async def seed_claim_pod(env: Env) -> Obj:
    await env.client.create(NODES, make_node("node-0").obj())
    await env.client.create(RESOURCE_CLASSES, make_class("example").obj())
    pod = await env.client.create(
        PODS, make_pod("p").claim_template("gpu", "gpu-template").obj(), "default"
    )
    await wait_for(lambda: env.scheduler.queue.where("default/p") is not None)
    return pod


async def test_pod_waits_for_its_claim_then_schedules_without_backoff(env: Env) -> None:
    driver = InTestDriver(env.client)
    await driver.informers.start()
    try:
        pod = await seed_claim_pod(env)
        assert env.scheduler.queue.where("default/p") == "gated"
        assert env.attempts("unschedulable") + env.attempts("scheduled") == 0
        start = env.clock.monotonic()

        await create_claim_for(env, pod)

        async def bound() -> str:
            return str((await env.client.get(PODS, "p", "default"))["spec"].get("nodeName", ""))

        assert await wait_for(bound, what="pod bound") == "node-0"
    finally:
        await driver.informers.stop()
    assert env.clock.monotonic() == start  # never stepped: no backoff was waited for
    # Attempt 1 asked the driver (PodSchedulingContext); attempt 2 bound. None before.
    assert (env.attempts("unschedulable"), env.attempts("scheduled")) == (1, 1)
    claim = await env.client.get(RESOURCE_CLAIMS, "p-gpu", "default")
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}
    ]
    await env.scheduler.wait_idle()
    contexts = (await env.client.list(POD_SCHEDULING_CONTEXTS, "default"))["items"]
    assert contexts == []  # deleted by PostBind


@pytest.mark.parametrize("env", [{"hints": False}], indirect=True)
async def test_hints_off_the_allocated_pod_waits_for_backoff(env: Env) -> None:
    driver = InTestDriver(env.client)
    await driver.informers.start()
    try:
        pod = await seed_claim_pod(env)
        await create_claim_for(env, pod)
        await wait_for(lambda: env.attempts("unschedulable") == 1)

        async def reserved() -> bool:
            claim = await env.client.get(RESOURCE_CLAIMS, "p-gpu", "default")
            return bool(claim.get("status", {}).get("reservedFor"))

        await wait_for(reserved, what="claim reserved")
        await wait_for(lambda: env.scheduler.queue.where("default/p") == "backoff")
        assert env.attempts("scheduled") == 0
        env.clock.step(1)  # the backoff flush moves it
        await wait_for(lambda: env.attempts("scheduled") == 1)
    finally:
        await driver.informers.stop()


@pytest.mark.parametrize("env", [{"pre_enqueue": False}], indirect=True)
async def test_pre_enqueue_off_attempts_the_pod_and_prefilter_rejects_it(env: Env) -> None:
    await seed_claim_pod(env)
    await wait_for(lambda: env.attempts("unschedulable") == 1)
    await env.scheduler.wait_idle()
    pod = await env.client.get(PODS, "p", "default")
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert condition["message"] == (
        '0/1 nodes are available: pod "default/p": ResourceClaim not created yet. '
        "no new claims to deallocate."
    )
    assert env.scheduler.queue.where("default/p") == "unschedulable"


async def test_pods_of_other_schedulers_are_ignored(env: Env) -> None:
    await env.client.create(NODES, make_node("node-0").obj())
    other = from_pod(make_pod("other").obj()).scheduler_name("someone-else").obj()
    await env.client.create(PODS, other, "default")
    await env.client.create(PODS, make_pod("mine").obj(), "default")
    await wait_for(lambda: env.attempts("scheduled") == 1)
    assert env.scheduler.queue.where("default/other") is None
    assert (await env.client.get(PODS, "other", "default"))["spec"].get("nodeName") is None
