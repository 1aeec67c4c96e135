"""The official `kubernetes` Python client of Kubernetes 1.36 (`ResourceV1Api`, installed apart
from the 1.28-era client in `<venv>/kubernetes-v1` by `make test`) against the 1.36 mode:
create, list and delete of DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice.
It runs in its own interpreter, since one process imports one `kubernetes` package."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import kinds, versions
from draplane.testing.httpserver import HttpServer, start_http_server

CLIENT_DIR = Path(
    os.environ.get("DRAPLANE_KUBERNETES_V1_CLIENT", Path(sys.prefix) / "kubernetes-v1")
)

SCRIPT = r"""
import json, sys
from kubernetes import client, config

api = config.new_client_from_config(config_file=sys.argv[1])
v1 = client.ResourceV1Api(api)
out = {"version": client.VersionApi(api).get_code().git_version}
spec = {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}
md = lambda name: {"name": name}

created = v1.create_device_class({"metadata": md("gpu"), "spec": {}})
out["classes"] = [c.metadata.name for c in v1.list_device_class().items]
claim = v1.create_namespaced_resource_claim("default", {"metadata": md("c"), "spec": spec})
out["claim"] = claim.spec.devices.requests[0].exactly.to_dict()
out["claims"] = [c.metadata.name for c in v1.list_namespaced_resource_claim("default").items]
v1.create_namespaced_resource_claim_template(
    "default", {"metadata": md("t"), "spec": {"spec": spec}}
)
out["templates"] = [
    t.metadata.name for t in v1.list_resource_claim_template_for_all_namespaces().items
]
v1.create_resource_slice({
    "metadata": md("s"),
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "node-0", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-0",
        "devices": [{"name": "d0", "attributes": {"model": {"string": "a"}}}],
    },
})
slices = v1.list_resource_slice(field_selector="spec.nodeName=node-0").items
out["slices"] = [(s.metadata.name, s.spec.devices[0].attributes["model"].string) for s in slices]
v1.delete_device_class("gpu")
v1.delete_namespaced_resource_claim("c", "default")
v1.delete_namespaced_resource_claim_template("t", "default")
v1.delete_resource_slice("s")
out["left"] = [
    len(v1.list_device_class().items),
    len(v1.list_resource_claim_for_all_namespaces().items),
    len(v1.list_resource_claim_template_for_all_namespaces().items),
    len(v1.list_resource_slice().items),
]
print(json.dumps(out))
"""


@pytest.fixture
async def structured(tmp_path: Path) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path / "data", mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


async def test_resource_v1_api_creates_lists_and_deletes_each_kind(structured: HttpServer) -> None:
    if not (CLIENT_DIR / "kubernetes").is_dir():
        pytest.skip(f"the Kubernetes 1.36 Python client is not installed in {CLIENT_DIR}")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        str(structured.kubeconfig_path),
        env={**os.environ, "PYTHONPATH": str(CLIENT_DIR)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await proc.communicate()
    assert proc.returncode == 0, stderr.decode()[-3000:]

    out = json.loads(stdout)

    assert out["version"].startswith("v1.36.")
    assert out["classes"] == ["gpu"]
    assert out["claim"]["allocation_mode"] == "ExactCount" and out["claim"]["count"] == 1
    assert (out["claims"], out["templates"]) == (["c"], ["t"])
    assert out["slices"] == [["s", "a"]]
    assert out["left"] == [0, 0, 0, 0]
    assert (await structured.client().list(kinds.RESOURCE_SLICES))["items"] == []
