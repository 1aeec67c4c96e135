"""End to end through the whole control plane: a Deployment whose pod template has a claim
template. Every replica gets its own claim; scaling down, rolling out a new image and rolling
back leave exactly one allocated claim per live pod; a foreground delete removes the
Deployment, its ReplicaSets, their pods and the claims."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controllers.deployment_util import REVISION
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import wait_for

pytestmark = pytest.mark.slow

EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "examples"
    / "classic"
    / "deployment-with-template-claim.yaml"
)
TIMEOUT = 30.0
NAME = "gpu-app"


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


async def live(client: Client, rt: kinds.ResourceType) -> list[Obj]:
    items = (await client.list(rt, "default"))["items"]
    return [o for o in items if not meta.deletion_timestamp(o)]


async def settled(client: Client, *, pods: int, image: str) -> dict[str, str] | None:
    """{pod: claim} once exactly `pods` pods of `image` run, each with its own allocated claim
    reserved for it, and no other pod or claim exists."""
    all_pods = (await client.list(kinds.PODS, "default"))["items"]
    claims = (await client.list(kinds.RESOURCE_CLAIMS, "default"))["items"]
    if len(all_pods) != pods or len(claims) != pods:
        return None
    out: dict[str, str] = {}
    by_name = {meta.name(c): c for c in claims}
    for pod in all_pods:
        status = pod.get("status") or {}
        if status.get("phase") != "Running" or meta.deletion_timestamp(pod):
            return None
        if pod["spec"]["containers"][0]["image"] != image:
            return None
        (entry,) = status.get("resourceClaimStatuses") or [{}]
        claim = by_name.get(entry.get("resourceClaimName", ""))
        if claim is None or (meta.controller_ref(claim) or {}).get("uid") != meta.uid(pod):
            return None
        reserved = [r["uid"] for r in (claim.get("status") or {}).get("reservedFor") or []]
        if reserved != [meta.uid(pod)] or not (claim.get("status") or {}).get("allocation"):
            return None
        out[meta.name(pod)] = meta.name(claim)
    return out


async def test_deployment_with_claim_template_lifecycle(plane: ControlPlane) -> None:
    client = plane.client()
    template, deployment = yaml.safe_load_all(EXAMPLE.read_text())
    await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, template, "default")
    await client.create(kinds.DEPLOYMENTS, deployment, "default")
    image = "registry.k8s.io/pause:3.9"

    first = await wait_for(
        lambda: settled(client, pods=3, image=image), timeout=TIMEOUT, what="3 pods"
    )
    assert len(set(first.values())) == 3
    (rs,) = await live(client, kinds.REPLICA_SETS)
    assert all(name.startswith(meta.name(rs) + "-") for name in first)

    await client.patch(kinds.DEPLOYMENTS, NAME, {"spec": {"replicas": 1}}, "default")
    scaled = await wait_for(
        lambda: settled(client, pods=1, image=image), timeout=TIMEOUT, what="1 pod"
    )
    assert set(scaled.items()) < set(first.items())

    new_image = "registry.k8s.io/pause:3.10"
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": new_image}]}}}}
    await client.patch(kinds.DEPLOYMENTS, NAME, patch, "default", patch_type="strategic")
    rolled = await wait_for(
        lambda: settled(client, pods=1, image=new_image), timeout=TIMEOUT, what="new image"
    )
    assert not set(rolled.values()) & set(scaled.values())
    replica_sets = {meta.name(r): r for r in await live(client, kinds.REPLICA_SETS)}
    assert len(replica_sets) == 2
    assert replica_sets[meta.name(rs)]["spec"]["replicas"] == 0

    # What `kubectl rollout undo` sends: the previous ReplicaSet's template, hash label removed.
    previous = meta.deep_copy(replica_sets[meta.name(rs)]["spec"]["template"])
    del previous["metadata"]["labels"]["pod-template-hash"]
    undo = [{"op": "replace", "path": "/spec/template", "value": previous}]
    await client.patch(kinds.DEPLOYMENTS, NAME, undo, "default", patch_type="json")
    await wait_for(lambda: settled(client, pods=1, image=image), timeout=TIMEOUT, what="undo")

    async def back_to_first() -> bool:
        current = await client.get(kinds.REPLICA_SETS, meta.name(rs), "default")
        return meta.annotations(current).get(REVISION) == "3" and current["spec"]["replicas"] == 1

    await wait_for(back_to_first, timeout=TIMEOUT, what="first ReplicaSet at revision 3")
    d = await client.get(kinds.DEPLOYMENTS, NAME, "default")
    assert meta.annotations(d)[REVISION] == "3"

    await client.delete(kinds.DEPLOYMENTS, NAME, "default", propagation_policy="Foreground")

    async def all_gone() -> bool:
        try:
            await client.get(kinds.DEPLOYMENTS, NAME, "default")
            return False
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                raise
        for rt in (kinds.REPLICA_SETS, kinds.PODS, kinds.RESOURCE_CLAIMS):
            if (await client.list(rt, "default"))["items"]:
                return False
        return True

    await wait_for(all_gone, timeout=TIMEOUT, what="foreground deletion to finish")


@pytest.mark.parametrize("policy", ["Background", "Orphan"])
async def test_delete_cascade(plane: ControlPlane, policy: str) -> None:
    client = plane.client()
    template, deployment = yaml.safe_load_all(EXAMPLE.read_text())
    deployment["spec"]["replicas"] = 2
    await client.create(kinds.RESOURCE_CLAIM_TEMPLATES, template, "default")
    await client.create(kinds.DEPLOYMENTS, deployment, "default")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    before = await wait_for(
        lambda: settled(client, pods=2, image=image), timeout=TIMEOUT, what="2 pods"
    )
    await client.delete(kinds.DEPLOYMENTS, NAME, "default", propagation_policy=policy)

    async def finished() -> bool:
        deployments = (await client.list(kinds.DEPLOYMENTS, "default"))["items"]
        replica_sets = (await client.list(kinds.REPLICA_SETS, "default"))["items"]
        if deployments:
            return False
        if policy == "Background":
            pods = (await client.list(kinds.PODS, "default"))["items"]
            claims = (await client.list(kinds.RESOURCE_CLAIMS, "default"))["items"]
            return not (replica_sets or pods or claims)
        return len(replica_sets) == 1 and not meta.owner_references(replica_sets[0])

    await wait_for(finished, timeout=TIMEOUT, what=f"{policy} deletion")
    if policy == "Orphan":
        # The orphaned ReplicaSet keeps its pods and their claims.
        assert await settled(client, pods=2, image=image) == before
