"""The control plane survives the loss of an etcd member, an API server replica and component
leaders, as real processes on 127.0.0.1: a 3-member etcd cluster, two `draplane apiserver`
replicas on it sharing one data dir, one controller-manager, two schedulers and two example
drivers with `--leader-elect` (short leases), and two simulated nodes, every component given
both API server URLs (`draplane kubeconfig --server A,B`, the README's recipe).

While pods with template claims are created, one etcd member, the scheduler leader, the driver
leader and one API server replica are killed with SIGKILL; then etcd loses its quorum (503/504
Status errors, `/readyz` failing on etcd) and gets it back; the leaders that could not renew
their leases meanwhile exit as Kubernetes components do and are started again, as a supervisor
would. At the end every acknowledged pod is
Running with exactly one generated claim per pod claim, allocated and reserved for it, and no
device is allocated to two claims.
"""

from __future__ import annotations

import asyncio
import signal
import ssl
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import aiohttp
import orjson
import pytest

from draplane import dra
from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.apiserver.kubeconfig import dump_kubeconfig, kubeconfig_for_user
from draplane.client.kubeconfig import load_kubeconfig
from draplane.client.rest import RESTClient
from draplane.storage.etcd_process import EtcdCluster
from draplane.testing.apistate import wait_for
from draplane.testing.commands import Command, Commands, free_port

pytestmark = pytest.mark.slow

T = TypeVar("T")
TIMEOUT = 300.0
"""How long any one awaited condition (a line, a command, a leader, pods Running) may take: on
a loaded machine eleven processes start and recover slowly."""
POLL = 0.2
"""How often a condition is asked for through the API (each probe is a request)."""
LEASE = 3.0
FAST = (
    f"--leader-elect-lease-duration={LEASE:.0f}s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
)
USERS = {
    "controller-manager": "system:kube-controller-manager",
    "scheduler": "system:kube-scheduler",
    "driver": "system:serviceaccount:kube-system:driver.example.com-controller",
    "nodes": "system:node:node-0",
}
DRIVER = "driver.example.com"
TEMPLATE: Obj = {
    "apiVersion": "resource.k8s.io/v1alpha2",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "gpu"},
    "spec": {"spec": {"resourceClassName": "example"}},
}
RESOURCE_CLASS: Obj = {
    "apiVersion": "resource.k8s.io/v1alpha2",
    "kind": "ResourceClass",
    "metadata": {"name": "example"},
    "driverName": DRIVER,
}


def template_pod(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", "source": {"resourceClaimTemplateName": "gpu"}}],
        },
    }


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[EtcdCluster]:
    cluster = EtcdCluster(str(tmp_path / "etcd"), members=3, unsafe_no_fsync=True)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


async def metric(port: int, series: str) -> float | None:
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/metrics") as response,
        ):
            text = await response.text()
    except aiohttp.ClientError:
        return None
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


async def leader_of(ports: list[int], lease: str) -> int | None:
    """The metrics port of the instance that leads `lease`, once exactly one does."""
    series = f'leader_election_master_status{{name="{lease}"}}'
    statuses = [await metric(p, series) for p in ports]
    leaders = [p for p, s in zip(ports, statuses, strict=True) if s == 1.0]
    return leaders[0] if len(leaders) == 1 else None


async def create_pods(
    client: RESTClient, names: list[str], acked: list[str] | None = None
) -> list[str]:
    """Create the pods; the names of those the API acknowledged, also appended to `acked` as
    they are (a create may fail while a fault is injected, and is retried until it is
    acknowledged or known to have been applied)."""
    acked = acked if acked is not None else []
    start = len(acked)

    async def created(name: str) -> bool:
        try:
            await client.create(kinds.PODS, template_pod(name), "default")
        except errors.StatusError as err:
            if errors.is_already_exists(err):
                return True
            if err.code not in (500, 503, 504, 429):
                raise
        except (aiohttp.ClientError, OSError):
            pass
        else:
            return True
        await asyncio.sleep(0.25)  # the API server or etcd recovering: ask again shortly
        return False

    for name in names:
        await wait_for(lambda name=name: created(name), timeout=TIMEOUT, what=f"pod {name} created")
        acked.append(name)
    return acked[start:]


async def readyz(url: str, ca: bytes) -> tuple[int, str]:
    ctx = ssl.create_default_context(cadata=ca.decode())
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session,
        session.get(f"{url}/readyz?verbose") as response,
    ):
        return response.status, await response.text()


async def all_running(client: RESTClient, names: list[str]) -> list[Obj] | None:
    try:
        pods = {meta.name(p): p for p in (await client.list(kinds.PODS, "default"))["items"]}
    except (errors.StatusError, aiohttp.ClientError):
        return None
    found = [pods.get(n) for n in names]
    if all(p is not None and (p.get("status") or {}).get("phase") == "Running" for p in found):
        return [p for p in found if p is not None]
    return None


def devices(claim: Obj) -> list[str]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    out: list[str] = []
    for handle in allocation.get("resourceHandles") or []:
        data = orjson.loads(handle.get("data") or "{}")
        out += [f"{data['NodeName']}/{d}" for d in data.get("Devices") or []]
    return out


def assert_invariants(pods: list[Obj], claims: list[Obj]) -> None:
    by_owner: dict[str, list[Obj]] = {}
    for claim in claims:
        for ref in meta.owner_references(claim):
            by_owner.setdefault(ref["uid"], []).append(claim)
    extra = {
        meta.name(pod): [
            (meta.name(c), c["metadata"]["creationTimestamp"]) for c in by_owner[meta.uid(pod)]
        ]
        for pod in pods
        if len(by_owner.get(meta.uid(pod), [])) != 1
    }
    assert extra == {}  # exactly one generated claim per pod claim
    for pod in pods:
        [claim] = by_owner[meta.uid(pod)]
        assert claim["metadata"]["annotations"][dra.ANNOTATION_POD_CLAIM_NAME] == "gpu"
        assert dra.name(pod, pod["spec"]["resourceClaims"][0])[0] == meta.name(claim)
        reserved = [r["uid"] for r in claim["status"].get("reservedFor") or []]
        assert reserved == [meta.uid(pod)]
        assert devices(claim), meta.name(claim)
    used = Counter(d for claim in claims for d in devices(claim))
    assert [d for d, n in used.items() if n > 1] == []  # no device allocated twice


@pytest.mark.timeout(1200)  # eleven processes: on a loaded machine their start-up alone is slow
async def test_control_plane_survives_etcd_apiserver_and_leader_failures(
    etcd: EtcdCluster, commands: Commands, tmp_path: Path
) -> None:
    data_dir, ports = tmp_path / "data", [free_port(), free_port()]
    urls = [f"https://127.0.0.1:{p}" for p in ports]
    servers = ",".join(etcd.client_urls)
    replicas = [
        await commands.start(
            "apiserver",
            *("--store", "etcd", "--etcd-servers", servers),
            *("--data-dir", str(data_dir), "--port", str(port), "--kubernetes-version", "1.28"),
        )
        for port in ports
    ]
    for replica, url in zip(replicas, urls, strict=True):
        await replica.wait_for_line(f"draplane apiserver listening on {url}", timeout=TIMEOUT)
    both = ",".join(urls)
    # The recipe's command for one user; the same function in-process for the others.
    result = await commands.run(
        *("kubeconfig", "--data-dir", str(data_dir), "--user", USERS["scheduler"]),
        *("--server", both),
        timeout=TIMEOUT,
    )
    assert result.code == 0, result.stderr
    kc = {component: tmp_path / f"{component}.kubeconfig" for component in USERS}
    kc["scheduler"].write_text(result.stdout)
    for component, user in USERS.items():
        if component != "scheduler":
            config = kubeconfig_for_user(data_dir, user, server=both)
            kc[component].write_text(dump_kubeconfig(config))
    scheduler_ports, driver_ports = [free_port(), free_port()], [free_port(), free_port()]
    await commands.start("controller-manager", "--kubeconfig", str(kc["controller-manager"]))
    schedulers = [
        await commands.start(
            "scheduler", "--kubeconfig", str(kc["scheduler"]), "--metrics-port", str(p), *FAST
        )
        for p in scheduler_ports
    ]
    drivers = [
        await commands.start(
            *("driver", "example", "--kubeconfig", str(kc["driver"])),
            *("--metrics-port", str(p), *FAST),
        )
        for p in driver_ports
    ]
    await commands.start(
        "nodes", "--kubeconfig", str(kc["nodes"]), "--count", "2", "--data-dir", str(data_dir)
    )
    supervisor = Supervisor(commands)
    admin_config = load_kubeconfig(data_dir / "kubeconfig")
    client = RESTClient(admin_config.with_servers(both))  # fails over from A to B
    only_b = RESTClient(admin_config.with_servers(urls[1]))
    names = [f"pod-{i}" for i in range(12)]
    acked: list[str] = []

    async def until_running() -> list[Obj] | None:
        # A leader starved past its renew deadline on a loaded machine exits as a component
        # does (`leaderelection lost`): it is started again, as a supervisor would.
        return await supervised(supervisor, lambda: all_running(client, acked))

    try:
        ca = admin_config.ca_pem or b""
        for url in urls:
            await wait_for(
                lambda url=url: ready(url, ca), timeout=TIMEOUT, interval=POLL, what=f"{url} ready"
            )
        await client.create(kinds.RESOURCE_CLASSES, RESOURCE_CLASS)
        await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, TEMPLATE, "default")

        # An etcd member dies while pods are being created.
        first: list[str] = []
        creating = asyncio.create_task(create_pods(client, names[:4], first))
        await wait_for(lambda: first, timeout=TIMEOUT, interval=POLL, what="a pod created")
        await asyncio.to_thread(etcd.members[0].kill)
        acked += await creating
        await wait_for(until_running, timeout=TIMEOUT, interval=POLL, what="batch 1")

        # The scheduler leader and the driver leader die; the standbys take over.
        scheduler = await wait_for(
            lambda: leader_of(scheduler_ports, "kube-scheduler"), timeout=TIMEOUT, interval=POLL
        )
        driver = await wait_for(
            lambda: leader_of(driver_ports, f"{DRIVER}-controller"), timeout=TIMEOUT, interval=POLL
        )
        scheduler, driver = scheduler_ports.index(scheduler), driver_ports.index(driver)
        await supervisor.kill(supervisor.latest(schedulers[scheduler]))
        await supervisor.kill(supervisor.latest(drivers[driver]))
        acked += await create_pods(client, names[4:8])
        await wait_for(until_running, timeout=TIMEOUT, interval=POLL, what="batch 2")
        standby = scheduler_ports[1 - scheduler]
        assert await leader_of(scheduler_ports, "kube-scheduler") == standby
        standby = driver_ports[1 - driver]
        assert await leader_of(driver_ports, f"{DRIVER}-controller") == standby

        # API server replica A dies: B's clients continue, the two-URL client fails over.
        await supervisor.kill(replicas[0])
        acked += await create_pods(client, names[8:10])
        assert client.server == urls[1]
        acked += await create_pods(only_b, names[10:11])
        # Quiet before the quorum goes: a write cut off by it may still be applied later (a
        # 504 says so), and a controller that retries it on a stale cache would write twice.
        await wait_for(until_running, timeout=TIMEOUT, interval=POLL, what="batch 3")

        # etcd loses its quorum: 503/504 Status errors and /readyz failing, then it recovers.
        await asyncio.to_thread(etcd.members[1].stop)
        code, text = await readyz(urls[1], ca)
        assert (code, "[-]etcd failed" in text) == (500, True), text
        with pytest.raises(errors.StatusError) as lost:
            cm: Obj = {"metadata": {"generateName": "quorum-"}}
            for _ in range(3):
                await only_b.create(kinds.CONFIGMAPS, cm, "default")
        assert lost.value.code in (503, 504), lost.value
        await asyncio.to_thread(etcd.members[0].start)
        await asyncio.to_thread(etcd.members[1].start)
        await wait_for(
            lambda: ready(urls[1], ca), timeout=TIMEOUT, interval=POLL, what="/readyz after quorum"
        )
        await supervisor.restart_exited()
        acked += await create_pods(client, names[11:])

        assert sorted(acked) == sorted(names)
        pods = await wait_for(
            until_running,
            timeout=TIMEOUT,
            interval=POLL,
            what="every pod Running",
        )
        claims = (await client.list(kinds.RESOURCE_CLAIMS, "default"))["items"]
        assert_invariants(pods, claims)
        assert len(claims) == len(acked)
    finally:
        await client.close()
        await only_b.close()


class Supervisor:
    """Starts again the components that exited because they could not renew their lease while
    etcd had no quorum (exit 1, `leaderelection lost`, as Kubernetes components exit), as a
    supervisor would; any other exit fails the test. Killed processes stay down."""

    def __init__(self, commands: Commands) -> None:
        self.commands = commands
        self.handled: set[int] = set()
        self.restarted = 0

    def latest(self, command: Command) -> Command:
        """The process started last with `command`'s arguments (itself, or its restart)."""
        return [c for c in self.commands.running if c.args == command.args][-1]

    async def kill(self, command: Command) -> None:
        self.handled.add(id(command))
        code, _ = await command.stop(signal.SIGKILL)
        assert code == -signal.SIGKILL

    async def restart_exited(self) -> None:
        for command in list(self.commands.running):
            if command.proc.returncode is None or id(command) in self.handled:
                continue
            self.handled.add(id(command))
            assert command.args[0] != "apiserver", command.stderr
            assert command.proc.returncode == 1, command.stderr
            assert "leaderelection lost" in command.stderr, command.stderr
            await self.commands.start(*command.args)
            self.restarted += 1


async def supervised(supervisor: Supervisor, probe: Callable[[], Awaitable[T]]) -> T:
    await supervisor.restart_exited()
    return await probe()


async def ready(url: str, ca: bytes) -> bool:
    try:
        code, _ = await readyz(url, ca)
    except (aiohttp.ClientError, OSError):
        return False
    return code == 200
