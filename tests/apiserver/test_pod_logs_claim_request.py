"""`GET pods/NAME/log` (1.36) of containers that pick one request of a claim with
`resources.claims[].request`: the log lists only that request's devices (a subrequest's result
counts for its request), as kubelet hands the container only those CDI devices; a container
naming the claim without `request` sees every device."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from draplane.api import versions
from draplane.api.meta import Obj
from draplane.testing.apistate import seed_objects
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer, start_http_server
from draplane.testing.structured import (
    device_result,
    make_structured_claim,
    make_subrequest,
    node_selector_for,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
DRIVER = "driver.example.com"
STARTED = "2026-01-01T00:00:05Z"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def structured(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("logs"), mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


def _container(name: str, *claims: Obj) -> Obj:
    return {"name": name, "image": "busybox:1.36", "resources": {"claims": list(claims)}}


def _status(name: str) -> Obj:
    return {
        "name": name,
        "image": "busybox:1.36",
        "imageID": "busybox@sha256:0",
        "containerID": f"containerd://{name}",
        "ready": True,
        "restartCount": 0,
        "state": {"running": {"startedAt": STARTED}},
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def seeded(structured: HttpServer) -> None:
    containers = [
        _container("small", {"name": "gpu", "request": "small"}),
        _container("two", {"name": "gpu", "request": "big"}, {"name": "gpu", "request": "any"}),
        _container("all", {"name": "gpu"}),
    ]
    pod = (
        make_pod("web")
        .node("node-0")
        .claim_ref("gpu", "gpu-claim", mode=versions.STRUCTURED)
        .set("spec.containers", containers)
        .phase("Running")
        .set("status.containerStatuses", [_status(c["name"]) for c in containers])
        .obj()
    )
    allocation = {
        "devices": {
            "results": [
                device_result("big", "gpu-0"),
                device_result("small", "gpu-1"),
                device_result("any/fast", "gpu-2"),
            ]
        },
        "nodeSelector": node_selector_for("node-0"),
    }
    claim = (
        make_structured_claim("gpu-claim")
        .request("big", "gpu")
        .request("small", "gpu")
        .first_available("any", make_subrequest("fast", "gpu"))
        .allocation(allocation)
        .obj()
    )
    reserved = {"resource": "pods", "name": "web", "uid": pod["metadata"]["uid"]}
    claim["status"]["reservedFor"] = [reserved]
    await seed_objects(structured.client(), pod, claim)


@pytest.mark.parametrize(
    ("container", "devices"),
    [
        pytest.param("small", ["gpu-1"], id="one-request"),
        pytest.param("two", ["gpu-0", "gpu-2"], id="a-request-and-a-first-available-one"),
        pytest.param("all", ["gpu-0", "gpu-1", "gpu-2"], id="whole-claim"),
    ],
)
async def test_log_lists_the_devices_of_the_picked_requests(
    structured: HttpServer, seeded: None, container: str, devices: list[str]
) -> None:
    path = f"/api/v1/namespaces/default/pods/web/log?container={container}"
    async with structured.session() as http, http.get(path) as resp:
        assert resp.status == 200, await resp.text()
        text = await resp.text()
    listed = [line for line in text.splitlines() if ": device " in line]
    assert listed == [
        f"draplane: claim gpu-claim: device {device} of driver {DRIVER}" for device in devices
    ]
    env = [line for line in text.splitlines() if line.startswith("GPU_DEVICE_")]
    assert [line.split("=", 1)[1] for line in env] == devices
