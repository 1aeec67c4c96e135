"""kubectl 1.32 against the 1.36 mode: `apply` of resource.k8s.io/v1 objects (create, then a
change as a patch; an unknown field refused), `get` tables with upstream's columns, `-o yaml`
with the defaults, a v1beta1 object read back at v1, and `explain` from /openapi/v3."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from draplane.api import kinds, versions
from draplane.testing.httpserver import HttpServer, start_http_server
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.kubectl

MANIFEST = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: one-gpu
  namespace: default
  labels: {team: LABEL}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: node-0-gpu
spec:
  driver: gpu.example.com
  nodeName: node-0
  pool: {name: node-0, generation: 0, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes:
        model: {string: a100}
"""


@pytest.fixture
async def structured(tmp_path: Path) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path / "data", mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


async def test_apply_get_and_yaml(structured: HttpServer, tmp_path: Path) -> None:
    binary = kubectl_binary("1.32")
    if binary is None:
        pytest.skip("kubectl.1.32 is not installed")
    kubectl = Kubectl(binary, "1.32", structured.kubeconfig_path, tmp_path / "kube-cache")

    first = await kubectl.run("apply", "-f", "-", stdin=MANIFEST.replace("LABEL", "a"))
    again = await kubectl.run("apply", "-f", "-", stdin=MANIFEST.replace("LABEL", "b"))
    classes = await kubectl.run("get", "deviceclasses")
    claims = await kubectl.run("get", "resourceclaims")
    slices = await kubectl.run("get", "resourceslices")
    claim = yaml.safe_load(await kubectl.run("get", "resourceclaim", "one-gpu", "-o", "yaml"))
    the_slice = yaml.safe_load(
        await kubectl.run("get", "resourceslice", "node-0-gpu", "-o", "yaml")
    )
    explained = await kubectl.run("explain", "resourceslice.spec.devices")
    unknown = await kubectl.run(
        "apply",
        "-f",
        "-",
        stdin=MANIFEST.replace("deviceClassName: gpu", "deviceClass: gpu"),
        check=False,
    )

    assert first.split("\n")[:3] == [
        "deviceclass.resource.k8s.io/gpu created",
        "resourceclaim.resource.k8s.io/one-gpu created",
        "resourceslice.resource.k8s.io/node-0-gpu created",
    ]
    assert "resourceclaim.resource.k8s.io/one-gpu configured" in again
    assert [line.split()[:1] for line in classes.splitlines()] == [["NAME"], ["gpu"]]
    assert [line.split()[:2] for line in claims.splitlines()] == [
        ["NAME", "STATE"],
        ["one-gpu", "pending"],
    ]
    assert [line.split()[:4] for line in slices.splitlines()] == [
        ["NAME", "NODE", "DRIVER", "POOL"],
        ["node-0-gpu", "node-0", "gpu.example.com", "node-0"],
    ]
    assert claim["apiVersion"] == "resource.k8s.io/v1"
    assert claim["metadata"]["labels"] == {"team": "b"}
    assert claim["spec"]["devices"]["requests"] == [
        {
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        }
    ]
    assert the_slice["spec"]["devices"] == [
        {"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}
    ]
    assert "GROUP:      resource.k8s.io" in explained and "VERSION:    v1" in explained
    assert "attributes\t<map[string]DeviceAttribute>" in explained
    assert 'unknown field "spec.devices.requests[0].exactly.deviceClass"' in unknown
    stored = await structured.client().get(kinds.RESOURCE_CLAIMS_V1, "one-gpu", "default")
    assert stored["metadata"]["labels"] == {"team": "b"}
