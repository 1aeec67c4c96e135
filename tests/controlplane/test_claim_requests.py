"""examples/structured/pod-with-claim-requests.yaml on a control plane whose nodes have a
kubelet directory: the containers naming one request each of the pod's claim
(`resources.claims[].request`) get only that request's CDI device injected and logged, as
kubelet hands them out."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import pytest

from draplane.api import kinds, versions
from draplane.api.deviceconfig import CDI_ENV_CONDITION
from draplane.api.meta import Obj
from draplane.client.kubeconfig import load_kubeconfig
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.drivers.example import DRIVER_NAME
from draplane.testing.apistate import wait_for
from draplane.testing.manifests import apply_manifests

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "examples" / "structured" / "pod-with-claim-requests.yaml"
)
POD = "pod-with-claim-requests"


async def _log(plane: ControlPlane, container: str) -> str:
    config = load_kubeconfig(plane.kubeconfig_path)
    url = f"{config.server}/api/v1/namespaces/default/pods/{POD}/log?container={container}"
    headers = {"Authorization": f"Bearer {config.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, ssl=config.ssl_context(), headers=headers) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.text()


@pytest.fixture
def kubelet_dir() -> Iterator[Path]:
    # Unix socket paths are short (108 bytes): a short directory of its own.
    directory = Path(tempfile.mkdtemp(prefix="kr", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


async def test_each_container_gets_the_device_of_its_request(
    tmp_path: Path, kubelet_dir: Path
) -> None:
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=1,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            kubelet_dir=str(kubelet_dir),
        )
    )
    await plane.start()
    try:
        admin = plane.client()
        await apply_manifests(admin, EXAMPLE)

        async def running() -> Obj | None:
            pod = await admin.get(kinds.PODS, POD, "default")
            return pod if (pod.get("status") or {}).get("phase") == "Running" else None

        pod = await wait_for(running, what="pod running", timeout=30)
        [claim] = (await admin.list(kinds.RESOURCE_CLAIMS_V1, "default"))["items"]
        logs = {c: await _log(plane, c) for c in ("trainer", "monitor")}
    finally:
        await plane.stop()

    by_request = {
        r["request"]: r["device"] for r in claim["status"]["allocation"]["devices"]["results"]
    }
    [injected] = [c for c in pod["status"]["conditions"] if c["type"] == CDI_ENV_CONDITION]
    env = orjson.loads(injected["message"])
    for container in ("trainer", "monitor"):
        device = by_request[container]
        assert device in env[container].values()
        assert set(env[container].values()) & set(by_request.values()) == {device}
        listed = [line for line in logs[container].splitlines() if ": device " in line]
        assert listed == [
            f"draplane: claim {claim['metadata']['name']}: device {device} of driver {DRIVER_NAME}"
        ]
