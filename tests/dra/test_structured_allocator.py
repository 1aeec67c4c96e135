"""The structured allocator: pools, requests, search order, constraints, config, node selectors.

Case names follow upstream's allocator test table where a case mirrors one of them.
"""

from __future__ import annotations

import pytest

from draplane.testing.allocatorcases import AllocatorCase, allocation, check_case
from draplane.testing.builders import make_node
from draplane.testing.structured import (
    device_result,
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    make_subrequest,
)

A = "driver-a.example.com"
B = "driver-b.example.com"
CLASS_A = make_device_class("class-a", A).obj()
CLASS_B = make_device_class("class-b", B).obj()
REGION_1 = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}
    ]
}


def res(request: str, device: str, driver: str = A, pool: str = "pool-1", **extra: object):  # type: ignore[no-untyped-def]
    return device_result(request, device, driver, pool, **extra)


def one(
    name: str = "slice-1",
    node: str = "node-1",
    pool: str = "pool-1",
    driver: str = A,
    devices: tuple[object, ...] = ("device-1",),
):  # type: ignore[no-untyped-def]
    return make_resource_slice(name, driver, pool).node(node).device(*devices).obj()  # type: ignore[arg-type]


def claim(*requests: tuple[str, str], name: str = "claim-0"):  # type: ignore[no-untyped-def]
    b = make_structured_claim(name)
    for req, cls in requests:
        b.request(req, cls)
    return b


def mem(name: str, value: str):  # type: ignore[no-untyped-def]
    return make_device(name).capacity("memory", value)


def at_least(q: str) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{q}")) >= 0'


def attrs(name: str, **values: object):  # type: ignore[no-untyped-def]
    d = make_device(name)
    for k, v in values.items():
        if k == "driverVersion":
            d.version_attr(k, str(v))
        else:
            d.attr(k, v)  # type: ignore[arg-type]
    return d


CASES = [
    AllocatorCase(
        "simple",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[one()],
        expect=[allocation(res("req-0", "device-1"))],
        steps=4,
    ),
    AllocatorCase(
        "other-node",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[one(driver=B), one("slice-2", "node-2", "pool-2")],
        node=make_node("node-2").obj(),
        expect=[allocation(res("req-0", "device-1", pool="pool-2"), node="node-2")],
    ),
    AllocatorCase(
        "small-and-large",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[at_least("1Gi")])
            .request("req-1", "class-a", selectors=[at_least("2Gi")])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[one(devices=(mem("device-1", "1Gi"), mem("device-2", "2Gi")))],
        expect=[allocation(res("req-0", "device-1"), res("req-1", "device-2"))],
    ),
    AllocatorCase(
        "small-and-large-backtrack-requests",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[at_least("1Gi")])
            .request("req-1", "class-a", selectors=[at_least("2Gi")])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[one(devices=(mem("device-2", "2Gi"), mem("device-1", "1Gi")))],
        expect=[allocation(res("req-0", "device-1"), res("req-1", "device-2"))],
    ),
    AllocatorCase(
        "small-and-large-backtrack-claims",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[at_least("1Gi")])
            .obj(),
            make_structured_claim("claim-1")
            .request("req-1", "class-a", selectors=[at_least("2Gi")])
            .obj(),
        ],
        classes=[CLASS_A],
        slices=[one(devices=(mem("device-2", "2Gi"), mem("device-1", "1Gi")))],
        expect=[allocation(res("req-0", "device-1")), allocation(res("req-1", "device-2"))],
    ),
    AllocatorCase(
        "devices-split-across-different-slices",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", count=2).obj()],
        classes=[CLASS_A],
        slices=[one(), one("slice-2", pool="pool-2")],
        expect=[allocation(res("req-0", "device-1"), res("req-0", "device-1", pool="pool-2"))],
    ),
    AllocatorCase(
        "obsolete-slice",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
            make_resource_slice("slice-1b", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .generation(1)
            .device("device-2")
            .obj(),
        ],
        expect=None,
    ),
    AllocatorCase(
        "multi-host-resource-pool-complete-update-from-node-1-to-node-2",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-old", A, "pool-1").node("node-1").device("device-1").obj(),
            make_resource_slice("slice-new", A, "pool-1")
            .node("node-2")
            .generation(1)
            .device("device-2")
            .obj(),
        ],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "pool-incomplete-not-used",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj()
        ],
        expect=None,
    ),
    AllocatorCase(
        "pool-complete-across-nodes",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
            make_resource_slice("slice-2", A, "pool-1")
            .node("node-2")
            .slice_count(2)
            .device("device-2")
            .obj(),
        ],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "duplicate-slice",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
            make_resource_slice("slice-1-2", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
        ],
        node_error="invalid resource pools were encountered",
    ),
    AllocatorCase(
        "invalid-pool-harmless-when-others-suffice",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
            make_resource_slice("slice-1-2", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
            one("slice-3", pool="pool-2"),
        ],
        expect=[allocation(res("req-0", "device-1", pool="pool-2"))],
    ),
    AllocatorCase(
        "no-slices", claims=[claim(("req-0", "class-a")).obj()], classes=[CLASS_A], expect=None
    ),
    AllocatorCase(
        "not-enough-suitable-devices",
        claims=[
            claim(("req-0", "class-a")).obj(),
            claim(("req-1", "class-a"), name="claim-1").obj(),
        ],
        classes=[CLASS_A],
        slices=[one()],
        expect=None,
    ),
    AllocatorCase(
        "no-classes",
        claims=[claim(("req-0", "class-a")).obj()],
        slices=[one()],
        error="claim default/claim-0, request req-0: could not retrieve device class class-a: "
        'deviceclass.resource.k8s.io "class-a" not found',
    ),
    AllocatorCase(
        "empty-class",
        claims=[claim(("req-0", "")).obj()],
        classes=[CLASS_A],
        slices=[one()],
        error="claim default/claim-0, request req-0: missing device class name "
        "(unsupported request type?)",
    ),
    AllocatorCase("no-claims-to-allocate", claims=[], classes=[CLASS_A], slices=[one()], expect=[]),
    AllocatorCase(
        "all-devices-single",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj()],
        classes=[CLASS_A],
        slices=[one()],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "all-devices-many",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj()],
        classes=[CLASS_A],
        slices=[one(), one(pool="pool-2")],
        expect=[allocation(res("req-0", "device-1"), res("req-0", "device-1", pool="pool-2"))],
    ),
    AllocatorCase(
        "all-devices-none-match",
        claims=[make_structured_claim("claim-0").request("req-0", "class-b", mode="All").obj()],
        classes=[CLASS_B],
        slices=[one()],
        expect=None,
    ),
    AllocatorCase(
        "all-devices-of-the-incomplete-pool",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj()
        ],
        error="claim default/claim-0, request req-0: asks for all devices, but resource pool "
        f"{A}/pool-1 is currently being updated",
    ),
    AllocatorCase(
        "all-devices-incomplete-pool-of-another-driver",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj()],
        classes=[CLASS_A],
        slices=[
            one(),
            make_resource_slice("slice-b", B, "pool-b")
            .node("node-1")
            .slice_count(2)
            .device("device-1")
            .obj(),
        ],
        error="claim default/claim-0, request req-0: asks for all devices, but resource pool "
        f"{B}/pool-b is currently being updated",
    ),
    AllocatorCase(
        "all-devices-of-an-invalid-pool",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj()],
        classes=[CLASS_A],
        slices=[one(devices=("device-1", "device-1"))],
        error="claim default/claim-0, request req-0: asks for all devices, but resource pool "
        f"{A}/pool-1 is currently invalid",
    ),
    AllocatorCase(
        "all-devices-plus-another",
        claims=[
            make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj(),
            make_structured_claim("claim-1").request("req-0", "class-b").obj(),
        ],
        classes=[CLASS_A, CLASS_B],
        slices=[one(), one(driver=B)],
        expect=[
            allocation(res("req-0", "device-1")),
            allocation(res("req-0", "device-1", driver=B)),
        ],
    ),
    AllocatorCase(
        "all-devices-some-allocated",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", mode="All").obj()],
        classes=[CLASS_A],
        slices=[one(devices=("device-1", "device-2"))],
        allocated_devices=[(A, "pool-1", "device-1")],
        expect=None,
    ),
    AllocatorCase(
        "network-attached-device",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node_selector(REGION_1)
            .device("device-1")
            .obj()
        ],
        expect=[allocation(res("req-0", "device-1"), node_selector=REGION_1)],
    ),
    AllocatorCase(
        "network-attached-device-other-region",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node_selector(REGION_1)
            .device("device-1")
            .obj()
        ],
        node=make_node("node-2").label("region", "region-2").obj(),
        expect=None,
    ),
    AllocatorCase(
        "all-nodes-device",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[make_resource_slice("slice-1", A, "pool-1").all_nodes().device("device-1").obj()],
        expect=[allocation(res("req-0", "device-1"), node=None)],
    ),
    AllocatorCase(
        "local-and-network-attached-devices",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", count=2).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node_selector(REGION_1)
            .device("device-1")
            .obj(),
            one(pool="pool-2"),
        ],
        expect=[allocation(res("req-0", "device-1"), res("req-0", "device-1", pool="pool-2"))],
    ),
    AllocatorCase(
        "node-selector-with-two-terms",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .node_selector({"nodeSelectorTerms": [*REGION_1["nodeSelectorTerms"]] * 2})
            .device("device-1")
            .obj()
        ],
        error="create NodeSelector for claim claim-0: "
        "unsupported ResourceSlice.NodeSelector with 2 terms",
    ),
    AllocatorCase(
        "per-device-node-selection",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", count=2).obj()],
        classes=[CLASS_A],
        slices=[
            make_resource_slice("slice-1", A, "pool-1")
            .per_device_node_selection()
            .device(
                make_device("device-1").node_name("node-2"),
                make_device("device-2").all_nodes(),
                make_device("device-3").node_name("node-1"),
            )
            .obj()
        ],
        expect=[allocation(res("req-0", "device-2"), res("req-0", "device-3"))],
    ),
    AllocatorCase(
        "several-different-drivers",
        claims=[
            claim(("req-0", "class-a")).obj(),
            claim(("req-0", "class-b"), name="claim-1").obj(),
        ],
        classes=[CLASS_A, CLASS_B],
        slices=[one(devices=("device-1", "device-2")), one(driver=B)],
        expect=[
            allocation(res("req-0", "device-1")),
            allocation(res("req-0", "device-1", driver=B)),
        ],
    ),
    AllocatorCase(
        "already-allocated-devices",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[one()],
        allocated=[allocation(res("req-0", "device-1"))],
        expect=None,
    ),
    AllocatorCase(
        "in-flight-devices",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[one(devices=("device-1", "device-2"))],
        in_flight=[allocation(res("req-0", "device-1"))],
        expect=[allocation(res("req-0", "device-2"))],
    ),
    AllocatorCase(
        "admin-access-enabled",
        claims=[
            make_structured_claim("claim-0").request("req-0", "class-a", admin_access=True).obj()
        ],
        classes=[CLASS_A],
        slices=[one()],
        allocated_devices=[(A, "pool-1", "device-1")],
        expect=[allocation(res("req-0", "device-1", adminAccess=True))],
    ),
    AllocatorCase(
        "admin-access-result-does-not-block",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[one()],
        allocated=[allocation(res("req-0", "device-1", adminAccess=True))],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "admin-access-twice-in-one-claim",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", admin_access=True)
            .request("req-1", "class-a", admin_access=True)
            .obj()
        ],
        classes=[CLASS_A],
        slices=[one()],
        expect=None,
    ),
    AllocatorCase(
        "unknown-selector",
        claims=[
            make_structured_claim("claim-0")
            .raw_request(
                {"name": "req-0", "exactly": {"deviceClassName": "class-a", "selectors": [{}]}}
            )
            .obj()
        ],
        classes=[CLASS_A],
        slices=[one()],
        error="claim default/claim-0, request req-0, selector #0: CEL expression empty "
        "(unsupported selector type?)",
    ),
    AllocatorCase(
        "unknown-allocation-mode",
        claims=[
            make_structured_claim("claim-0").request("req-0", "class-a", mode="future-mode").obj()
        ],
        classes=[CLASS_A],
        slices=[one()],
        error="claim default/claim-0, request req-0: unsupported count mode future-mode",
    ),
    AllocatorCase(
        "unknown-constraint",
        claims=[
            claim(("req-0", "class-a"))
            .set(
                "spec",
                {
                    "devices": {
                        "requests": [
                            {"name": "req-0", "exactly": {"deviceClassName": "class-a", "count": 1}}
                        ],
                        "constraints": [{}],
                    }
                },
            )
            .obj()
        ],
        classes=[CLASS_A],
        slices=[one()],
        error="claim default/claim-0, constraint #0: "
        "empty constraint (unsupported constraint type?)",
    ),
    AllocatorCase(
        "too-many-devices",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", count=33).obj()],
        classes=[CLASS_A],
        slices=[one()],
        error="claim default/claim-0: number of requested devices 33 exceeds the claim limit of 32",
    ),
    AllocatorCase(
        "five-of-four-devices-tries-combinations",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", count=5).obj()],
        classes=[CLASS_A],
        slices=[one(devices=("device-1", "device-2", "device-3", "device-4"))],
        expect=None,
        steps=16,
    ),
    AllocatorCase(
        "cancelled",
        claims=[claim(("req-0", "class-a")).obj()],
        classes=[CLASS_A],
        slices=[one()],
        is_cancelled=lambda: "context canceled",
        error="filter operation aborted: context canceled",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocator(case: AllocatorCase) -> None:
    check_case(case)


def test_subrequest_builder_defaults() -> None:
    assert make_subrequest("s", "class-a") == {
        "name": "s",
        "deviceClassName": "class-a",
        "allocationMode": "ExactCount",
        "count": 1,
    }
