"""Leader election over a real in-process API: acquire, release, take-over after expiry,
step-down when renewal fails. Candidates' timing runs on FakeClocks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from draplane.api.errors import internal
from draplane.api.kinds import LEASES
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.client.interface import Client, Transport
from draplane.client.leaderelection import LeaderElectionLost, LeaderElector
from draplane.client.local import LocalClient
from draplane.testing.apistate import wait_for
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster


def elector(client: Client, identity: str, clock: FakeClock, **kw: bool) -> LeaderElector:
    return LeaderElector(
        client,
        lease_name="scheduler",
        identity=identity,
        clock=clock,
        **kw,  # type: ignore[arg-type]
    )


async def lease(client: LocalClient) -> Obj:
    return await client.get(LEASES, "scheduler", "kube-system")


async def hold_forever() -> None:
    await asyncio.Event().wait()


async def test_acquires_creates_lease_and_releases_on_cancel(cluster: Cluster) -> None:
    client = cluster.client()
    candidate = elector(client, "a", FakeClock())
    task = asyncio.create_task(candidate.run(hold_forever))
    await wait_for(lambda: candidate.is_leader)
    spec = (await lease(client))["spec"]
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"], spec["leaseTransitions"]) == (
        "a",
        15,
        0,
    )
    assert spec["acquireTime"] == spec["renewTime"]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert not candidate.is_leader
    assert not (await lease(client))["spec"].get("holderIdentity")


async def test_second_candidate_takes_over_only_after_lease_expires(cluster: Cluster) -> None:
    client = cluster.client()
    first = elector(client, "a", FakeClock(), release_on_cancel=False)
    first_task = asyncio.create_task(first.run(hold_forever))
    await wait_for(lambda: first.is_leader)
    first_task.cancel()
    await asyncio.gather(first_task, return_exceptions=True)

    clock = FakeClock()
    second = elector(client, "b", clock)
    started = asyncio.Event()

    async def lead() -> None:
        started.set()
        await hold_forever()

    second_task = asyncio.create_task(second.run(lead))
    for _ in range(7):  # 14 s: the lease (15 s) has not expired yet
        await wait_for(lambda: clock.sleepers == 1)
        clock.step(2)
    await wait_for(lambda: clock.sleepers == 1)
    assert not second.is_leader
    clock.step(2)
    await asyncio.wait_for(started.wait(), 2)
    spec = (await lease(client))["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    second_task.cancel()
    await asyncio.gather(second_task, return_exceptions=True)


class BreakableTransport:
    """Wraps a client's transport: once broken, Lease updates fail (a 500) or hang."""

    def __init__(self, inner: Transport) -> None:
        self._inner = inner
        self.mode = ""

    @property
    def user(self) -> str:
        return self._inner.user

    async def send(self, request: Request) -> Any:
        if self.mode and request.rt is LEASES and request.verb == "update":
            if self.mode == "hang":
                await asyncio.Event().wait()
            raise internal("injected lease update failure")
        return await self._inner.send(request)

    async def close(self) -> None:
        await self._inner.close()


class Work:
    """Who is doing the leader's work, and who was when each started."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.working: set[str] = set()
        self.started: dict[str, tuple[float, set[str]]] = {}

    def of(self, name: str) -> Callable[[], Awaitable[None]]:
        async def lead() -> None:
            self.started[name] = (self.clock.monotonic(), set(self.working))
            self.working.add(name)
            try:
                await hold_forever()
            finally:
                self.working.discard(name)

        return lead


def gauge(metrics: CollectorRegistry) -> float | None:
    return metrics.get_sample_value("leader_election_master_status", {"name": "scheduler"})


async def test_two_candidates_contend_and_one_leads(cluster: Cluster) -> None:
    clock = FakeClock()
    work = Work(clock)
    registries = {name: CollectorRegistry() for name in ("a", "b")}
    candidates = {
        name: LeaderElector(
            cluster.client(), lease_name="scheduler", identity=name, clock=clock, metrics=registry
        )
        for name, registry in registries.items()
    }
    tasks = [asyncio.create_task(c.run(work.of(name))) for name, c in candidates.items()]
    await wait_for(lambda: len(work.working) == 1)
    for _ in range(10):  # 20 s of renewals and retries: longer than the lease
        await wait_for(lambda: clock.sleepers == 2)
        clock.step(2)
    await wait_for(lambda: clock.sleepers == 2)

    [leader] = work.working
    standby = "b" if leader == "a" else "a"
    assert (await lease(cluster.client()))["spec"]["holderIdentity"] == leader
    assert [candidates[leader].is_leader, candidates[standby].is_leader] == [True, False]
    assert (gauge(registries[leader]), gauge(registries[standby])) == (1.0, 0.0)
    assert standby not in work.started
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert gauge(registries[leader]) == 0.0


@pytest.mark.parametrize("failure", ["fail", "hang"])
async def test_leader_that_cannot_renew_stops_before_the_standby_takes_over(
    cluster: Cluster, failure: str
) -> None:
    clock = FakeClock()
    work = Work(clock)
    broken = BreakableTransport(cluster.client().transport)
    leader = elector(Client(broken), "a", clock)  # type: ignore[arg-type]
    leader_task = asyncio.create_task(leader.run(work.of("a")))
    await wait_for(lambda: "a" in work.working)
    standby_task = asyncio.create_task(elector(cluster.client(), "b", clock).run(work.of("b")))
    await wait_for(lambda: clock.sleepers == 2)
    broken.mode = failure
    broke_at = clock.monotonic()
    stopped_at: float | None = None
    for _ in range(40):
        await wait_for(lambda: clock.sleepers == (1 if leader_task.done() else 2))
        if stopped_at is None and "a" not in work.working:
            stopped_at = clock.monotonic()
        if "b" in work.working:
            break
        clock.step(1)
    await wait_for(lambda: "b" in work.working, what="the standby leading")

    with pytest.raises(LeaderElectionLost, match="could not renew lease kube-system/scheduler"):
        await leader_task
    assert stopped_at is not None
    # The leader stopped working within its renew deadline of its last renewal (at most one
    # retry period before the break); the standby waited out the lease duration from then on.
    assert stopped_at - broke_at <= 10
    standby_started, working_then = work.started["b"]
    assert working_then == set()
    assert standby_started - broke_at >= 15 - 2
    assert (await lease(cluster.client()))["spec"]["holderIdentity"] == "b"
    standby_task.cancel()
    await asyncio.gather(standby_task, return_exceptions=True)


async def test_clean_shutdown_releases_and_the_standby_takes_over_at_once(
    cluster: Cluster,
) -> None:
    clock = FakeClock()
    work = Work(clock)
    leader = asyncio.create_task(elector(cluster.client(), "a", clock).run(work.of("a")))
    await wait_for(lambda: "a" in work.working)
    standby = asyncio.create_task(elector(cluster.client(), "b", clock).run(work.of("b")))
    await wait_for(lambda: clock.sleepers == 2)
    leader.cancel()
    await asyncio.gather(leader, return_exceptions=True)
    released_at = clock.monotonic()
    await wait_for(lambda: clock.sleepers == 1)
    clock.step(2)  # the standby's next retry

    await wait_for(lambda: "b" in work.working, what="the standby leading")
    assert work.started["b"] == (released_at + 2, set())
    spec = (await lease(cluster.client()))["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    standby.cancel()
    await asyncio.gather(standby, return_exceptions=True)


async def test_callback_failure_propagates(cluster: Cluster) -> None:
    async def broken() -> None:
        raise RuntimeError("boom")

    candidate = elector(cluster.client(), "a", FakeClock())
    with pytest.raises(RuntimeError, match="boom"):
        await asyncio.wait_for(candidate.run(broken), 2)
    assert not (await lease(cluster.client()))["spec"].get("holderIdentity")


@pytest.mark.parametrize(
    ("lease_duration", "renew_deadline", "retry_period"),
    [
        pytest.param(10.0, 10.0, 2.0, id="lease-not-above-renew"),
        pytest.param(15.0, 2.0, 2.0, id="renew-not-above-retry"),
    ],
)
def test_rejects_inconsistent_durations(
    lease_duration: float, renew_deadline: float, retry_period: float
) -> None:
    with pytest.raises(ValueError, match="renewDeadline"):
        LeaderElector(
            LocalClient(None, None),  # type: ignore[arg-type]
            lease_name="x",
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
        )
