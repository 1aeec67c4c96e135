"""Pods waiting at Permit, through the real API with fake plugins (waiting_pods_map.go).

Each waiting pod has one timer per plugin that asked it to wait, on the scheduler's injected
clock; the timers stop when the pod is allowed by all its plugins, rejected or deleted, and an
earlier attempt's timer never touches a later attempt. Plugins reach the waiting pods through
their framework handle.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from draplane.api import versions
from draplane.api.auth import SCHEDULER, UserInfo
from draplane.api.kinds import NODES, PODS
from draplane.api.meta import Obj
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.scheduler.config import PluginRef, PluginSet, Profile, SchedulerConfig
from draplane.scheduler.framework import Handle, PluginArgs, Status, WaitingPod
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster
from draplane.testing.fake_plugins import FakeBindPlugin, FakePermitPlugin, FakeReservePlugin

PROFILE = Profile(
    plugins={
        "reserve": PluginSet(enabled=(PluginRef("FakeReserve"),)),
        "permit": PluginSet(enabled=(PluginRef("FakePermit"), PluginRef("OtherPermit"))),
        "bind": PluginSet(enabled=(PluginRef("FakeBind"),)),
    }
)


@dataclass
class Env:
    cluster: Cluster
    admin: Client
    scheduler: Scheduler
    clock: FakeClock
    reserve: FakeReservePlugin
    permit: FakePermitPlugin
    other: FakePermitPlugin
    bind: FakeBindPlugin
    handles: list[Handle]

    async def waiting_pod(self, wait: dict[str, float]) -> Obj:
        """Create pod p and run its scheduling cycle; the named permit plugins ask it to wait."""
        for plugin in (self.permit, self.other):
            if plugin.name in wait:
                plugin.status, plugin.timeout = Status.wait(), wait[plugin.name]
        pod = await self.admin.create(PODS, make_pod("p").obj(), "default")
        await wait_for(lambda: self.scheduler.queue.where("default/p") == "active")
        await self.attempt()
        return pod

    async def attempt(self) -> None:
        await asyncio.wait_for(self.scheduler.schedule_one(), timeout=5)

    async def binding_done(self) -> None:
        """The binding cycles finish (bounded: a wait on a timer the clock does not drive
        would never end)."""
        await asyncio.wait_for(self.scheduler.wait_idle(), timeout=5)

    def waiting(self, pod: Obj) -> WaitingPod | None:
        return self.scheduler.framework.get_waiting_pod(pod["metadata"]["uid"])

    async def condition(self) -> tuple[str, str]:
        live = await self.admin.get(PODS, "p", "default")
        cond = next(c for c in live["status"]["conditions"] if c["type"] == "PodScheduled")
        return cond["reason"], cond["message"]


@pytest.fixture
async def env(cluster: Cluster) -> AsyncIterator[Env]:
    client = cluster.client(UserInfo(SCHEDULER))
    informers = InformerFactory(client)
    reserve, bind = FakeReservePlugin(), FakeBindPlugin()
    permit, other = FakePermitPlugin(), FakePermitPlugin(name="OtherPermit")
    handles: list[Handle] = []

    def keeping_handle(plugin: object) -> Callable[[PluginArgs, Handle], object]:
        def new(args: PluginArgs, handle: Handle) -> object:
            handles.append(handle)
            return plugin

        return new

    clock = FakeClock()
    scheduler = Scheduler(
        client,
        informers=informers,
        clock=clock,
        config=SchedulerConfig(profile=PROFILE),
        out_of_tree_registry={
            p.name: keeping_handle(p)  # type: ignore[misc]
            for p in (reserve, permit, other, bind)
        },
        mode=versions.CLASSIC,
    )
    await informers.start()
    try:
        await informers.wait_synced()
        admin = cluster.client()
        await admin.create(NODES, make_node("node-0").obj())
        await wait_for(lambda: len(scheduler.cache.node_infos()) == 1)
        yield Env(cluster, admin, scheduler, clock, reserve, permit, other, bind, handles)
    finally:
        scheduler.framework.close()
        await scheduler.wait_idle()
        await informers.stop()


@pytest.mark.parametrize(
    ("timeout", "waited"),
    [
        pytest.param(60, "1m0s", id="one-minute"),
        pytest.param(0.2, "200ms", id="sub-second"),
        pytest.param(3600, "15m0s", id="capped-at-15-minutes"),
    ],
)
async def test_timeout_runs_on_the_injected_clock(env: Env, timeout: float, waited: str) -> None:
    pod = await env.waiting_pod({"FakePermit": timeout})
    waiting = env.waiting(pod)
    assert waiting is not None and waiting.get_pending_plugins() == ["FakePermit"]

    env.clock.step(min(timeout, 900) - 0.01)
    await asyncio.sleep(0)
    assert env.waiting(pod) is waiting
    env.clock.step(0.01)
    await env.binding_done()

    message = (
        f"0/1 nodes are available: 1 rejected due to timeout after waiting {waited} at plugin "
        "FakePermit."
    )
    assert await env.condition() == ("Unschedulable", message)
    qpi = env.scheduler.queue.queued_pod_info("default/p")
    assert qpi is not None and qpi.unschedulable_plugins == {"FakePermit"}
    assert env.reserve.unreserved == ["default/p"]
    assert env.bind.bound == []
    assert env.waiting(pod) is None
    assert env.clock.sleepers == 0


async def test_a_later_attempt_has_its_own_timers(env: Env) -> None:
    """The first attempt is rejected before its 1 s timer fires; that timer is stopped, so
    the second attempt (60 s) is only rejected by its own, with its own message."""
    pod = await env.waiting_pod({"FakePermit": 1})
    first = env.waiting(pod)
    assert first is not None
    first.reject("FakePermit", "quota exceeded")
    await env.binding_done()
    assert await env.condition() == (
        "Unschedulable",
        "0/1 nodes are available: 1 quota exceeded.",
    )
    assert env.clock.sleepers == 0

    env.permit.timeout = 60
    env.scheduler.queue.activate([pod])
    await env.attempt()
    second = env.waiting(pod)
    assert second is not None and second is not first
    env.clock.step(1)
    await asyncio.sleep(0)
    assert env.waiting(pod) is second
    assert second.get_pending_plugins() == ["FakePermit"]

    env.clock.step(59)
    await env.binding_done()
    assert await env.condition() == (
        "Unschedulable",
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin "
        "FakePermit.",
    )
    assert env.reserve.unreserved == ["default/p", "default/p"]


async def test_every_waiting_plugin_must_allow(env: Env) -> None:
    pod = await env.waiting_pod({"FakePermit": 10, "OtherPermit": 60})
    waiting = env.waiting(pod)
    assert waiting is not None
    assert sorted(waiting.get_pending_plugins()) == ["FakePermit", "OtherPermit"]

    waiting.allow("FakePermit")
    env.clock.step(10)  # FakePermit's timer was stopped by its allow
    await asyncio.sleep(0)
    assert env.waiting(pod) is waiting
    assert waiting.get_pending_plugins() == ["OtherPermit"]
    assert env.bind.bound == []

    waiting.allow("OtherPermit")
    await env.binding_done()
    assert env.bind.bound == ["default/p"]
    assert env.waiting(pod) is None
    assert env.clock.sleepers == 0


async def test_deleting_a_waiting_pod_rejects_it(env: Env) -> None:
    pod = await env.waiting_pod({"FakePermit": 60})
    assert env.scheduler.cache.is_assumed(pod["metadata"]["uid"])

    await env.admin.delete(PODS, "p", "default")
    await env.binding_done()

    assert env.waiting(pod) is None
    assert env.reserve.unreserved == ["default/p"]
    assert not env.scheduler.cache.is_assumed(pod["metadata"]["uid"])
    assert env.scheduler.cache.node_infos()[0].requested.pods == 0
    assert env.bind.bound == []
    assert env.clock.sleepers == 0


async def test_plugins_reach_waiting_pods_through_their_handle(env: Env) -> None:
    pod = await env.waiting_pod({"OtherPermit": 60})
    handle = env.handles[0]
    assert all(h is handle for h in env.handles)
    seen: list[str] = []
    handle.iterate_over_waiting_pods(lambda w: seen.append(w.pod["metadata"]["name"]))
    assert seen == ["p"]
    waiting = handle.get_waiting_pod(pod["metadata"]["uid"])
    assert waiting is not None and waiting.get_pending_plugins() == ["OtherPermit"]

    assert handle.reject_waiting_pod("no-such-uid") is False
    assert handle.reject_waiting_pod(pod["metadata"]["uid"]) is True
    await env.binding_done()

    qpi = env.scheduler.queue.queued_pod_info("default/p")
    assert qpi is not None
    assert env.bind.bound == []
    assert handle.get_waiting_pod(pod["metadata"]["uid"]) is None
