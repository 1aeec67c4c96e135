"""Device binding conditions end to end in the 1.36 mode, through the in-process control plane
(API server, claim controller, scheduler on a fake clock): the scheduler allocates a device
whose binding conditions are not met and waits in PreBind; the driver, writing the claim's
`status.devices` through the API, reports a failure condition (or nothing until bindingTimeout
passes), PreBind gives up and its Unreserve drops the reservation, the claim is deallocated (by
the claim controller once no pod holds it, or else by the scheduler's next attempt: the unit
tests of the plugin cover that path alone), a new allocation follows, and the pod is bound once
the driver reports the binding condition True."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from draplane.api import versions
from draplane.api.kinds import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj, deep_copy
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.structured import (
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

DRIVER = "driver.example.com"
BINDING_TIMEOUT = 600.0
"""The scheduler's default bindingTimeout."""


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    config = ControlPlaneConfig(
        port=0, nodes=0, drivers=[], store="memory", kubernetes_version=versions.STRUCTURED
    )
    plane = ControlPlane(config, clock=FakeClock())
    await plane.start()
    yield plane
    await plane.stop()


def _strip(obj: Obj) -> Obj:
    """Builders set uids; the API server assigns its own."""
    obj["metadata"].pop("uid", None)
    return obj


async def _cluster(client: Client) -> None:
    await client.create(DEVICE_CLASSES, _strip(make_device_class("gpu", DRIVER).obj()))
    await client.create(NODES, _strip(make_node("node-a").obj()))
    devices = [
        {"name": name, "bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}
        for name in ("dev-0", "dev-1")
    ]
    slice_ = make_resource_slice("node-a-slice", DRIVER, "node-a").node("node-a").device(*devices)
    await client.create(RESOURCE_SLICES, _strip(slice_.obj()))
    claim = make_structured_claim("claim").request("gpu", "gpu").obj()
    await client.create(RESOURCE_CLAIMS_V1, _strip(claim), "default")
    pod = make_pod("pod").claim_ref("gpu", "claim", structured=True).obj()
    await client.create(PODS, _strip(pod), "default")


async def _waiting_allocation(plane: ControlPlane, *, after: str | None = None) -> Obj:
    """The claim once allocated and reserved for the pod (with an allocationTimestamp other
    than `after`), stepping the fake clock past backoffs and PreBind's polls."""
    client, clock = plane.client(), plane.clock
    assert isinstance(clock, FakeClock)

    async def allocated() -> Obj | None:
        claim = await client.get(RESOURCE_CLAIMS_V1, "claim", "default")
        status = claim.get("status") or {}
        stamp = (status.get("allocation") or {}).get("allocationTimestamp")
        if stamp and stamp != after and status.get("reservedFor"):
            return claim
        clock.step(1.0)
        return None

    claim: Obj = await wait_for(allocated, timeout=20, what="claim allocated, PreBind waiting")
    return claim


async def _report(client: Client, claim: Obj, condition: str) -> None:
    """The driver reports `condition` True on the claim's allocated device."""
    [result] = claim["status"]["allocation"]["devices"]["results"]
    changed = deep_copy(claim)
    changed["status"]["devices"] = [
        {
            "driver": result["driver"],
            "pool": result["pool"],
            "device": result["device"],
            "conditions": [
                {
                    "type": condition,
                    "status": "True",
                    "reason": "Driver",
                    "message": "reported by the driver",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    ]
    await client.update(RESOURCE_CLAIMS_V1, changed, subresource="status")


@pytest.mark.parametrize(
    ("failure", "wait_s"),
    [
        pytest.param("Failed", 0.0, id="failure-condition"),
        pytest.param(None, BINDING_TIMEOUT, id="binding-timeout"),
    ],
)
async def test_failed_binding_is_deallocated_and_the_next_allocation_binds(
    plane: ControlPlane, failure: str | None, wait_s: float
) -> None:
    client = plane.client()
    clock = plane.clock
    assert isinstance(clock, FakeClock)
    await _cluster(client)
    first = await _waiting_allocation(plane)
    assert not (await client.get(PODS, "pod", "default"))["spec"].get("nodeName")

    if failure is not None:
        await _report(client, first, failure)
    clock.step(wait_s)
    second = await _waiting_allocation(
        plane, after=first["status"]["allocation"]["allocationTimestamp"]
    )
    assert "devices" not in second["status"]  # cleared with the failed allocation
    await _report(client, second, "Attached")

    async def bound() -> Obj | None:
        pod = await client.get(PODS, "pod", "default")
        if pod["spec"].get("nodeName"):
            return pod
        clock.step(1.0)
        return None

    pod = await wait_for(bound, timeout=20, what="pod bound")
    assert pod["spec"]["nodeName"] == "node-a"
    final = await client.get(RESOURCE_CLAIMS_V1, "claim", "default")
    assert [r["uid"] for r in final["status"]["reservedFor"]] == [pod["metadata"]["uid"]]
