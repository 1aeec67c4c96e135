"""The configuration the scheduler writes into a claim's allocation (1.34-1.36, kubernetes#134793):
a DeviceClass's config is copied once as `FromClass` with `requests` naming each request (or
`request/subrequest`) that used the class; the claim's own config is copied as `FromClaim` with
its own `requests`, even when that list names every request of the claim. Through the in-process
control plane: API server, claim controller and scheduler."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from draplane.api import versions
from draplane.api.kinds import DEVICE_CLASSES, NODES, PODS, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_node, make_pod
from draplane.testing.clock import FakeClock
from draplane.testing.structured import (
    StructuredClaimBuilder,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    make_subrequest,
)

DRIVER = "driver.example.com"


def _opaque(parameters: Obj) -> Obj:
    return {"opaque": {"driver": DRIVER, "parameters": parameters}}


@dataclass(frozen=True)
class Case:
    claim: StructuredClaimBuilder
    config: list[Obj]


CASES = [
    pytest.param(
        Case(
            make_structured_claim("c").request("gpu", "configured"),
            [{"source": "FromClass", "requests": ["gpu"], **_opaque({"from": "class"})}],
        ),
        id="class-config-names-its-request",
    ),
    pytest.param(
        Case(
            make_structured_claim("c").request("a", "configured").request("b", "configured"),
            [{"source": "FromClass", "requests": ["a", "b"], **_opaque({"from": "class"})}],
        ),
        id="class-config-once-for-two-requests",
    ),
    pytest.param(
        Case(
            make_structured_claim("c").first_available(
                "gpu", make_subrequest("none", "nothing"), make_subrequest("any", "configured")
            ),
            [{"source": "FromClass", "requests": ["gpu/any"], **_opaque({"from": "class"})}],
        ),
        id="class-config-names-the-subrequest",
    ),
    pytest.param(
        Case(
            make_structured_claim("c").request("gpu", "plain").config(DRIVER, {"x": "1"}, "gpu"),
            [{"source": "FromClaim", "requests": ["gpu"], **_opaque({"x": "1"})}],
        ),
        id="claim-config-keeps-its-requests",
    ),
    pytest.param(
        Case(
            make_structured_claim("c").request("gpu", "plain").config(DRIVER, {"x": "1"}),
            [{"source": "FromClaim", **_opaque({"x": "1"})}],
        ),
        id="claim-config-for-all-requests",
    ),
    pytest.param(
        Case(
            make_structured_claim("c")
            .request("gpu", "configured")
            .config(DRIVER, {"x": "1"}, "gpu"),
            [
                {"source": "FromClass", "requests": ["gpu"], **_opaque({"from": "class"})},
                {"source": "FromClaim", "requests": ["gpu"], **_opaque({"x": "1"})},
            ],
        ),
        id="class-then-claim",
    ),
]


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


@pytest.mark.parametrize("case", CASES)
async def test_allocation_config(plane: ControlPlane, case: Case) -> None:
    client = plane.client()
    configured = make_device_class("configured", DRIVER).config(DRIVER, {"from": "class"})
    nothing = make_device_class("nothing", "no-such-driver.example.com")
    for cls in (configured, make_device_class("plain", DRIVER), nothing):
        await client.create(DEVICE_CLASSES, _api(cls.obj()))
    await client.create(NODES, _api(make_node("node-0").obj()))
    devices = make_resource_slice("node-0", DRIVER, "node-0").node("node-0").device("d0", "d1")
    await client.create(RESOURCE_SLICES, _api(devices.obj()))
    await client.create(RESOURCE_CLAIMS_V1, _api(case.claim.obj()), "default")
    pod = make_pod("p").claim_ref("c", "c", mode=versions.STRUCTURED).obj()
    await client.create(PODS, _api(pod), "default")

    async def allocated() -> Obj | None:
        claim = await client.get(RESOURCE_CLAIMS_V1, "c", "default")
        allocation: Obj | None = (claim.get("status") or {}).get("allocation")
        return allocation

    allocation = await wait_for(allocated, timeout=20, what="claim allocated")

    assert allocation["devices"].get("config", []) == case.config
