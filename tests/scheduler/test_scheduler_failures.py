"""Failure handling of `schedule_one` through the real API (spec §2.2), with fake plugins;
also a pod waiting at Permit being rejected or allowed.

Each case drives one scheduling attempt by hand and checks what a user and the queue see:
the PodScheduled condition (reason and message), the FailedScheduling event, the attempt
metric, where the pod is queued and with which rejecting plugins, that Unreserve ran and that
the assumed pod was forgotten (the node's pod count is back to zero).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.api.auth import SCHEDULER, UserInfo
from draplane.api.kinds import EVENTS, NODES, PODS
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.scheduler.config import PluginRef, PluginSet, Profile, SchedulerConfig
from draplane.scheduler.framework import Code, PodInfo, Status
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster
from draplane.testing.fake_plugins import (
    FakeBindPlugin,
    FakeFilterPlugin,
    FakePermitPlugin,
    FakeReservePlugin,
    registry_of,
)

PROFILE = Profile(
    plugins={
        "filter": PluginSet(enabled=(PluginRef("FakeFilter"),)),
        "reserve": PluginSet(enabled=(PluginRef("FakeReserve"),)),
        "permit": PluginSet(enabled=(PluginRef("FakePermit"),)),
        "bind": PluginSet(enabled=(PluginRef("FakeBind"),)),
    }
)


@dataclass
class Env:
    cluster: Cluster
    admin: Client
    scheduler: Scheduler
    metrics: CollectorRegistry
    filter: FakeFilterPlugin
    reserve: FakeReservePlugin
    permit: FakePermitPlugin
    bind: FakeBindPlugin

    def attempts(self) -> dict[str, float]:
        return {
            result: self.metrics.get_sample_value(
                "scheduler_schedule_attempts_total",
                {"result": result, "profile": "default-scheduler"},
            )
            or 0.0
            for result in ("scheduled", "unschedulable", "error")
        }

    async def pod_queued(self, key: str = "default/p") -> None:
        await wait_for(lambda: self.scheduler.queue.where(key) == "active")

    async def schedule_one(self) -> None:
        await asyncio.wait_for(self.scheduler.schedule_one(), timeout=5)
        await self.scheduler.wait_idle()


@pytest.fixture
async def env(cluster: Cluster) -> AsyncIterator[Env]:
    client = cluster.client(UserInfo(SCHEDULER))
    informers = InformerFactory(client)
    fakes = (FakeFilterPlugin(), FakeReservePlugin(), FakePermitPlugin(), FakeBindPlugin())
    metrics = CollectorRegistry()
    scheduler = Scheduler(
        client,
        informers=informers,
        clock=FakeClock(),
        metrics=metrics,
        config=SchedulerConfig(profile=PROFILE),
        out_of_tree_registry=registry_of(fakes),
        mode=versions.CLASSIC,
    )
    await informers.start()
    try:
        await informers.wait_synced()
        yield Env(cluster, cluster.client(), scheduler, metrics, *fakes)
    finally:
        await scheduler.wait_idle()
        await informers.stop()


@dataclass(frozen=True)
class FailureCase:
    reason: str
    message: str
    queue: str
    plugins: set[str] = field(default_factory=set)
    unreserved: bool = True
    nodes: int = 1
    filter_code: Code | None = None
    reserve: Status | None = None
    permit: Status | None = None
    bind: Status | None = None


CASES = [
    pytest.param(
        FailureCase(
            reason="Unschedulable",
            message="0/1 nodes are available: 1 waiting for driver.",
            queue="unschedulable",
            plugins={"FakeReserve"},
            reserve=Status.unresolvable("waiting for driver"),
        ),
        id="reserve-rejects",
    ),
    pytest.param(
        FailureCase(
            reason="SchedulerError",
            message='running Reserve plugin "FakeReserve": boom',
            queue="backoff",
            reserve=Status.error("boom"),
        ),
        id="reserve-error",
    ),
    pytest.param(
        FailureCase(
            reason="Unschedulable",
            message="0/1 nodes are available: 1 not now.",
            queue="unschedulable",
            plugins={"FakePermit"},
            permit=Status.unschedulable("not now"),
        ),
        id="permit-rejects",
    ),
    pytest.param(
        FailureCase(
            reason="SchedulerError",
            message='running "FakeFilter" filter plugin: injected filter status for node-0',
            queue="backoff",
            unreserved=False,
            filter_code=Code.ERROR,
        ),
        id="filter-error",
    ),
    pytest.param(
        FailureCase(
            reason="SchedulerError",
            message='running "FakeFilter" filter plugin: injected filter status for node-0',
            queue="backoff",
            unreserved=False,
            filter_code=Code.SKIP,
        ),
        id="filter-may-only-reject",
    ),
    pytest.param(
        FailureCase(
            reason="Unschedulable",
            # The "no new claims" part is DynamicResources' PostFilter answer (spec §4.9).
            message="0/1 nodes are available: 1 injected filter status for node-0. "
            "no new claims to deallocate.",
            queue="unschedulable",
            plugins={"FakeFilter"},
            unreserved=False,
            filter_code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        id="filter-rejects",
    ),
    pytest.param(
        FailureCase(
            reason="Unschedulable",
            message="no nodes available to schedule pods",
            queue="backoff",
            unreserved=False,
            nodes=0,
        ),
        id="no-nodes",
    ),
    pytest.param(
        FailureCase(
            reason="SchedulerError",
            message='running Bind plugin "FakeBind": apiserver down',
            queue="backoff",
            bind=Status.error("apiserver down"),
        ),
        id="bind-error",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_failed_attempt(env: Env, case: FailureCase) -> None:
    for i in range(case.nodes):
        await env.admin.create(NODES, make_node(f"node-{i}").obj())
    if case.filter_code is not None:
        env.filter.failed_nodes["node-0"] = case.filter_code
    env.reserve.status = case.reserve or env.reserve.status
    env.permit.status = case.permit or env.permit.status
    env.bind.status = case.bind or env.bind.status
    await wait_for(lambda: len(env.scheduler.cache.node_infos()) == case.nodes)
    await env.admin.create(PODS, make_pod("p").obj(), "default")
    await env.pod_queued()

    await env.schedule_one()

    pod = await env.admin.get(PODS, "p", "default")
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        case.reason,
        case.message,
    )
    assert pod["spec"].get("nodeName") is None
    events = (await env.admin.list(EVENTS, "default"))["items"]
    assert [(e["reason"], e["type"], e["message"]) for e in events] == [
        ("FailedScheduling", "Warning", case.message)
    ]
    result = "unschedulable" if case.reason == "Unschedulable" else "error"
    assert env.attempts() == {"scheduled": 0, "unschedulable": 0, "error": 0, result: 1}
    qpi = env.scheduler.queue.queued_pod_info("default/p")
    assert qpi is not None
    assert (env.scheduler.queue.where("default/p"), qpi.unschedulable_plugins) == (
        case.queue,
        case.plugins,
    )
    assert env.reserve.unreserved == (["default/p"] if case.unreserved else [])
    assert [n.requested.pods for n in env.scheduler.cache.node_infos()] == [0] * case.nodes
    assert not env.scheduler.cache.is_assumed(pod["metadata"]["uid"])


async def pod_waiting_at_permit(env: Env) -> Obj:
    """Pod p, scheduled to node-0 and waiting at FakePermit (assumed in the cache)."""
    await env.admin.create(NODES, make_node("node-0").obj())
    env.permit.status, env.permit.timeout = Status.wait(), 60
    await wait_for(lambda: len(env.scheduler.cache.node_infos()) == 1)
    pod = await env.admin.create(PODS, make_pod("p").obj(), "default")
    await env.pod_queued()
    await asyncio.wait_for(env.scheduler.schedule_one(), timeout=5)
    return pod


async def test_permit_wait_then_rejection_requeues_by_the_rejecting_plugin(env: Env) -> None:
    """A binding-cycle rejection is a FitError naming the plugin; the forget event that
    follows is sent after the pod is requeued, so it does not move the pod itself."""
    pod = await pod_waiting_at_permit(env)
    assert env.scheduler.cache.is_assumed(pod["metadata"]["uid"])  # waiting on permit

    waiting = env.scheduler.framework.get_waiting_pod(pod["metadata"]["uid"])
    assert waiting is not None
    waiting.reject("FakePermit", "quota exceeded")
    await env.scheduler.wait_idle()

    qpi = env.scheduler.queue.queued_pod_info("default/p")
    assert qpi is not None
    assert (env.scheduler.queue.where("default/p"), qpi.unschedulable_plugins) == (
        "unschedulable",
        {"FakePermit"},
    )
    assert env.reserve.unreserved == ["default/p"]
    assert not env.scheduler.cache.is_assumed(pod["metadata"]["uid"])
    assert env.scheduler.cache.node_infos()[0].requested.pods == 0
    live = await env.admin.get(PODS, "p", "default")
    condition = next(c for c in live["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (condition["reason"], condition["message"]) == (
        "Unschedulable",
        "0/1 nodes are available: 1 quota exceeded.",
    )


@pytest.mark.parametrize(("held", "other_queue"), [(False, "backoff"), (True, "unschedulable")])
async def test_binding_rejection_frees_the_node_unless_the_pod_is_held(
    env: Env, held: bool, other_queue: str
) -> None:
    """Forgetting a rejected pod is an assigned-pod delete for the pods waiting on its node;
    a pod held there (waiting for its driver, as DynamicResources' PreBind holds it) still
    counts on the node and frees nothing."""
    pod = await pod_waiting_at_permit(env)
    # Another pod is rejected meanwhile and waits for an event.
    env.filter.failed_nodes["node-0"] = Code.UNSCHEDULABLE
    await env.admin.create(PODS, make_pod("q").obj(), "default")
    await env.pod_queued("default/q")
    await asyncio.wait_for(env.scheduler.schedule_one(), timeout=5)
    assert env.scheduler.queue.where("default/q") == "unschedulable"
    if held:
        env.scheduler.cache.hold(PodInfo(pod), "node-0")

    waiting = env.scheduler.framework.get_waiting_pod(pod["metadata"]["uid"])
    assert waiting is not None
    waiting.reject("FakePermit", "waiting for driver")
    await env.scheduler.wait_idle()

    assert env.scheduler.queue.where("default/p") == "unschedulable"
    assert env.scheduler.cache.node_infos()[0].requested.pods == (1 if held else 0)
    assert env.scheduler.queue.where("default/q") == other_queue


async def test_pod_bound_meanwhile_is_not_requeued(env: Env) -> None:
    await env.admin.create(NODES, make_node("node-0").obj())
    lister = env.scheduler.framework.handle.lister(PODS)

    async def bind_elsewhere(pod_info: PodInfo) -> None:
        # Another scheduler (or an extender that timed out) bound the pod meanwhile.
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod_info.name, "namespace": pod_info.namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"},
        }
        await env.admin.create(PODS, binding, "default", subresource="binding", name="p")
        await wait_for(lambda: (lister.get("p", "default") or {}).get("spec", {}).get("nodeName"))

    env.reserve.before_reserve = bind_elsewhere
    env.reserve.status = Status.unresolvable("lost the race")
    await wait_for(lambda: len(env.scheduler.cache.node_infos()) == 1)
    await env.admin.create(PODS, make_pod("p").obj(), "default")
    await env.pod_queued()

    await env.schedule_one()

    assert env.scheduler.queue.where("default/p") is None
    events = (await env.admin.list(EVENTS, "default"))["items"]
    assert [(e["reason"], e["message"]) for e in events] == [
        ("FailedScheduling", "0/1 nodes are available: 1 lost the race.")
    ]


async def test_pod_being_deleted_is_not_attempted(env: Env) -> None:
    await env.admin.create(NODES, make_node("node-0").obj())
    await wait_for(lambda: len(env.scheduler.cache.node_infos()) == 1)
    pod: Obj = make_pod("p").finalizer("example.com/keep").obj()
    await env.admin.create(PODS, pod, "default")
    await env.pod_queued()
    await env.admin.delete(PODS, "p", "default")

    def marked_for_deletion() -> bool:
        qpi = env.scheduler.queue.queued_pod_info("default/p")
        return qpi is not None and bool(qpi.pod["metadata"].get("deletionTimestamp"))

    await wait_for(marked_for_deletion)

    await env.schedule_one()

    assert env.scheduler.queue.where("default/p") is None
    assert env.attempts() == {"scheduled": 0, "unschedulable": 0, "error": 0}
    assert env.bind.bound == []


async def test_permit_wait_then_allow_binds(env: Env) -> None:
    """The counterpart of a waiting-pod rejection: allowed, the binding cycle goes on."""
    pod = await pod_waiting_at_permit(env)
    assert env.bind.bound == []

    waiting = env.scheduler.framework.get_waiting_pod(pod["metadata"]["uid"])
    assert waiting is not None
    waiting.allow("FakePermit")
    await env.scheduler.wait_idle()

    assert env.bind.bound == ["default/p"]
    assert env.attempts() == {"scheduled": 1, "unschedulable": 0, "error": 0}
    assert env.reserve.unreserved == []
    assert env.scheduler.queue.where("default/p") is None
