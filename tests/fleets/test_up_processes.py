"""`draplane up --processes --fleet`: the nodes process gets the profile (`draplane nodes
--fleet`), the classes are the profile's, no driver controller process runs, and an upstream
demo spec applied with the real kubectl runs."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import kinds
from draplane.client.rest import RESTClient
from draplane.testing.apistate import wait_for
from draplane.testing.commands import Commands, free_port
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.slow

TIMEOUT = 90.0
SPEC = Path(__file__).parent / "specs" / "example-driver" / "cel-selector.yaml"
STARTED = re.compile(r"^\[up\] started (\S+) \(pid (\d+)\)$")


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


async def test_fleet_in_separate_processes(commands: Commands, tmp_path: Path) -> None:
    binary = kubectl_binary("1.32")
    if binary is None:
        pytest.skip("kubectl.1.32 is not installed")
    up = await commands.start(
        "up", "--processes", "--data-dir", str(tmp_path / "data"), "--port", str(free_port()),
        "--store", "memory", "--fleet", "example-driver", "--nodes", "1",
    )  # fmt: skip
    line = await up.wait_for_line("kubeconfig: ", timeout=TIMEOUT)
    kubeconfig = Path(line.removeprefix("kubeconfig: "))
    described = "1 nodes, fleet example-driver: DeviceClasses gpu.example.com"
    assert any(described in x for x in up.stdout_lines)
    started = {m[1] for m in (STARTED.match(x) for x in up.stdout_lines) if m}
    assert started == {"apiserver", "controller-manager", "scheduler", "nodes"}
    kubectl = Kubectl(binary, "1.32", kubeconfig, tmp_path / "kube-cache", timeout=TIMEOUT)
    await kubectl.run("apply", "-f", str(SPEC))
    client = RESTClient.from_kubeconfig(kubeconfig)
    try:

        async def running() -> bool:
            pods = (await client.list(kinds.PODS, "cel-selector"))["items"]
            return [p.get("status", {}).get("phase") for p in pods] == ["Running"]

        await wait_for(running, timeout=TIMEOUT, what="the cel-selector pod Running", interval=0.2)
        [claim] = (await client.list(kinds.RESOURCE_CLAIMS_V1, "cel-selector"))["items"]
        [result] = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"]) == ("gpu.example.com", "node-0")
    finally:
        await client.close()
