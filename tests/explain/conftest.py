"""A 1.36 control plane (API server, claim controller, scheduler; no kubelets or drivers) for
`draplane explain`: test clusters are built through its API with the structured builders, and
a fix is applied through the API and the real scheduler must then bind the pod."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from draplane.api import versions
from draplane.api.kinds import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.structured import make_device_class, make_resource_slice

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


def strip(obj: Obj) -> Obj:
    """Builders set uids; the API server assigns its own."""
    obj["metadata"].pop("uid", None)
    return obj


async def create_class(client: Client, name: str = "gpu", driver: str = DRIVER) -> None:
    await client.create(DEVICE_CLASSES, strip(make_device_class(name, driver).obj()))


async def create_node(client: Client, name: str, *devices: object, driver: str = DRIVER,
                      node: Obj | None = None, shared: dict[str, dict[str, str]] | None = None
                      ) -> None:  # fmt: skip
    """A Node and, with `devices`, its ResourceSlice (pool named after the node)."""
    await client.create(NODES, strip(node or make_node(name).obj()))
    count = 2 if shared else 1
    if devices:
        b = make_resource_slice(f"{name}-{driver}", driver, name).node(name).slice_count(count)
        await client.create(RESOURCE_SLICES, strip(b.device(*devices).obj()))  # type: ignore[arg-type]
    if shared:
        b = make_resource_slice(f"{name}-{driver}-counters", driver, name).node(name)
        for set_name, counters in shared.items():
            b.shared_counters(set_name, **counters)
        await client.create(RESOURCE_SLICES, strip(b.slice_count(count).obj()))


async def create_claim(client: Client, claim: Obj) -> Obj:
    return await client.create(RESOURCE_CLAIMS_V1, strip(claim), "default")


async def create_pod(client: Client, name: str, claim: str = "", pod: Obj | None = None) -> Obj:
    body = pod or make_pod(name).obj()
    if claim and pod is None:
        body = make_pod(name).claim_ref("gpu", claim, mode=versions.STRUCTURED).obj()
    return await client.create(PODS, strip(body), "default")


async def wait_bound(plane: ControlPlane, name: str, timeout: float = 20) -> str:
    """Wait for the real scheduler to bind pod default/`name` (stepping the fake clock past
    backoffs); its node."""
    client = plane.client()
    clock = plane.clock
    assert isinstance(clock, FakeClock)

    async def bound() -> str | None:
        pod = await client.get(PODS, name, "default")
        node = pod["spec"].get("nodeName")
        if node:
            return str(node)
        clock.step(1.0)
        return None

    result: str = await wait_for(bound, timeout=timeout, what=f"pod {name} bound")
    return result


async def wait_unschedulable(plane: ControlPlane, name: str) -> None:
    """Wait until the scheduler has tried pod `name` and found no node."""
    client = plane.client()

    async def tried() -> bool:
        pod = await client.get(PODS, name, "default")
        return any(
            c.get("type") == "PodScheduled" and c.get("status") == "False"
            for c in (pod.get("status") or {}).get("conditions") or ()
        )

    await wait_for(tried, timeout=20, what=f"pod {name} unschedulable")
