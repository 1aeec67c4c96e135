"""Two standalone `draplane scheduler` processes against one API server over HTTPS: exactly one
holds Lease kube-system/kube-scheduler and schedules; when it is killed (no release), the other
takes over once the lease expires and schedules the next pod."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.rest import RESTClient
from draplane.testing.apistate import events_for, seed_objects, wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.commands import Commands, free_port

pytestmark = pytest.mark.slow

TIMEOUT = 30.0
# Short leases so the take-over after a kill comes within seconds.
FAST = (
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
)
SCHEDULED = 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}'
MASTER = 'leader_election_master_status{name="kube-scheduler"}'


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


async def metric(port: int, series: str) -> float | None:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as response,
    ):
        text = await response.text()
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


async def masters(ports: list[int]) -> list[float | None] | None:
    """Each scheduler's leader_election_master_status once both serve metrics and one leads."""
    try:
        statuses = [await metric(p, MASTER) for p in ports]
    except aiohttp.ClientError:
        return None
    return statuses if sorted(statuses, key=str) == [0.0, 1.0] else None


async def bound(client: RESTClient, name: str) -> Obj | None:
    pod = await client.get(kinds.PODS, name, "default")
    return pod if (pod.get("spec") or {}).get("nodeName") else None


async def test_one_of_two_schedulers_schedules_and_the_other_takes_over(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir, port = tmp_path / "data", free_port()
    apiserver = await commands.start("apiserver", "--data-dir", str(data_dir), "--port", str(port))
    await apiserver.wait_for_line(f"draplane apiserver listening on https://127.0.0.1:{port}")
    config = await commands.run(
        "kubeconfig", "--data-dir", str(data_dir), "--user", "system:kube-scheduler"
    )
    kubeconfig = tmp_path / "scheduler.kubeconfig"
    kubeconfig.write_text(config.stdout)
    ports = [free_port(), free_port()]
    schedulers = [
        await commands.start(
            "scheduler", "--kubeconfig", str(kubeconfig), "--metrics-port", str(p), *FAST
        )
        for p in ports
    ]
    admin = RESTClient.from_kubeconfig(data_dir / "kubeconfig")
    try:
        statuses = await wait_for(lambda: masters(ports), timeout=TIMEOUT, what="one leader")
        node = make_node("node-0").obj()
        created = await admin.create(kinds.NODES, node)
        await admin.update(kinds.NODES, {**created, "status": node["status"]}, subresource="status")
        await seed_objects(admin, make_pod("first").obj())
        first = await wait_for(lambda: bound(admin, "first"), timeout=TIMEOUT, what="first bound")
        lease = await admin.get(kinds.LEASES, "kube-scheduler", "kube-system")
        leader = statuses.index(1.0)
        standby = 1 - leader
        assert await metric(ports[leader], SCHEDULED) == 1.0
        assert await metric(ports[standby], SCHEDULED) is None
        holder = lease["spec"]["holderIdentity"]
        assert holder.split("_", 1)[0] and len(holder.split("_", 1)[1]) == 36  # host_uuid

        code, _ = await schedulers[leader].stop(signal.SIGKILL)
        assert code == -signal.SIGKILL
        await seed_objects(admin, make_pod("second").obj())
        second = await wait_for(
            lambda: bound(admin, "second"), timeout=TIMEOUT, what="second bound by the standby"
        )

        taken = await admin.get(kinds.LEASES, "kube-scheduler", "kube-system")
        assert taken["spec"]["holderIdentity"] not in ("", holder)
        assert taken["spec"]["leaseTransitions"] == lease["spec"]["leaseTransitions"] + 1
        assert await metric(ports[standby], MASTER) == 1.0
        assert await metric(ports[standby], SCHEDULED) == 1.0
        for pod in (first, second):
            assert pod["spec"]["nodeName"] == "node-0"
            [event] = await wait_for(
                lambda pod=pod: events_for(admin, pod, reason="Scheduled"), timeout=TIMEOUT
            )
            assert event["message"] == f"Successfully assigned default/{meta.name(pod)} to node-0"
    finally:
        await admin.close()
