"""Extended resources backed by DRA in one 1.36 control plane (in process): a pod requesting
`example.com/gpu: 2` of examples/structured/extended-resource.yaml gets a claim with two
devices created by the scheduler, recorded in its status, prepared by the node; deleting the
pod deletes the claim and frees its devices."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from draplane.api import kinds, meta, versions
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec
from draplane.dra import extended
from draplane.testing.apistate import wait_for
from draplane.testing.manifests import apply_manifests

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "structured" / "extended-resource.yaml"
POD = "pod-with-extended-gpus"


async def running(client: Client, name: str) -> Obj | None:
    pod = await client.get(kinds.PODS, name, "default")
    return pod if (pod.get("status") or {}).get("phase") == "Running" else None


@pytest.fixture
async def plane(tmp_path: Path) -> AsyncIterator[ControlPlane]:
    started = ControlPlane(
        ControlPlaneConfig(
            data_dir=str(tmp_path / "plane"),
            port=0,
            nodes=1,
            store="memory",
            kubernetes_version=versions.STRUCTURED,
            drivers=[DriverSpec(devices_per_node=3)],
        )
    )
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


async def test_pod_with_extended_resources_gets_a_claim_and_frees_it(
    plane: ControlPlane,
) -> None:
    admin = plane.client()
    await apply_manifests(admin, EXAMPLE)

    pod = await wait_for(lambda: running(admin, POD), timeout=20, what="pod runs")

    status = pod["status"]["extendedResourceClaimStatus"]
    name = status["resourceClaimName"]
    assert name.startswith(f"{POD}-extended-resources-")
    assert status["requestMappings"] == [
        {
            "containerName": "ctr",
            "resourceName": "example.com/gpu",
            "requestName": "container-0-request-0",
        }
    ]
    claim = await admin.get(kinds.RESOURCE_CLAIMS_V1, name, "default")
    assert claim["metadata"]["annotations"] == {extended.EXTENDED_CLAIM_ANNOTATION: "true"}
    [owner] = claim["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Pod",
        POD,
        meta.uid(pod),
        True,
    )
    assert claim["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-0",
            "exactly": {
                "deviceClassName": "example-gpu.example.com",
                "allocationMode": "ExactCount",
                "count": 2,
            },
        }
    ]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["pool"]) for r in results] == [("container-0-request-0", "node-0")] * 2
    assert len({r["device"] for r in results}) == 2
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": POD, "uid": meta.uid(pod)}
    ]

    # The node prepared the claim's devices for the pod.
    async def prepared() -> Obj | None:
        events = await admin.list(
            kinds.EVENTS, "default", field_selector=f"involvedObject.name={POD}"
        )
        found = [e for e in events["items"] if e.get("reason") == "ClaimsPrepared"]
        return found[0] if found else None

    event = await wait_for(prepared, timeout=20, what="ClaimsPrepared event")
    assert name in event["message"]
    assert all(r["device"] in event["message"] for r in results)

    # A second pod asking for two more does not fit the one device left.
    second: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "second", "namespace": "default"},
        "spec": {"containers": pod["spec"]["containers"]},
    }
    await admin.create(kinds.PODS, second, "default")

    async def unschedulable() -> Obj | None:
        got = await admin.get(kinds.PODS, "second", "default")
        conditions = (got.get("status") or {}).get("conditions") or []
        return got if any(c.get("reason") == "Unschedulable" for c in conditions) else None

    await wait_for(unschedulable, timeout=20, what="second pod unschedulable")

    # Deleting the first pod deletes its claim and frees the devices for the second.
    await admin.delete(kinds.PODS, POD, "default", grace_period_seconds=0)

    async def claim_gone() -> bool | None:
        listed = await admin.list(kinds.RESOURCE_CLAIMS_V1, "default")
        return None if any(meta.name(c) == name for c in listed["items"]) else True

    await wait_for(claim_gone, timeout=30, what="the extended resource claim is deleted")
    second_running = await wait_for(
        lambda: running(admin, "second"), timeout=30, what="second pod runs"
    )
    assert second_running["status"]["extendedResourceClaimStatus"]["resourceClaimName"] != name
