"""End to end: StatefulSets and DaemonSets whose pods each get a generated ResourceClaim, on a
plane of three simulated nodes (spec/workloads.md 3, 4, 6, 7).

A StatefulSet pod deleted and recreated under the same name gets a new claim and its old claim
goes (the device is unprepared and deallocated); a DaemonSet runs one pod per node; deleting
either with each propagation policy finishes by itself, down to the claims and the
ControllerRevisions. One kubectl scenario per version applies the examples, waits for
`kubectl rollout status` and deletes with `--cascade=foreground`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from draplane import dra
from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.drivers.example import ExampleNodePlugin
from draplane.testing.apistate import wait_for
from draplane.testing.kubectl import VERSIONS, Kubectl, kubectl_binary

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "classic"
STATEFULSET = EXAMPLES / "statefulset-with-claims.yaml"
DAEMONSET = EXAMPLES / "daemonset-with-claims.yaml"
TIMEOUT = 30.0
NODES = ("node-0", "node-1", "node-2")


@pytest.fixture
def plane_config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        data_dir=str(tmp_path / "plane"),
        port=0,
        nodes=3,
        store="memory",
        kubernetes_version=versions.CLASSIC,
    )


async def apply_example(client: Client, path: Path) -> None:
    import yaml

    for doc in yaml.safe_load_all(path.read_text()):
        rt = kinds.for_kind(doc["apiVersion"], doc["kind"])
        assert rt is not None
        await client.create(rt, doc, "default")


async def items(client: Client, rt: kinds.ResourceType) -> list[Obj]:
    result: list[Obj] = (await client.list(rt, "default"))["items"]
    return result


async def running_with_claims(client: Client, app: str, count: int) -> list[Obj] | None:
    """The pods labelled app=`app`, once `count` of them are Running with their own claim
    reserved for them; else None."""
    pods = [p for p in await items(client, kinds.PODS) if meta.labels(p).get("app") == app]
    if len(pods) != count or any(
        (p.get("status") or {}).get("phase") != "Running" or meta.deletion_timestamp(p)
        for p in pods
    ):
        return None
    for pod in pods:
        [(_, claim_name)] = dra.pod_claim_names(pod)
        if claim_name is None:
            return None
        try:
            claim = await client.get(kinds.RESOURCE_CLAIMS, claim_name, "default")
        except errors.StatusError:
            return None
        if not dra.is_reserved_for_pod(pod, claim):
            return None
    return sorted(pods, key=meta.name)


def claim_of(pod: Obj) -> str:
    [(_, claim_name)] = dra.pod_claim_names(pod)
    assert claim_name is not None
    return claim_name


def prepared(plane: ControlPlane) -> set[str]:
    """UIDs of the claims prepared on any node."""
    out: set[str] = set()
    for node in NODES:
        plugin = plane.node_plugins.plugin("driver.example.com", node)
        assert isinstance(plugin, ExampleNodePlugin)
        out |= set(plugin.prepared)
    return out


async def claims_match_pods(client: Client, plane: ControlPlane, pods: list[Obj]) -> bool:
    """Exactly one claim per pod, owned by that pod's UID, and only those prepared."""
    claims = await items(client, kinds.RESOURCE_CLAIMS)
    owners = sorted(str((meta.controller_ref(c) or {}).get("uid")) for c in claims)
    return owners == sorted(meta.uid(p) for p in pods) and prepared(plane) == {
        meta.uid(c) for c in claims
    }


async def test_statefulset_pod_recreated_gets_new_claim(plane: ControlPlane) -> None:
    client = plane.client()
    await apply_example(client, STATEFULSET)

    async def three() -> list[Obj] | None:
        return await running_with_claims(client, "web", 3)

    pods = await wait_for(three, timeout=TIMEOUT, what="web-0..2 Running with claims")
    assert [meta.name(p) for p in pods] == ["web-0", "web-1", "web-2"]
    assert len({claim_of(p) for p in pods}) == 3
    assert all(claim_of(p).startswith(f"{meta.name(p)}-gpu-") for p in pods)
    old = pods[1]

    await client.delete(kinds.PODS, "web-1", "default")

    async def recreated() -> list[Obj] | None:
        found = await running_with_claims(client, "web", 3)
        if found is None or meta.uid(found[1]) == meta.uid(old):
            return None
        return found if await claims_match_pods(client, plane, found) else None

    pods = await wait_for(recreated, timeout=TIMEOUT, what="web-1 recreated with a new claim")
    assert claim_of(pods[1]) != claim_of(old)
    with pytest.raises(errors.StatusError) as gone:
        await client.get(kinds.RESOURCE_CLAIMS, claim_of(old), "default")
    assert errors.is_not_found(gone.value)

    async def status_ready() -> Obj | None:
        status = (await client.get(kinds.STATEFUL_SETS, "web", "default")).get("status") or {}
        return status if status.get("readyReplicas") == 3 else None

    status = await wait_for(status_ready, timeout=TIMEOUT, what="statefulset status ready")
    assert status["currentRevision"] == status["updateRevision"]


async def test_daemonset_one_pod_per_node_each_with_claim(plane: ControlPlane) -> None:
    client = plane.client()
    await apply_example(client, DAEMONSET)

    async def three() -> list[Obj] | None:
        return await running_with_claims(client, "node-agent", 3)

    pods = await wait_for(three, timeout=TIMEOUT, what="one agent per node with a claim")
    assert sorted(p["spec"]["nodeName"] for p in pods) == list(NODES)
    assert await claims_match_pods(client, plane, pods)

    async def status_available() -> Obj | None:
        status = (await client.get(kinds.DAEMON_SETS, "node-agent", "default")).get("status")
        return status if (status or {}).get("numberAvailable") == 3 else None

    status = await wait_for(status_available, timeout=TIMEOUT, what="daemonset available")
    assert status["desiredNumberScheduled"] == status["updatedNumberScheduled"] == 3


async def everything_gone(client: Client) -> bool:
    for rt in (kinds.PODS, kinds.RESOURCE_CLAIMS, kinds.CONTROLLER_REVISIONS):
        if await items(client, rt):
            return False
    return not await items(client, kinds.STATEFUL_SETS) and not await items(
        client, kinds.DAEMON_SETS
    )


@pytest.mark.parametrize("policy", ["Foreground", "Background", "Orphan"])
async def test_delete_cascades(plane: ControlPlane, policy: str) -> None:
    client = plane.client()
    await apply_example(client, STATEFULSET)
    await apply_example(client, DAEMONSET)

    async def up() -> bool:
        return bool(
            await running_with_claims(client, "web", 3)
            and await running_with_claims(client, "node-agent", 3)
        )

    await wait_for(up, timeout=TIMEOUT, what="both workloads running")
    await client.delete(kinds.STATEFUL_SETS, "web", "default", propagation_policy=policy)
    await client.delete(kinds.DAEMON_SETS, "node-agent", "default", propagation_policy=policy)

    async def owners_gone() -> bool:
        return not await items(client, kinds.STATEFUL_SETS) and not await items(
            client, kinds.DAEMON_SETS
        )

    await wait_for(owners_gone, timeout=TIMEOUT, what="sets gone")
    if policy == "Orphan":
        pods = await items(client, kinds.PODS)
        assert len(pods) == 6
        assert all(not meta.owner_references(p) for p in pods)
        revisions = await items(client, kinds.CONTROLLER_REVISIONS)
        assert len(revisions) == 2
        assert all(not meta.owner_references(r) for r in revisions)
        return
    await wait_for(lambda: everything_gone(client), timeout=TIMEOUT, what="everything gone")
    assert prepared(plane) == set()


@pytest.mark.kubectl
@pytest.mark.parametrize("version", VERSIONS)
async def test_kubectl_rollout_and_foreground_delete(
    plane: ControlPlane, tmp_path: Path, version: str
) -> None:
    binary = kubectl_binary(version)
    if binary is None:
        pytest.skip(f"kubectl.{version} is not installed")
    kubectl = Kubectl(binary, version, plane.kubeconfig_path, tmp_path / "kube-cache")
    client = plane.client()
    await kubectl.run("apply", "-f", str(STATEFULSET), "-f", str(DAEMONSET))
    out = await kubectl.run("rollout", "status", "statefulset/web", "--timeout=30s")
    assert out.splitlines()[-1] == "partitioned roll out complete: 3 new pods have been updated..."
    out = await kubectl.run("rollout", "status", "daemonset/node-agent", "--timeout=30s")
    assert out.splitlines()[-1] == 'daemon set "node-agent" successfully rolled out'
    pods = await running_with_claims(client, "web", 3)
    assert pods is not None
    agents = await running_with_claims(client, "node-agent", 3)
    assert agents is not None
    await kubectl.run("delete", "statefulset/web", "daemonset/node-agent", "--cascade=foreground")
    await wait_for(lambda: everything_gone(client), timeout=TIMEOUT, what="everything gone")


async def test_rolling_updates_replace_pods_and_their_claims(plane: ControlPlane) -> None:
    client = plane.client()
    await apply_example(client, STATEFULSET)
    await apply_example(client, DAEMONSET)

    async def up() -> list[Obj] | None:
        web = await running_with_claims(client, "web", 3)
        agents = await running_with_claims(client, "node-agent", 3)
        return web + agents if web and agents else None

    before = await wait_for(up, timeout=TIMEOUT, what="both workloads running")
    image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}
    await client.patch(kinds.STATEFUL_SETS, "web", image, "default", patch_type="strategic")
    image["spec"]["template"]["spec"]["containers"][0]["name"] = "agent"
    await client.patch(kinds.DAEMON_SETS, "node-agent", image, "default", patch_type="strategic")

    async def updated() -> list[Obj] | None:
        pods = await up()
        if pods is None or {meta.uid(p) for p in pods} & {meta.uid(p) for p in before}:
            return None
        if any(p["spec"]["containers"][0]["image"] != "app:2" for p in pods):
            return None
        sts = (await client.get(kinds.STATEFUL_SETS, "web", "default"))["status"]
        if sts.get("currentRevision") != sts.get("updateRevision"):
            return None
        return pods if await claims_match_pods(client, plane, pods) else None

    pods = await wait_for(updated, timeout=TIMEOUT, what="every pod replaced at the new template")
    assert sorted(p["spec"]["nodeName"] for p in pods if meta.name(p).startswith("node-agent")) == (
        list(NODES)
    )
    revisions = await items(client, kinds.CONTROLLER_REVISIONS)
    assert sorted(r["revision"] for r in revisions) == [1, 1, 2, 2]


async def test_statefulset_scaled_down_through_scale_subresource(plane: ControlPlane) -> None:
    client = plane.client()
    await apply_example(client, STATEFULSET)

    async def three() -> list[Obj] | None:
        return await running_with_claims(client, "web", 3)

    await wait_for(three, timeout=TIMEOUT, what="web-0..2 Running with claims")
    await client.patch(
        kinds.STATEFUL_SETS, "web", {"spec": {"replicas": 1}}, "default", subresource="scale"
    )

    async def one() -> list[Obj] | None:
        found = await running_with_claims(client, "web", 1)
        if found is None or len(await items(client, kinds.PODS)) != 1:
            return None
        return found if await claims_match_pods(client, plane, found) else None

    [pod] = await wait_for(one, timeout=TIMEOUT, what="scaled down to web-0")
    assert meta.name(pod) == "web-0"
    scale = await client.get(kinds.STATEFUL_SETS, "web", "default", subresource="scale")
    assert scale["spec"]["replicas"] == 1
