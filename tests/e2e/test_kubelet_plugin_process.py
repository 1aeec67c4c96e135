"""End to end as a driver author runs it: `draplane apiserver`, `scheduler`,
`controller-manager` and `nodes --kubelet-dir` as separate processes, and the example driver's
kubelet plugin as one more process for the node (`draplane driver example kubelet-plugin`),
which finds the node's kubeconfig in the kubelet directory, publishes the node's ResourceSlices
as the node and prepares the example pod's claim over gRPC; `kubectl logs` shows the CDI env.
Stopping the plugin's process removes its sockets and the node deregisters it."""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import yaml

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.rest import RESTClient
from draplane.testing.apistate import wait_for
from draplane.testing.commands import Commands, free_port
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120.0
STRUCTURED = ROOT / "examples" / "structured"


@pytest.fixture
async def commands(tmp_path: Path) -> AsyncIterator[Commands]:
    started = Commands(tmp_path / "logs")
    try:
        yield started
    finally:
        await started.close()


@pytest.fixture
def kubelet_dir() -> Iterator[Path]:
    # Unix socket paths are short (108 bytes): the kubelet directory sits directly in /tmp.
    directory = Path(tempfile.mkdtemp(prefix="ke", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


async def test_example_kubelet_plugin_process_serves_a_node(
    commands: Commands, tmp_path: Path, kubelet_dir: Path
) -> None:
    binary = kubectl_binary("1.32") or kubectl_binary("1.29")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    data_dir, port = tmp_path / "data", free_port()
    apiserver = await commands.start(
        "apiserver", "--data-dir", str(data_dir), "--port", str(port), "--store", "memory"
    )
    await apiserver.wait_for_line("draplane apiserver listening on", timeout=TIMEOUT)
    admin = str(data_dir / "kubeconfig")
    await commands.start("scheduler", "--kubeconfig", admin)
    await commands.start("controller-manager", "--kubeconfig", admin)
    await commands.start(
        "nodes", "--kubeconfig", admin, "--count", "1", "--data-dir", str(data_dir),
        "--kubelet-dir", str(kubelet_dir),
    )  # fmt: skip
    node_kubeconfig = kubelet_dir / "node-0" / "kubeconfig"
    await wait_for(node_kubeconfig.exists, what="the node's kubeconfig", timeout=TIMEOUT)
    users = yaml.safe_load(node_kubeconfig.read_text())["users"]
    assert [u["name"] for u in users] == ["system:node:node-0"]
    plugin = await commands.start(
        "driver", "example", "kubelet-plugin", "--node-name", "node-0",
        "--kubelet-dir", str(kubelet_dir), "--devices-per-node", "2",
    )  # fmt: skip
    client = RESTClient.from_kubeconfig(data_dir / "kubeconfig")
    kubectl = Kubectl(binary, "1.32", data_dir / "kubeconfig", tmp_path / "kube-cache")
    try:

        async def published() -> list[Obj] | None:
            return (await client.list(kinds.RESOURCE_SLICES))["items"] or None

        [slice_] = await wait_for(published, what="the node's slice", timeout=TIMEOUT)
        node = await client.get(kinds.NODES, "node-0")
        assert [o["uid"] for o in slice_["metadata"]["ownerReferences"]] == [meta.uid(node)]
        assert [d["name"] for d in slice_["spec"]["devices"]] == ["gpu-0", "gpu-1"]
        await kubectl.run("apply", "-f", str(STRUCTURED / "deviceclass.yaml"))
        await kubectl.run("apply", "-f", str(STRUCTURED / "pod-with-template-claim.yaml"))

        async def running() -> Obj | None:
            pod = await client.get(kinds.PODS, "pod-with-a100", "default")
            return pod if (pod.get("status") or {}).get("phase") == "Running" else None

        await wait_for(running, what="the example pod Running", timeout=TIMEOUT)
        [claim] = (await client.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        [result] = claim["status"]["allocation"]["devices"]["results"]
        logs = await kubectl.run("logs", "pod-with-a100")
        assert f"GPU_DEVICE_0={result['device']}" in logs.splitlines()
        [spec] = (kubelet_dir / "node-0" / "cdi").iterdir()
        assert meta.uid(claim) in spec.name

        code, _ = await plugin.stop(signal.SIGTERM)
        assert code == 0
        registry = kubelet_dir / "node-0" / "plugins_registry"
        assert list(registry.iterdir()) == []
    finally:
        await client.close()
