"""The structured-parameters flow end to end in one 1.36 control plane (in process): nodes
publish their devices, the scheduler allocates, the kubelet plugin prepares; examples from
examples/structured applied as a user would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from draplane.api import errors, kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.testing.apistate import wait_for

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "structured"
DEVICES_PER_NODE = 2
NODES = 2


@pytest.fixture
async def plane(tmp_path: Path) -> AsyncIterator[ControlPlane]:
    started = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=NODES,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            drivers=[DriverSpec(devices_per_node=DEVICES_PER_NODE)],
        )
    )
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


def _kind(doc: Obj) -> kinds.ResourceType:
    rt = kinds.for_kind(str(doc["apiVersion"]), str(doc["kind"]))
    assert rt is not None, doc["kind"]
    return rt


async def apply(client: Client, name: str, **replace: Any) -> list[Obj]:
    out = []
    for doc in yaml.safe_load_all((EXAMPLES / name).read_text()):
        if doc["kind"] == "Deployment" and "replicas" in replace:
            doc["spec"]["replicas"] = replace["replicas"]
        rt = _kind(doc)
        # As kubectl applies: a namespaced object without a namespace goes to "default".
        namespace = (meta.namespace(doc) or "default") if rt.namespaced else ""
        out.append(await client.create(rt, doc, namespace))
    return out


async def pods(client: Client, namespace: str = "default", **labels: str) -> list[Obj]:
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    listed = await client.list(kinds.PODS, namespace, label_selector=selector)
    return list(listed.get("items") or [])


async def claim_of(client: Client, pod: Obj) -> Obj:
    [status] = pod["status"]["resourceClaimStatuses"]
    return await client.get(kinds.RESOURCE_CLAIMS_V1, status["resourceClaimName"], "default")


def devices(claim: Obj) -> list[tuple[str, str]]:
    results = claim["status"]["allocation"]["devices"]["results"]
    return [(r["pool"], r["device"]) for r in results]


async def running(client: Client, name: str) -> Obj | None:
    pod = await client.get(kinds.PODS, name, "default")
    return pod if (pod.get("status") or {}).get("phase") == "Running" else None


async def test_template_claim_deployment_and_unsatisfiable(plane: ControlPlane) -> None:
    admin = plane.client()
    # A pod whose template claim selects an A100 gets one and runs.
    await apply(admin, "pod-with-template-claim.yaml")
    pod = await wait_for(lambda: running(admin, "pod-with-a100"), timeout=20, what="pod runs")
    claim = await claim_of(admin, pod)
    [(pool, device)] = devices(claim)
    assert pool == pod["spec"]["nodeName"]
    # The kubelet plugin reported the prepared device as the driver's own identity.
    [status] = claim["status"]["devices"]
    assert (status["pool"], status["device"]) == (pool, device)
    assert [c["type"] for c in status["conditions"]] == ["Ready"]
    slices = (await admin.list(kinds.RESOURCE_SLICES, field_selector=f"spec.nodeName={pool}"))[
        "items"
    ]
    [published] = [d for s in slices for d in s["spec"]["devices"] if d["name"] == device]
    assert published["attributes"]["model"] == {"string": "A100"}

    # A Deployment's pods each get their own device until the pool is exhausted.
    free = NODES * DEVICES_PER_NODE - 1
    await apply(admin, "deployment-with-template-claim.yaml", replicas=free + 1)

    async def settled() -> tuple[list[Obj], list[Obj]] | None:
        listed = await pods(admin, app="gpu-workers")
        up = [p for p in listed if (p.get("status") or {}).get("phase") == "Running"]
        waiting = [
            p
            for p in listed
            if any(
                c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        ]
        return (up, waiting) if len(up) == free and len(waiting) == 1 else None

    up, [pending] = await wait_for(settled, timeout=30, what="deployment settles")
    taken = [d for p in up for d in devices(await claim_of(admin, p))]
    assert len(set(taken + devices(claim))) == NODES * DEVICES_PER_NODE
    [condition] = [c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert "cannot allocate all claims" in condition["message"]

    # Deleting the pods frees their devices: the pending pod runs on one of them.
    for worker in up:
        try:
            await admin.delete(kinds.PODS, meta.name(worker), "default")
        except errors.StatusError as err:
            assert errors.is_not_found(err)

    async def pending_runs() -> Obj | None:
        return await running(admin, meta.name(pending))

    await wait_for(pending_runs, timeout=30, what="the pending pod gets a freed device")

    # Admin access: every device of a node, also those the other pods hold.
    await apply(admin, "admin-access.yaml")

    async def monitor_runs() -> Obj | None:
        got = await admin.get(kinds.PODS, "gpu-monitor", "gpu-monitoring")
        return got if (got.get("status") or {}).get("phase") == "Running" else None

    monitor = await wait_for(monitor_runs, timeout=20, what="gpu-monitor runs")
    [status] = monitor["status"]["resourceClaimStatuses"]
    claim = await admin.get(kinds.RESOURCE_CLAIMS_V1, status["resourceClaimName"], "gpu-monitoring")
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == DEVICES_PER_NODE
    assert all(r["adminAccess"] and r["pool"] == monitor["spec"]["nodeName"] for r in results)


@pytest.fixture
async def partitionable_plane(tmp_path: Path) -> AsyncIterator[ControlPlane]:
    started = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=2,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            drivers=[DriverSpec(devices_per_node=4, partitions=2)],
        )
    )
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


@pytest.mark.parametrize(
    ("example", "pod", "namespace", "requests"),
    [
        pytest.param(
            "claim-with-count-and-constraint.yaml",
            "pod-with-two-gpus",
            "default",
            ["gpus", "gpus"],
            id="count-constraint",
        ),
        pytest.param(
            "first-available.yaml", "pod-h100-or-a100", "default", ["gpu/a100"], id="first"
        ),
        pytest.param(
            "partitionable.yaml", "pod-with-partitions", "default", ["parts", "parts"], id="parts"
        ),
        pytest.param(
            "pod-with-claim-requests.yaml",
            "pod-with-claim-requests",
            "default",
            ["trainer", "monitor"],
            id="claim-requests",
        ),
    ],
)
async def test_examples_run(
    partitionable_plane: ControlPlane, example: str, pod: str, namespace: str, requests: list[str]
) -> None:
    """Each example's pod runs with the devices its claim asks for (4 GPUs per node, each also
    offered as 2 partitions)."""
    admin = partitionable_plane.client()
    await apply(admin, example)

    async def started() -> Obj | None:
        got = await admin.get(kinds.PODS, pod, namespace)
        return got if (got.get("status") or {}).get("phase") == "Running" else None

    running_pod = await wait_for(started, timeout=20, what=f"{pod} runs")
    [status] = running_pod["status"].get("resourceClaimStatuses") or [
        {"resourceClaimName": "two-gpus"}
    ]
    claim = await admin.get(kinds.RESOURCE_CLAIMS_V1, status["resourceClaimName"], namespace)
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [r["request"] for r in results] == requests
    assert {r["pool"] for r in results} == {running_pod["spec"]["nodeName"]}
    if example == "partitionable.yaml":
        assert all("-part-" in r["device"] for r in results)


async def test_network_attached_pool_serves_every_node(tmp_path: Path) -> None:
    """`--network-attached N` in the 1.36 mode: the driver's controller side publishes one
    `allNodes` pool (nodes publish none), and a pod gets a device of it on whatever node."""
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=2,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            drivers=[DriverSpec(network_attached=3)],
        )
    )
    await plane.start()
    try:
        admin = plane.client()
        pools = {
            s["spec"]["pool"]["name"]: s["spec"]
            for s in (await admin.list(kinds.RESOURCE_SLICES))["items"]
        }
        assert pools["network-attached"]["allNodes"] is True
        assert len(pools["network-attached"]["devices"]) == 3
        assert [pools[n].get("devices") for n in ("node-0", "node-1")] == [[], []]
        await apply(admin, "pod-with-template-claim.yaml")
        pod = await wait_for(lambda: running(admin, "pod-with-a100"), timeout=20, what="runs")
        claim = await claim_of(admin, pod)
        assert devices(claim) == [("network-attached", "gpu-0")]
        assert "nodeSelector" not in claim["status"]["allocation"]
    finally:
        await plane.stop()
