"""A `ControlPlane` whose nodes are kubelets with a kubelet directory: the example driver's
kubelet plugin registers with every node over gRPC and publishes its pool; the scheduler
allocates a template claim, the node prepares it through NodePrepareResources, and the
container's log (GET pods/NAME/log over HTTPS) shows the env of the CDI spec the plugin wrote."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import pytest
import yaml

from draplane.api import kinds, meta, versions
from draplane.api.deviceconfig import CDI_ENV_CONDITION
from draplane.api.meta import Obj
from draplane.client.kubeconfig import load_kubeconfig
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.drivers.example import DRIVER_NAME
from draplane.testing.apistate import wait_for
from draplane.testing.manifests import apply_manifests

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "examples" / "structured" / "pod-with-template-claim.yaml"
)


@pytest.fixture
def kubelet_dir() -> Iterator[Path]:
    # Unix socket paths are short (108 bytes): a short directory of its own.
    directory = Path(tempfile.mkdtemp(prefix="kd", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


async def _log(plane: ControlPlane, pod: str) -> str:
    config = load_kubeconfig(plane.kubeconfig_path)
    url = f"{config.server}/api/v1/namespaces/default/pods/{pod}/log"
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            url, ssl=config.ssl_context(), headers={"Authorization": f"Bearer {config.token}"}
        ) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.text()


async def test_example_kubelet_plugin_prepares_through_grpc(
    tmp_path: Path, kubelet_dir: Path
) -> None:
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=2,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            kubelet_dir=str(kubelet_dir),
        )
    )
    await plane.start()
    try:
        admin = plane.client()
        slices = (await admin.list(kinds.RESOURCE_SLICES))["items"]
        assert sorted(s["spec"]["nodeName"] for s in slices) == ["node-0", "node-1"]
        for node in ("node-0", "node-1"):
            assert (kubelet_dir / node / "plugins_registry" / f"{DRIVER_NAME}-reg.sock").exists()
            kubeconfig = yaml.safe_load((kubelet_dir / node / "kubeconfig").read_text())
            assert kubeconfig["users"][0]["name"] == f"system:node:{node}"
        await apply_manifests(admin, EXAMPLE)

        async def running() -> Obj | None:
            pod = await admin.get(kinds.PODS, "pod-with-a100", "default")
            return pod if (pod.get("status") or {}).get("phase") == "Running" else None

        pod = await wait_for(running, what="pod running", timeout=30)
        [claim] = (await admin.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        text = await _log(plane, "pod-with-a100")
        node = pod["spec"]["nodeName"]
        checkpoint = (kubelet_dir / node / "dra_manager_state").read_text()
        [spec_file] = (kubelet_dir / node / "cdi").iterdir()
        spec = yaml.safe_load(spec_file.read_text())
    finally:
        await plane.stop()

    [result] = claim["status"]["allocation"]["devices"]["results"]
    device = result["device"]
    assert meta.uid(claim) in checkpoint
    assert spec["kind"] == f"{DRIVER_NAME}/gpu"
    assert [d["name"] for d in spec["devices"]] == [f"claim-{meta.uid(claim)}-{device}"]
    assert f"GPU_DEVICE_0={device}" in spec["devices"][0]["containerEdits"]["env"]
    assert f"GPU_DEVICE_0={device}" in text.splitlines()
    [injected] = [c for c in pod["status"]["conditions"] if c["type"] == CDI_ENV_CONDITION]
    assert orjson.loads(injected["message"])["ctr"]["GPU_DEVICE_0"] == device
