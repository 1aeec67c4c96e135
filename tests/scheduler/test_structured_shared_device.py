"""A device that allowed multiple allocations (DRAConsumableCapacity) and no longer does while a
share of it is allocated (kubernetes#140798), through the in-process control plane (API server,
claim controller, scheduler): the driver's ResourceSlice update makes it dedicated, a new pod
that needs it stays Pending with upstream's message until the pod holding the share is gone,
then it is allocated whole (no shareID)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from draplane.api import versions
from draplane.api.kinds import (
    DEVICE_CLASSES,
    NODES,
    PODS,
    RESOURCE_CLAIM_TEMPLATES_V1,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
)
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.structured import (
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    make_structured_claim_template,
)

DRIVER = "driver.example.com"
UNSCHEDULABLE = "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable."


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    config = ControlPlaneConfig(
        port=0, nodes=0, drivers=[], store="memory", kubernetes_version=versions.STRUCTURED
    )
    plane = ControlPlane(config, clock=FakeClock())
    await plane.start()
    yield plane
    await plane.stop()


def _api(obj: Obj) -> Obj:
    obj["metadata"].pop("uid", None)  # the API server assigns its own
    return obj


async def _results(client: Client, pod: str) -> list[Obj]:
    """The allocation results of the pod's generated claim."""
    statuses = (await client.get(PODS, pod, "default"))["status"]["resourceClaimStatuses"]
    claim = await client.get(RESOURCE_CLAIMS_V1, statuses[0]["resourceClaimName"], "default")
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results: list[Obj] = allocation.get("devices", {}).get("results") or []
    return results


def _message(pod: Obj) -> str:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or "")
    return ""


async def test_a_device_made_dedicated_waits_for_its_shares(plane: ControlPlane) -> None:
    client = plane.client()
    clock = plane.clock
    assert isinstance(clock, FakeClock)
    await client.create(DEVICE_CLASSES, _api(make_device_class("gpu", DRIVER).obj()))
    await client.create(NODES, _api(make_node("node-0").obj()))
    shared = make_device("gpu-0").allow_multiple_allocations()
    slice_ = make_resource_slice("node-0", DRIVER, "node-0").node("node-0").device(shared)
    await client.create(RESOURCE_SLICES, _api(slice_.obj()))
    template = make_structured_claim_template(
        "gpu", claim=make_structured_claim().request("gpu", "gpu")
    )
    await client.create(RESOURCE_CLAIM_TEMPLATES_V1, _api(template.obj()), "default")

    def pod(name: str) -> Obj:
        return _api(make_pod(name).claim_template("gpu", "gpu", mode=versions.STRUCTURED).obj())

    async def bound(name: str) -> bool:
        clock.step(1.0)
        return bool((await client.get(PODS, name, "default"))["spec"].get("nodeName"))

    await client.create(PODS, pod("sharer"), "default")
    await wait_for(lambda: bound("sharer"), timeout=20, what="sharer bound")
    (share,) = await _results(client, "sharer")
    stored = await client.get(RESOURCE_SLICES, "node-0")
    stored["spec"]["devices"][0].pop("allowMultipleAllocations")
    await client.update(RESOURCE_SLICES, stored)

    await client.create(PODS, pod("owner"), "default")

    async def pending() -> str:
        clock.step(1.0)
        return _message(await client.get(PODS, "owner", "default"))

    message = await wait_for(pending, timeout=20, what="owner unschedulable")
    await client.delete(PODS, "sharer", "default", grace_period_seconds=0)
    await wait_for(lambda: bound("owner"), timeout=20, what="owner bound")
    (whole,) = await _results(client, "owner")

    assert share["device"] == "gpu-0" and share.get("shareID")
    assert message == UNSCHEDULABLE
    assert whole["device"] == "gpu-0" and "shareID" not in whole
