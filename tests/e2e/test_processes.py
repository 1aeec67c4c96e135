"""End to end as a user runs it: `draplane up` and the standalone components as separate
processes on 127.0.0.1, driven through the real kubectl and a RESTClient.

`up` is stopped with SIGINT and started again on the same data dir; `--transport http` runs the
components over HTTPS with their own tokens; `apiserver`, `kubeconfig`, `controller-manager`,
`scheduler`, `driver example` and `nodes` run as six kinds of processes meeting only through the
API. Every process is stopped in the fixture's teardown.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml

from draplane import dra
from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.client.kubeconfig import load_kubeconfig
from draplane.client.rest import RESTClient
from draplane.testing.apistate import wait_for
from draplane.testing.commands import Command, Commands, free_port
from draplane.testing.exposition import check_component_exposition
from draplane.testing.kubectl import Kubectl, kubectl_binary

# Six processes and kubectl on a loaded machine start slowly: generous overall deadlines.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "examples" / "classic" / "pod-with-template-claim.yaml"
)
POD = "pod-with-template-claim"
TIMEOUT = 300.0
"""How long any one awaited condition (a line, a command, a pod's phase) may take."""
POLL = 0.2
"""How often a condition is asked for through the API (each probe is a request)."""
STOPS_WITHIN = 5.0

COMPONENT_USERS = {
    "controller-manager": "system:kube-controller-manager",
    "scheduler": "system:kube-scheduler",
    "driver": "system:serviceaccount:kube-system:driver.example.com-controller",
    "nodes": "system:node:node-0",
}


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


def kubectl_for(kubeconfig: Path, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary("1.29") or kubectl_binary("1.32") or kubectl_binary("1.27")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    return Kubectl(binary, "1.29", kubeconfig, tmp_path / "kube-cache", timeout=TIMEOUT)


def renamed_example(pod_name: str) -> str:
    """The example manifest with its pod renamed (the template stays as it is)."""
    docs = list(yaml.safe_load_all(EXAMPLE.read_text()))
    for doc in docs:
        if doc["kind"] == "Pod":
            doc["metadata"]["name"] = pod_name
    return yaml.safe_dump_all(docs)


async def running(client: RESTClient, name: str) -> Obj:
    async def probe() -> Obj | None:
        pod = await client.get(kinds.PODS, name, "default")
        return pod if (pod.get("status") or {}).get("phase") == "Running" else None

    return await wait_for(probe, timeout=TIMEOUT, interval=POLL, what=f"pod {name} Running")


async def claims_by_name(client: RESTClient) -> dict[str, Obj]:
    listed = await client.list(kinds.RESOURCE_CLAIMS, "default")
    return {meta.name(c): c for c in listed.get("items") or []}


async def claim_of(client: RESTClient, pod: Obj) -> Obj:
    [(_, name)] = dra.pod_claim_names(pod)
    assert name is not None
    return await client.get(kinds.RESOURCE_CLAIMS, name, "default")


def assert_allocated_and_reserved(claim: Obj, pod: Obj) -> None:
    status = claim["status"]
    assert status["driverName"] == "driver.example.com"
    terms = status["allocation"]["availableOnNodes"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == [pod["spec"]["nodeName"]]
    assert [r["uid"] for r in status["reservedFor"]] == [meta.uid(pod)]
    owner = meta.controller_ref(claim)
    assert owner is not None
    assert owner["uid"] == meta.uid(pod)


CLASSIC = ("--kubernetes-version", "1.28")
"""These tests run the classic DRA flow; the components learn the mode from /version."""


async def readyz(kubeconfig: Path) -> tuple[int, str]:
    config = load_kubeconfig(kubeconfig)
    headers = {"Authorization": f"Bearer {config.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{config.server}/readyz?verbose", headers=headers, ssl=config.ssl_context()
        ) as response,
    ):
        return response.status, await response.text()


async def start_up(commands: Commands, *args: str) -> tuple[Command, Path]:
    """`draplane up ARGS`; returns the process and the kubeconfig path it printed."""
    up = await commands.start("up", *args)
    line = await up.wait_for_line("kubeconfig: ", timeout=TIMEOUT)
    kubeconfig = Path(line.removeprefix("kubeconfig: "))
    hint = await up.wait_for_line("try: ", timeout=TIMEOUT)
    assert hint == f"try: kubectl --kubeconfig {kubeconfig} get nodes"
    return up, kubeconfig


async def assert_stops_cleanly(command: Command) -> None:
    code, seconds = await command.stop()
    assert code == 0, command.stderr
    assert seconds < STOPS_WITHIN
    assert "Traceback" not in command.stderr
    assert "Unclosed client session" not in command.stderr


async def test_up_runs_a_template_pod_and_continues_after_a_restart(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir, port = tmp_path / "data", free_port()
    args = ("--data-dir", str(data_dir), "--port", str(port), "--nodes", "2", *CLASSIC)
    up, kubeconfig = await start_up(commands, *args)
    assert kubeconfig == data_dir / "kubeconfig"
    assert up.stdout_lines[0].startswith(f"draplane is up: API server https://127.0.0.1:{port}")
    status, body = await readyz(kubeconfig)
    assert status == 200
    assert "[+]components ok" in body.splitlines()
    assert body.endswith("readyz check passed\n")
    kubectl = kubectl_for(kubeconfig, tmp_path)
    await kubectl.run("apply", "-f", str(EXAMPLE))
    client = RESTClient.from_kubeconfig(kubeconfig)
    try:
        pod = await running(client, POD)
        claim = await claim_of(client, pod)
        assert_allocated_and_reserved(claim, pod)
    finally:
        await client.close()
    await assert_stops_cleanly(up)

    again, _ = await start_up(commands, *args)
    client = RESTClient.from_kubeconfig(kubeconfig)
    try:
        still = await running(client, POD)
        assert meta.uid(still) == meta.uid(pod)
        assert (await claim_of(client, still))["metadata"]["uid"] == meta.uid(claim)
        await kubectl.run("apply", "-f", "-", stdin=renamed_example("second-pod"))
        second = await running(client, "second-pod")
        claims = await claims_by_name(client)
        second_claim = await claim_of(client, second)
        assert sorted(claims) == sorted([meta.name(claim), meta.name(second_claim)])
        assert meta.uid(claims[meta.name(claim)]) == meta.uid(claim)
        assert_allocated_and_reserved(claims[meta.name(claim)], still)
        assert_allocated_and_reserved(second_claim, second)
    finally:
        await client.close()
    await assert_stops_cleanly(again)


async def test_up_with_http_transport_runs_a_template_pod(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    args = ("--data-dir", str(data_dir), "--port", str(free_port()), "--nodes", "2", *CLASSIC)
    up, kubeconfig = await start_up(commands, *args, "--transport", "http", "--store", "memory")
    await kubectl_for(kubeconfig, tmp_path).run("apply", "-f", str(EXAMPLE))
    client = RESTClient.from_kubeconfig(kubeconfig)
    try:
        pod = await running(client, POD)
        assert_allocated_and_reserved(await claim_of(client, pod), pod)
    finally:
        await client.close()
    # Over HTTPS every component, each node included, authenticates with its own token.
    users = {line.split(",")[1] for line in (data_dir / "tokens").read_text().splitlines()}
    assert {
        "system:node:node-0",
        "system:node:node-1",
        "system:serviceaccount:kube-system:driver.example.com-controller",
    } <= users
    await assert_stops_cleanly(up)


async def component_kubeconfigs(commands: Commands, data_dir: Path, out: Path) -> dict[str, Path]:
    """`draplane kubeconfig --user USER` for each component, written to files."""
    results = await asyncio.gather(
        *(
            commands.run("kubeconfig", "--data-dir", str(data_dir), "--user", user, timeout=TIMEOUT)
            for user in COMPONENT_USERS.values()
        )
    )
    paths: dict[str, Path] = {}
    for component, result in zip(COMPONENT_USERS, results, strict=True):
        assert result.code == 0, result.stderr
        paths[component] = out / f"{component}.kubeconfig"
        paths[component].write_text(result.stdout)
    return paths


RESOURCE_CLASS = """
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata:
  name: example
driverName: driver.example.com
"""


async def test_standalone_components_run_and_release_a_template_pod(
    commands: Commands, tmp_path: Path
) -> None:
    data_dir, port = tmp_path / "data", free_port()
    metrics_ports = {name: free_port() for name in COMPONENT_USERS}
    apiserver = await commands.start(
        "apiserver", "--data-dir", str(data_dir), "--port", str(port), *CLASSIC
    )
    await apiserver.wait_for_line(
        f"draplane apiserver listening on https://127.0.0.1:{port}", timeout=TIMEOUT
    )
    kc = await component_kubeconfigs(commands, data_dir, tmp_path)

    def flags(name: str) -> tuple[str, ...]:
        return ("--kubeconfig", str(kc[name]), "--metrics-port", str(metrics_ports[name]))

    components = [
        await commands.start("controller-manager", *flags("controller-manager")),
        await commands.start("scheduler", *flags("scheduler")),
        await commands.start("driver", "example", *flags("driver")),
        await commands.start("nodes", *flags("nodes"), "--count", "2", "--data-dir", str(data_dir)),
    ]
    kubectl = kubectl_for(data_dir / "kubeconfig", tmp_path)
    await kubectl.run("create", "-f", "-", stdin=RESOURCE_CLASS)
    await kubectl.run("apply", "-f", str(EXAMPLE))
    client = RESTClient.from_kubeconfig(data_dir / "kubeconfig")
    try:
        pod = await running(client, POD)
        claim = await claim_of(client, pod)
        assert_allocated_and_reserved(claim, pod)
        assert meta.name(claim).startswith(f"{POD}-gpu-")
        await assert_scheduler_metrics(metrics_ports["scheduler"])
        for metrics_port in metrics_ports.values():
            check_component_exposition(await metrics_text(metrics_port))
        await kubectl.run("delete", "pod", POD)

        async def claim_deleted() -> bool:
            try:
                await client.get(kinds.RESOURCE_CLAIMS, meta.name(claim), "default")
            except errors.StatusError as err:
                return errors.is_not_found(err)
            return False

        await wait_for(
            claim_deleted, timeout=TIMEOUT, interval=POLL, what="the pod's claim deleted"
        )
    finally:
        await client.close()
    users = {line.split(",")[1] for line in (data_dir / "tokens").read_text().splitlines()}
    assert {"system:node:node-0", "system:node:node-1"} <= users
    for command in [*components, apiserver]:
        await assert_stops_cleanly(command)


async def metrics_text(port: int) -> str:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as response,
    ):
        assert response.status == 200
        return await response.text()


async def assert_scheduler_metrics(port: int) -> None:
    text = await metrics_text(port)
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/healthz") as response,
    ):
        assert (response.status, await response.text()) == (200, "ok")
    scheduled = 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}'
    assert f"{scheduled} 1.0" in text.splitlines()
    assert 'scheduler_pending_pods{queue="active"} 0.0' in text.splitlines()
