"""Structured parameters end to end in the 1.36 mode: the in-process control plane (API server,
claim controller, scheduler; no drivers or kubelets) with Nodes, a DeviceClass and ResourceSlices
created through the API. Pods with template claims each get their own device until the pool is
exhausted, then stay Pending with upstream's message; pods racing for one device never share it;
deleting pods lets the claim controller deallocate their claims and the Pending pods schedule.

Device binding conditions: the scheduler allocates a device whose binding conditions are not
met and waits in PreBind; the driver, writing the claim's `status.devices` through the API,
reports a failure condition (or nothing until bindingTimeout passes), PreBind gives up and its
Unreserve drops the reservation, the claim is deallocated (by the claim controller once no pod
holds it, or else by the scheduler's next attempt: the plugin's unit tests cover that path
alone), a new allocation follows, and the pod is bound once the driver reports the binding
condition True.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

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
from draplane.api.meta import Obj, deep_copy
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.structured import (
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    make_structured_claim_template,
)

DRIVER = "driver.example.com"


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    config = ControlPlaneConfig(
        port=0, nodes=0, drivers=[], store="memory", kubernetes_version=versions.STRUCTURED
    )
    plane = ControlPlane(config, clock=FakeClock())
    await plane.start()
    yield plane
    await plane.stop()


async def _cluster(client: Client, devices: dict[str, int]) -> None:
    await client.create(DEVICE_CLASSES, _strip(make_device_class("gpu", DRIVER).obj()))
    for node, count in devices.items():
        await client.create(NODES, _strip(make_node(node).obj()))
        devs = [f"dev-{i}" for i in range(count)]
        slice_ = make_resource_slice(f"{node}-slice", DRIVER, node).node(node).device(*devs).obj()
        await client.create(RESOURCE_SLICES, _strip(slice_))
    claim = make_structured_claim().request("gpu", "gpu")
    template = make_structured_claim_template("gpu", claim=claim).obj()
    await client.create(RESOURCE_CLAIM_TEMPLATES_V1, _strip(template), "default")


def _strip(obj: Obj) -> Obj:
    """Builders set uids; the API server assigns its own."""
    obj["metadata"].pop("uid", None)
    return obj


def _pod(name: str) -> Obj:
    return _strip(make_pod(name).claim_template("gpu", "gpu", mode=versions.STRUCTURED).obj())


async def _pods(client: Client) -> dict[str, Obj]:
    listed = await client.list(PODS, "default")
    return {p["metadata"]["name"]: p for p in listed["items"]}


async def _devices(client: Client) -> dict[str, tuple[str, str]]:
    """Claim name -> (node pool, device) of every allocated claim."""
    listed = await client.list(RESOURCE_CLAIMS_V1, "default")
    out: dict[str, tuple[str, str]] = {}
    for claim in listed["items"]:
        allocation = (claim.get("status") or {}).get("allocation")
        if allocation:
            (result,) = allocation["devices"]["results"]
            out[claim["metadata"]["name"]] = (result["pool"], result["device"])
    return out


def _unschedulable_message(pod: Obj) -> str:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or "")
    return ""


async def _settle(plane: ControlPlane, want: int, total: int) -> dict[str, Obj]:
    """Wait until `want` pods are bound and the rest carry an unschedulable condition,
    stepping the fake clock past backoffs."""
    client = plane.client()
    scheduler = plane.components["scheduler"]
    assert isinstance(scheduler, Scheduler)
    clock = plane.clock
    assert isinstance(clock, FakeClock)

    async def settled() -> dict[str, Obj] | None:
        pods = await _pods(client)
        bound = [p for p in pods.values() if p["spec"].get("nodeName")]
        pending = [p for p in pods.values() if _unschedulable_message(p)]
        if len(bound) == want and len(bound) + len(pending) == total:
            return pods
        clock.step(1.0)
        return None

    result: dict[str, Obj] = await wait_for(settled, timeout=20, what=f"{want} pods bound")
    return result


async def test_pods_get_own_devices_until_exhausted_then_deletion_frees(
    plane: ControlPlane,
) -> None:
    client = plane.client()
    await _cluster(client, {"node-a": 2, "node-b": 1})
    for i in range(5):
        await client.create(PODS, _pod(f"p{i}"), "default")
    pods = await _settle(plane, want=3, total=5)
    devices = await _devices(client)
    assert sorted(devices.values()) == [
        ("node-a", "dev-0"),
        ("node-a", "dev-1"),
        ("node-b", "dev-0"),
    ]
    for pod in pods.values():
        if not pod["spec"].get("nodeName"):
            # Upstream adds the DefaultPreemption part, which draplane does not run.
            assert _unschedulable_message(pod) == (
                "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable."
            )
    bound = sorted(n for n, p in pods.items() if p["spec"].get("nodeName"))
    for name in bound[:2]:
        await client.delete(PODS, name, "default", grace_period_seconds=0)
    pods = await _settle(plane, want=3, total=3)
    assert len(set((await _devices(client)).values())) == len(await _devices(client)) == 3


async def test_racing_pods_never_share_a_device(plane: ControlPlane) -> None:
    client = plane.client()
    await _cluster(client, {"node-a": 1})
    for name in ("racer-0", "racer-1"):
        await client.create(PODS, _pod(name), "default")
    pods = await _settle(plane, want=1, total=2)
    assert list((await _devices(client)).values()) == [("node-a", "dev-0")]
    claims = (await client.list(RESOURCE_CLAIMS_V1, "default"))["items"]
    reserved: list[Any] = [
        e["name"] for c in claims for e in (c.get("status") or {}).get("reservedFor") or ()
    ]
    assert reserved == [n for n, p in pods.items() if p["spec"].get("nodeName")]


async def test_pods_bind_without_the_clock_moving(plane: ControlPlane) -> None:
    # Nothing on the way from a created pod to its bound claim waits for time to pass: no
    # backoff, flush interval or status poll (the fake clock never steps here).
    client = plane.client()
    await _cluster(client, {"node-a": 2, "node-b": 1})
    for i in range(3):
        await client.create(PODS, _pod(f"p{i}"), "default")

    async def all_bound() -> dict[str, Obj] | None:
        pods = await _pods(client)
        return pods if all(p["spec"].get("nodeName") for p in pods.values()) else None

    pods = await wait_for(all_bound, timeout=20, what="3 pods bound")
    assert len(pods) == 3
    devices = await _devices(client)
    assert len(set(devices.values())) == 3
    claims = (await client.list(RESOURCE_CLAIMS_V1, "default"))["items"]
    assert sorted(e["name"] for c in claims for e in c["status"]["reservedFor"]) == sorted(pods)


BINDING_TIMEOUT = 600.0
"""The scheduler's default bindingTimeout."""


async def _binding_cluster(client: Client) -> None:
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
    pod = make_pod("pod").claim_ref("gpu", "claim", mode=versions.STRUCTURED).obj()
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
    await _binding_cluster(client)
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
