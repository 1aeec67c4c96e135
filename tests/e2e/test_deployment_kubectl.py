"""The Deployment lifecycle through each installed kubectl (1.27, 1.29, 1.32) against the whole
control plane: apply a Deployment with a claim template, `rollout status`, `scale`, `set image`,
`rollout history`, `rollout undo`, `rollout restart` and `delete --cascade=foreground`, with
one allocated claim per live pod at every step and nothing left at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draplane.api import kinds, meta, versions
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import wait_for
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

from .test_deployment import EXAMPLE, NAME, TIMEOUT, settled

pytestmark = [pytest.mark.slow, pytest.mark.kubectl]

OLD_IMAGE = "registry.k8s.io/pause:3.9"
NEW_IMAGE = "registry.k8s.io/pause:3.10"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=2,
        store="memory",
        drivers=[DriverSpec(devices_per_node=4)],
        kubernetes_version=versions.CLASSIC,
    )


@pytest.fixture(params=VERSIONS)
def kubectl(request: pytest.FixtureRequest, plane: ControlPlane, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary(request.param)
    if binary is None:
        pytest.skip(f"kubectl.{request.param} is not installed")
    return Kubectl(binary, request.param, plane.kubeconfig_path, tmp_path / "kube-cache")


async def undo_by_patch(kubectl: Kubectl, client: Client) -> None:
    """kubectl 1.31+ decodes the ReplicaSet template into its own core/v1 types, where pod
    claims have no `source` any more (docs/fidelity.md): its undo sends claims without a source
    and the 1.28 API refuses them. The same JSON patch, sent as is, restores revision 1."""
    refused = await kubectl.run("rollout", "undo", f"deployment/{NAME}", check=False)
    assert "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`" in refused
    (first,) = [
        rs
        for rs in (await client.list(kinds.REPLICA_SETS, "default"))["items"]
        if meta.annotations(rs).get("deployment.kubernetes.io/revision") == "1"
    ]
    template = meta.deep_copy(first["spec"]["template"])
    del template["metadata"]["labels"]["pod-template-hash"]
    patch = json.dumps([{"op": "replace", "path": "/spec/template", "value": template}])
    await kubectl.run("patch", f"deployment/{NAME}", "--type=json", f"--patch={patch}")


def revisions(history: str) -> list[str]:
    """The REVISION column of `kubectl rollout history`."""
    lines = history.strip().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("REVISION"))
    return [line.split()[0] for line in lines[start + 1 :] if line.strip()]


async def test_deployment_lifecycle_through_kubectl(kubectl: Kubectl, plane: ControlPlane) -> None:
    client = plane.client()
    deployment = f"deployment/{NAME}"

    async def rolled_out() -> str:
        return await kubectl.run("rollout", "status", deployment, "--timeout=30s")

    async def pods(count: int, image: str) -> dict[str, str]:
        return await wait_for(
            lambda: settled(client, pods=count, image=image),
            timeout=TIMEOUT,
            what=f"{count} pods of {image}",
        )

    applied = await kubectl.run("apply", "-f", str(EXAMPLE))
    assert f"deployment.apps/{NAME} created" in applied
    assert f'deployment "{NAME}" successfully rolled out' in await rolled_out()
    first = await pods(3, OLD_IMAGE)
    assert len(set(first.values())) == 3

    scaled = await kubectl.run("scale", deployment, "--replicas=1")
    assert scaled.strip() == f"deployment.apps/{NAME} scaled"
    one = await pods(1, OLD_IMAGE)
    assert set(one.items()) < set(first.items())

    await kubectl.run("set", "image", deployment, f"app={NEW_IMAGE}")
    assert "successfully rolled out" in await rolled_out()
    updated = await pods(1, NEW_IMAGE)
    assert not set(updated.values()) & set(one.values())
    assert revisions(await kubectl.run("rollout", "history", deployment)) == ["1", "2"]

    if kubectl.version < "1.31":
        undone = await kubectl.run("rollout", "undo", deployment)
        assert undone.strip() == f"deployment.apps/{NAME} rolled back"
    else:
        await undo_by_patch(kubectl, client)
    assert "successfully rolled out" in await rolled_out()
    await pods(1, OLD_IMAGE)
    assert revisions(await kubectl.run("rollout", "history", deployment)) == ["2", "3"]

    restarted = await kubectl.run("rollout", "restart", deployment)
    assert restarted.strip() == f"deployment.apps/{NAME} restarted"
    assert "successfully rolled out" in await rolled_out()
    (pod_name,) = await pods(1, OLD_IMAGE)
    pod = await client.get(kinds.PODS, pod_name, "default")
    assert RESTARTED_AT in meta.annotations(pod)

    await kubectl.run("delete", deployment, "--cascade=foreground", "--timeout=30s")

    async def gone() -> bool:
        for rt in (kinds.DEPLOYMENTS, kinds.REPLICA_SETS, kinds.PODS, kinds.RESOURCE_CLAIMS):
            if (await client.list(rt, "default"))["items"]:
                return False
        return True

    await wait_for(gone, timeout=TIMEOUT, what="foreground deletion to finish")
