"""End to end: the whole control plane as `draplane up` wires it, driven through kubectl.

One test per upstream DRA e2e scenario (test/e2e/dra): claim and class parameters, delayed and
immediate allocation, external and shared claims, several claims, using all resources, pods
rescheduled after deallocation, pod deletion releasing claims, nodes restarting. Each asserts pod
phase, claim allocation, `reservedFor`, and where the claim was prepared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import yaml

from draplane import dra
from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.dra.controller import Delays
from draplane.drivers.example import ExampleNodePlugin
from draplane.testing.apistate import events_for, wait_for
from draplane.testing.kubectl import Kubectl, kubectl_binary

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "classic"
TIMEOUT = 30.0
DRIVER = "driver.example.com"

PlaneFactory = Callable[..., Awaitable[ControlPlane]]


@pytest.fixture
async def start_plane(tmp_path: Path) -> AsyncIterator[PlaneFactory]:
    planes: list[ControlPlane] = []

    async def start(
        *, nodes: int = 2, devices_per_node: int = 8, recheck: float | None = None
    ) -> ControlPlane:
        config = ControlPlaneConfig(
            data_dir=str(tmp_path / f"plane-{len(planes)}"),
            port=0,
            nodes=nodes,
            store="memory",
            drivers=[DriverSpec(devices_per_node=devices_per_node)],
            driver_delays=Delays() if recheck is None else Delays(recheck=recheck),
            kubernetes_version=versions.CLASSIC,
        )
        plane = ControlPlane(config)
        planes.append(plane)
        await plane.start()
        return plane

    yield start
    for plane in planes:
        await plane.stop()


def kubectl_for(plane: ControlPlane, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary("1.29") or kubectl_binary("1.32") or kubectl_binary("1.27")
    if binary is None:
        pytest.skip("no versioned kubectl binary installed")
    return Kubectl(binary, "1.29", plane.kubeconfig_path, tmp_path / "kube-cache")


async def apply(kubectl: Kubectl, manifest: str) -> None:
    await kubectl.run("apply", "-f", "-", stdin=manifest)


async def running(client: Client, name: str, namespace: str = "default") -> Obj:
    async def probe() -> Obj | None:
        pod = await client.get(kinds.PODS, name, namespace)
        return pod if (pod.get("status") or {}).get("phase") == "Running" else None

    return await wait_for(probe, timeout=TIMEOUT, what=f"pod {name} Running")


async def event_written(client: Client, obj: Obj, reason: str) -> list[Obj]:
    """The Events with `reason` about `obj`, once there is one: components write Events in the
    background, so one may land just after the state change the test waited for."""

    async def probe() -> list[Obj] | None:
        return await events_for(client, obj, reason=reason) or None

    return await wait_for(probe, timeout=TIMEOUT, what=f"{reason} event")


async def pod_claims(client: Client, pod: Obj) -> list[Obj]:
    """The pod's claims, resolved through pod.status.resourceClaimStatuses (dra.name)."""
    claims = []
    for _, claim_name in dra.pod_claim_names(pod):
        assert claim_name is not None
        claims.append(await client.get(kinds.RESOURCE_CLAIMS, claim_name, meta.namespace(pod)))
    return claims


def prepared_on(plane: ControlPlane, node: str) -> set[str]:
    """UIDs of the claims the example driver's node plugin has prepared on `node`."""
    plugin = plane.node_plugins.plugin("driver.example.com", node)
    assert isinstance(plugin, ExampleNodePlugin)
    return set(plugin.prepared)


def assert_allocated_for(claim: Obj, pods: list[Obj], node: str) -> None:
    status = claim["status"]
    assert status["driverName"] == "driver.example.com"
    terms = status["allocation"]["availableOnNodes"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == [node]
    assert sorted(r["uid"] for r in status["reservedFor"]) == sorted(meta.uid(p) for p in pods)


def template_pod(
    name: str,
    template: str,
    *,
    claims: tuple[str, ...] = ("gpu",),
    node_selector: dict[str, str] | None = None,
) -> str:
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"claims": [{"name": c} for c in claims]},
                }
            ],
            "resourceClaims": [
                {"name": c, "source": {"resourceClaimTemplateName": template}} for c in claims
            ],
        },
    }
    if node_selector:
        pod["spec"]["nodeSelector"] = node_selector
    return yaml.safe_dump(pod)


def template(name: str, mode: str = "WaitForFirstConsumer") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "resource.k8s.io/v1alpha2",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name},
            "spec": {"spec": {"resourceClassName": "example", "allocationMode": mode}},
        }
    )


async def test_claim_and_class_parameters(start_plane: PlaneFactory, tmp_path: Path) -> None:
    plane = await start_plane()
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    await apply(kubectl, (EXAMPLES / "parameters.yaml").read_text())
    pod = await running(client, "pod-with-parameters")
    # As upstream's e2e test checks the container's environment in its log.
    log = (await kubectl.run("logs", "pod-with-parameters")).splitlines()
    assert {"user_size=large", "admin_mode=fast"} <= set(log)
    [claim] = await pod_claims(client, pod)
    assert claim["spec"]["resourceClassName"] == "example-with-parameters"
    handle = yaml.safe_load(claim["status"]["allocation"]["resourceHandles"][0]["data"])
    assert handle["EnvVars"] == {"user_size": "large", "admin_mode": "fast"}
    assert_allocated_for(claim, [pod], pod["spec"]["nodeName"])
    [event] = await event_written(client, pod, "ClaimsPrepared")
    assert meta.name(claim) in event["message"]
    device = handle["Devices"][0]
    assert f"draplane: claim {meta.name(claim)}: device {device} of driver {DRIVER}" in log


async def test_claim_and_class_parameters_from_custom_resources(
    start_plane: PlaneFactory, tmp_path: Path
) -> None:
    plane = await start_plane(nodes=1)
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    await apply(kubectl, (EXAMPLES / "driver-parameters-crds.yaml").read_text())
    await apply(kubectl, (EXAMPLES / "parameters-custom-resource.yaml").read_text())
    pod = await running(client, "pod-with-custom-parameters")
    [claim] = await pod_claims(client, pod)
    handle = yaml.safe_load(claim["status"]["allocation"]["resourceHandles"][0]["data"])
    assert handle["EnvVars"] == {"user_size": "large", "admin_mode": "fast"}
    assert_allocated_for(claim, [pod], pod["spec"]["nodeName"])


@pytest.mark.parametrize("mode", ["WaitForFirstConsumer", "Immediate"])
async def test_inline_claim_generated_name_lifecycle(
    start_plane: PlaneFactory, tmp_path: Path, mode: str
) -> None:
    plane = await start_plane()
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    await apply(kubectl, template("tmpl", mode) + "---\n" + template_pod("app", "tmpl"))
    pod = await running(client, "app")
    [claim] = await pod_claims(client, pod)
    name = meta.name(claim)
    assert name.startswith("app-gpu-") and len(name) == len("app-gpu-") + 5
    assert meta.annotations(claim)[dra.ANNOTATION_POD_CLAIM_NAME] == "gpu"
    assert meta.owner_references(claim) == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "app",
            "uid": meta.uid(pod),
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert pod["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": name}]
    assert claim["spec"]["allocationMode"] == mode
    node = pod["spec"]["nodeName"]
    assert_allocated_for(claim, [pod], node)
    assert meta.uid(claim) in prepared_on(plane, node)
    out = await kubectl.run("get", "resourceclaims")
    assert name in out and "allocated,reserved" in out

    await kubectl.run("delete", "pod", "app", "--wait=true", "--timeout=30s")

    async def claim_gone() -> bool:
        try:
            await client.get(kinds.RESOURCE_CLAIMS, name, "default")
        except errors.StatusError as err:
            return errors.is_not_found(err)
        return False

    await wait_for(claim_gone, timeout=TIMEOUT, what="generated claim deleted")
    assert meta.uid(claim) not in prepared_on(plane, node)


async def test_external_claim_shared_by_pods(start_plane: PlaneFactory, tmp_path: Path) -> None:
    plane = await start_plane()
    client = plane.client()
    await apply(kubectl_for(plane, tmp_path), (EXAMPLES / "shared-claim.yaml").read_text())
    pods = [await running(client, f"shared-claim-user-{i}") for i in (1, 2)]
    claim = await client.get(kinds.RESOURCE_CLAIMS, "shared-claim", "default")
    assert claim["status"]["allocation"]["shareable"] is True
    node = pods[0]["spec"]["nodeName"]
    assert pods[1]["spec"]["nodeName"] == node
    assert_allocated_for(claim, pods, node)
    assert meta.uid(claim) in prepared_on(plane, node)


async def test_external_claim_released_when_pod_deleted(
    start_plane: PlaneFactory, tmp_path: Path
) -> None:
    plane = await start_plane()
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    await apply(kubectl, (EXAMPLES / "pod-with-external-claim.yaml").read_text())
    pod = await running(client, "pod-with-external-claim")
    claim = await client.get(kinds.RESOURCE_CLAIMS, "external-claim", "default")
    node = pod["spec"]["nodeName"]
    assert_allocated_for(claim, [pod], node)
    await kubectl.run("delete", "pod", "pod-with-external-claim", "--timeout=30s")

    async def released() -> Obj | None:
        current = await client.get(kinds.RESOURCE_CLAIMS, "external-claim", "default")
        status = current.get("status") or {}
        done = not status.get("reservedFor") and not status.get("allocation")
        return current if done and not meta.finalizers(current) else None

    current = await wait_for(released, timeout=TIMEOUT, what="claim deallocated")
    assert not current["status"].get("deallocationRequested")
    assert meta.uid(claim) not in prepared_on(plane, node)


async def test_several_claims_on_one_node(start_plane: PlaneFactory, tmp_path: Path) -> None:
    plane = await start_plane()
    client = plane.client()
    await apply(
        kubectl_for(plane, tmp_path), (EXAMPLES / "pod-with-several-claims.yaml").read_text()
    )
    pod = await running(client, "pod-with-several-claims")
    claims = await pod_claims(client, pod)
    assert [meta.annotations(c)[dra.ANNOTATION_POD_CLAIM_NAME] for c in claims] == [
        "first",
        "second",
        "third",
    ]
    for claim in claims:
        assert_allocated_for(claim, [pod], pod["spec"]["nodeName"])
    assert {meta.uid(c) for c in claims} <= prepared_on(plane, pod["spec"]["nodeName"])


async def test_uses_all_resources(start_plane: PlaneFactory, tmp_path: Path) -> None:
    """One device per node: every pod lands on a different node, the next one waits.

    The waiting pod's driver answer (every node unsuitable) is only recomputed on the driver's
    periodic recheck once a device is freed, as upstream: a short recheck delay keeps the test
    from waiting out the default 30 s."""
    plane = await start_plane(nodes=3, devices_per_node=1, recheck=0.5)
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    docs = [template("one")] + [template_pod(f"app-{i}", "one") for i in range(3)]
    await apply(kubectl, "---\n".join(docs))
    pods = [await running(client, f"app-{i}") for i in range(3)]
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-0", "node-1", "node-2"]
    await apply(kubectl, template_pod("app-3", "one"))

    async def unschedulable() -> Obj | None:
        pod = await client.get(kinds.PODS, "app-3", "default")
        conds = {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or []}
        cond = conds.get("PodScheduled")
        return pod if cond and cond["status"] == "False" else None

    pod = await wait_for(unschedulable, timeout=TIMEOUT, what="app-3 unschedulable")
    assert not pod["spec"].get("nodeName")
    [cond] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert cond["reason"] == "Unschedulable"
    assert await event_written(client, pod, "FailedScheduling")
    await kubectl.run("delete", "pod", "app-0", "--timeout=30s")
    pod = await running(client, "app-3")
    assert pod["spec"]["nodeName"] == pods[0]["spec"]["nodeName"]


async def test_rescheduled_after_deallocation(start_plane: PlaneFactory, tmp_path: Path) -> None:
    """A claim left allocated on node-0 while its pod must run on node-1: the scheduler's
    PostFilter asks for deallocation, the driver deallocates, the pod is scheduled on node-1."""
    plane = await start_plane(nodes=2)
    client = plane.client()
    claim = await client.create(
        kinds.RESOURCE_CLAIMS,
        {
            "metadata": {"name": "stale", "finalizers": ["driver.example.com/deletion-protection"]},
            "spec": {"resourceClassName": "example"},
        },
        "default",
    )
    allocated = dict(
        claim,
        status={
            "driverName": "driver.example.com",
            "allocation": {
                "resourceHandles": [{"driverName": "driver.example.com", "data": "{}"}],
                "availableOnNodes": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": ["node-0"],
                                }
                            ]
                        }
                    ]
                },
            },
        },
    )
    await client.update(kinds.RESOURCE_CLAIMS, allocated, subresource="status")
    await client.create(
        kinds.PODS,
        {
            "metadata": {"name": "app"},
            "spec": {
                "nodeSelector": {"kubernetes.io/hostname": "node-1"},
                "containers": [
                    {"name": "app", "image": "pause", "resources": {"claims": [{"name": "gpu"}]}}
                ],
                "resourceClaims": [{"name": "gpu", "source": {"resourceClaimName": "stale"}}],
            },
        },
        "default",
    )
    pod = await running(client, "app")
    assert pod["spec"]["nodeName"] == "node-1"
    claim = await client.get(kinds.RESOURCE_CLAIMS, "stale", "default")
    assert_allocated_for(claim, [pod], "node-1")


async def test_nodes_restart(start_plane: PlaneFactory, tmp_path: Path) -> None:
    plane = await start_plane(nodes=2)
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    await apply(kubectl, template("tmpl") + "---\n" + template_pod("before", "tmpl"))
    before = await running(client, "before")
    [claim] = await pod_claims(client, before)
    await plane.restart_nodes()
    await apply(kubectl, template_pod("after", "tmpl"))
    after = await running(client, "after")
    again = await client.get(kinds.PODS, "before", "default")
    assert again["status"]["phase"] == "Running"
    assert (
        again["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        or again["status"]["startTime"] == before["status"]["startTime"]
    )
    assert meta.uid(claim) in prepared_on(plane, before["spec"]["nodeName"])
    [after_claim] = await pod_claims(client, after)
    assert meta.uid(after_claim) in prepared_on(plane, after["spec"]["nodeName"])
    assert len(await event_written(client, before, "ClaimsPrepared")) == 1


async def test_every_example_reaches_its_state(start_plane: PlaneFactory, tmp_path: Path) -> None:
    plane = await start_plane(nodes=4)
    client = plane.client()
    kubectl = kubectl_for(plane, tmp_path)
    for path in sorted(EXAMPLES.glob("*.yaml")):
        await apply(kubectl, path.read_text())
    expected_pods = [
        doc["metadata"]["name"]
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc["kind"] == "Pod"
    ]
    assert len(expected_pods) == 7
    for name in expected_pods:
        pod = await running(client, name)
        for claim in await pod_claims(client, pod):
            assert dra.is_reserved_for_pod(pod, claim)

    async def immediate_allocated() -> Obj | None:
        claim = await client.get(kinds.RESOURCE_CLAIMS, "immediate-claim", "default")
        return claim if dra.is_allocated(claim) else None

    claim = await wait_for(immediate_allocated, timeout=TIMEOUT, what="immediate claim")
    assert not claim["status"].get("reservedFor")
