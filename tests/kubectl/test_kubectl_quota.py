"""The real kubectl (1.33) against ResourceQuotas in both Kubernetes versions: `kubectl get
quota` prints the server's NAME, AGE, REQUEST and LIMIT columns (`name: used/hard`),
`kubectl describe quota` its Used and Hard table, `kubectl create` of a pod past the quota fails
with upstream's Forbidden message, and `kubectl get limits` lists a LimitRange."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import kinds, meta, versions
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer, start_http_server
from draplane.testing.kubectl import Kubectl, kubectl_binary
from draplane.testing.quotabuilders import make_limit_range, make_resource_quota

pytestmark = pytest.mark.kubectl

KUBECTL = kubectl_binary("1.33")
if KUBECTL is None:
    pytest.skip("kubectl.1.33 is not installed", allow_module_level=True)


@pytest.fixture(params=[versions.STRUCTURED, versions.CLASSIC], ids=str)
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path / "data", mode=request.param)
    yield srv
    await srv.stop()


@pytest.fixture
def kubectl(server: HttpServer, tmp_path: Path) -> Kubectl:
    assert KUBECTL is not None
    return Kubectl(KUBECTL, "1.33", server.kubeconfig_path, tmp_path / "kube-cache")


async def _quota_in_use(server: HttpServer) -> None:
    """A quota whose status the controller would have written, then one pod charged to it."""
    client = server.client()
    hard = {"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi"}
    quota = make_resource_quota("compute", "default")
    for name, value in hard.items():
        quota.hard(name, value)
    created = await client.create(kinds.RESOURCE_QUOTAS, quota.obj(), "default")
    created["status"] = {"hard": hard, "used": {name: "0" for name in hard}}
    await client.update(kinds.RESOURCE_QUOTAS, created, subresource="status")
    pod = make_pod("a", "default").obj()
    pod["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "500m"},
        "limits": {"cpu": "500m", "memory": "256Mi"},
    }
    await client.create(kinds.PODS, pod, "default")


async def test_get_and_describe_quota(kubectl: Kubectl, server: HttpServer) -> None:
    await _quota_in_use(server)

    listed = await kubectl.run("get", "quota")
    described = await kubectl.run("describe", "quota", "compute")

    header, row = listed.splitlines()
    assert header.split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    cells = [c.strip() for c in row.split("   ") if c.strip()]
    assert cells[0] == "compute"
    assert cells[2:] == ["pods: 1/2, requests.cpu: 500m/1", "limits.memory: 256Mi/1Gi"]
    lines = [line.split() for line in described.splitlines() if line.strip()]
    assert lines[:2] == [["Name:", "compute"], ["Namespace:", "default"]]
    assert lines[2:] == [
        ["Resource", "Used", "Hard"],
        ["--------", "----", "----"],
        ["limits.memory", "256Mi", "1Gi"],
        ["pods", "1", "2"],
        ["requests.cpu", "500m", "1"],
    ]


async def test_create_past_the_quota_is_forbidden(
    kubectl: Kubectl, server: HttpServer, tmp_path: Path
) -> None:
    await _quota_in_use(server)
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n"
        "  - name: ctr\n    image: registry.k8s.io/pause:3.9\n"
        "    resources: {requests: {cpu: 600m}, limits: {cpu: 600m, memory: 1Mi}}\n"
    )

    out = await kubectl.run("create", "-f", str(manifest), check=False)

    assert out.strip() == (
        f'Error from server (Forbidden): error when creating "{manifest}": pods "big" is '
        "forbidden: exceeded quota: compute, requested: requests.cpu=600m, "
        "used: requests.cpu=500m, limited: requests.cpu=1"
    )
    used = (await server.client().get(kinds.RESOURCE_QUOTAS, "compute", "default"))["status"]
    assert used["used"] == {"pods": "1", "requests.cpu": "500m", "limits.memory": "256Mi"}


async def test_get_limit_ranges(kubectl: Kubectl, server: HttpServer) -> None:
    limits = make_limit_range("defaults", "default").limit(
        "Container", max={"cpu": "2"}, min={"cpu": "100m"}
    )
    created = await server.client().create(kinds.LIMIT_RANGES, limits.obj(), "default")

    listed = await kubectl.run("get", "limits")

    header, row = listed.splitlines()
    assert header.split() == ["NAME", "CREATED", "AT"]
    assert row.split() == ["defaults", meta.metadata(created)["creationTimestamp"]]
