"""Leader election over a real in-process API: acquire, release, take-over after expiry,
step-down when renewal fails. Candidates' timing runs on FakeClocks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from draplane.api.kinds import LEASES
from draplane.api.meta import Obj, deep_copy
from draplane.client.leaderelection import LeaderElector
from draplane.client.local import LocalClient
from draplane.testing.apistate import wait_for
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster, start_cluster


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    c = await start_cluster()
    yield c
    await c.stop()


def elector(client: LocalClient, identity: str, clock: FakeClock, **kw: bool) -> LeaderElector:
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


async def test_steps_down_when_renewal_fails_past_deadline(cluster: Cluster) -> None:
    client = cluster.client()
    clock = FakeClock()
    candidate = elector(client, "a", clock)
    cancelled = asyncio.Event()

    async def lead() -> None:
        try:
            await hold_forever()
        finally:
            cancelled.set()

    task = asyncio.create_task(candidate.run(lead))
    await wait_for(lambda: candidate.is_leader)
    stolen = deep_copy(await lease(client))
    stolen["spec"]["holderIdentity"] = "intruder"
    await client.update(LEASES, stolen)
    for _ in range(5):
        await wait_for(lambda: clock.sleepers == 1)
        clock.step(2)
    await asyncio.wait_for(task, 2)
    assert cancelled.is_set()
    assert not candidate.is_leader
    assert (await lease(client))["spec"]["holderIdentity"] == "intruder"


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
