"""The structured allocator on special devices: shared counters (partitionable devices), taints,
binding conditions and consumable capacity, with their feature switches.
"""

from __future__ import annotations

from unittest.mock import ANY

import pytest

from draplane.dra.structured import Features
from draplane.testing.allocatorcases import AllocatorCase, allocation, check_case
from draplane.testing.structured import (
    make_device,
    make_structured_claim,
    make_subrequest,
)

from .allocatorobjects import (
    CLASS_A,
    NO_SCHEDULE,
    SHARED,
    TOL_EXISTS,
    TOL_OTHER_KEY,
    A,
    at_least,
    counters,
    node_slice,
    part,
    res,
)

CASES = [
    # --- shared counters
    AllocatorCase(
        "partitionable-devices-single-device",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(part("device-1", "4Gi"), count=2), counters(memory="8Gi")],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "partitionable-devices-multiple-devices",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a")
            .request("req-1", "class-a")
            .obj()
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(
                part("device-1", "4Gi"), part("device-2", "6Gi"), part("device-3", "4Gi"), count=2
            ),
            counters(memory="8Gi"),
        ],
        expect=[allocation(res("req-0", "device-1"), res("req-1", "device-3"))],
    ),
    AllocatorCase(
        "partitionable-devices-prioritized-list",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a")
            .first_available(
                "req-1",
                make_subrequest("sub-0", "class-a", selectors=[at_least("6Gi")]),
                make_subrequest("sub-1", "class-a", selectors=[at_least("4Gi")]),
            )
            .obj()
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(
                part("device-1", "4Gi"), part("device-2", "6Gi"), part("device-3", "4Gi"), count=2
            ),
            counters(memory="8Gi"),
        ],
        expect=[allocation(res("req-0", "device-1"), res("req-1/sub-1", "device-3"))],
    ),
    AllocatorCase(
        "partitionable-devices-counters-exhausted-by-allocated-device",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[
            node_slice(part("device-1", "6Gi"), part("device-2", "4Gi"), count=2),
            counters(memory="8Gi"),
        ],
        allocated_devices=[(A, "pool-1", "device-1")],
        expect=None,
    ),
    AllocatorCase(
        "partitionable-devices-disabled",
        features=Features(partitionable_devices=False),
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(part("device-1", "4Gi"), count=2), counters(memory="8Gi")],
        expect=None,
    ),
    AllocatorCase(
        "partitionable-devices-unknown-counter-set",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(make_device("device-1").consumes("no-such-set", memory="1Gi"))],
        node_error="invalid resource pools were encountered",
    ),
    AllocatorCase(
        "partitionable-shared-device-share-consumes-counters-once",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", selectors=[f'device.attributes["{A}"].shared'])
            .obj(),
            make_structured_claim("claim-1")
            .request("req-0", "class-a", selectors=[f'!device.attributes["{A}"].shared'])
            .obj(),
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(
                make_device("device-1")
                .attr("shared", True)
                .allow_multiple_allocations()
                .consumes("counter-set-1", memory="4Gi"),
                make_device("device-2")
                .attr("shared", False)
                .consumes("counter-set-1", memory="6Gi"),
                count=2,
            ),
            counters(memory="8Gi"),
        ],
        allocated=[allocation(res("req-0", "device-1", shareID="s-1"))],
        expect=None,
    ),
    AllocatorCase(
        "partitionable-shared-device-allocated-again",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[
            node_slice(
                make_device("device-1")
                .allow_multiple_allocations()
                .capacity("memory", "8Gi", {"default": "1Gi"})
                .consumes("counter-set-1", memory="8Gi"),
                count=2,
            ),
            counters(memory="8Gi"),
        ],
        allocated=[
            allocation(res("req-0", "device-1", shareID="s-1", consumedCapacity={"memory": "1Gi"}))
        ],
        expect=[
            allocation(res("req-0", "device-1", shareID=ANY, consumedCapacity={"memory": "1Gi"}))
        ],
    ),
    AllocatorCase(
        # kubernetes#140437: the persisted share already consumes the counters.
        "partitionable-shared-device-share-without-consumed-capacity-allocated-again",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[
            node_slice(
                make_device("device-1")
                .allow_multiple_allocations()
                .consumes("counter-set-1", memory="8Gi"),
                count=2,
            ),
            counters(memory="8Gi"),
        ],
        allocated=[allocation(res("req-0", "device-1", shareID="s-1"))],
        expect=[allocation(res("req-0", "device-1", shareID=ANY))],
    ),
    # --- a device that allowed multiple allocations and no longer does (kubernetes#140798)
    AllocatorCase(
        "no-longer-multi-allocatable-device-with-live-share-stays-taken",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        allocated=[allocation(res("req-0", "device-1", shareID="s-1"))],
        expect=None,
    ),
    AllocatorCase(
        "no-longer-multi-allocatable-device-with-consumed-capacity-stays-taken",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(make_device("device-1").capacity("memory", "8Gi"), "device-2")],
        allocated=[
            allocation(res("req-0", "device-1", shareID="s-1", consumedCapacity={"memory": "1Gi"}))
        ],
        expect=[allocation(res("req-0", "device-2"))],
    ),
    AllocatorCase(
        "no-longer-multi-allocatable-device-without-shares-is-allocated",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice("device-1")],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    # --- taints
    AllocatorCase(
        "tainted-device",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(NO_SCHEDULE)],
        expect=None,
    ),
    AllocatorCase(
        "tainted-device-tolerated",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", tolerations=[TOL_EXISTS])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(NO_SCHEDULE)],
        expect=[allocation(res("req-0", "device-1", tolerations=[TOL_EXISTS]))],
    ),
    AllocatorCase(
        "tainted-device-other-toleration",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", tolerations=[TOL_OTHER_KEY])
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(NO_SCHEDULE)],
        expect=None,
    ),
    AllocatorCase(
        "tainted-device-no-execute-equal-value",
        claims=[
            make_structured_claim("claim-0")
            .request(
                "req-0",
                "class-a",
                tolerations=[
                    {"key": "taint-key", "operator": "Equal", "value": "v2", "effect": "NoExecute"}
                ],
            )
            .obj()
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(
                make_device("device-1").taint("taint-key", "NoExecute", "v1"),
                make_device("device-2").taint("taint-key", "NoExecute", "v2"),
            )
        ],
        expect=[
            allocation(
                res(
                    "req-0",
                    "device-2",
                    tolerations=[
                        {
                            "key": "taint-key",
                            "operator": "Equal",
                            "value": "v2",
                            "effect": "NoExecute",
                        }
                    ],
                )
            )
        ],
    ),
    AllocatorCase(
        "taint-effect-none-does-not-block",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(make_device("device-1").taint("taint-key", "None"))],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    AllocatorCase(
        "tainted-device-admin-access",
        claims=[
            make_structured_claim("claim-0").request("req-0", "class-a", admin_access=True).obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(NO_SCHEDULE)],
        expect=None,
    ),
    AllocatorCase(
        "tainted-device-feature-disabled",
        features=Features(device_taints=False),
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(NO_SCHEDULE)],
        expect=[allocation(res("req-0", "device-1"))],
    ),
    # --- binding conditions
    AllocatorCase(
        "binding-conditions-pool-tried-last",
        claims=[make_structured_claim("claim-0").request("req-0", "class-a", count=2).obj()],
        classes=[CLASS_A],
        slices=[
            node_slice(
                make_device("device-1").binding_conditions(["Attached"], ["Failed"]), pool="pool-0"
            ),
            node_slice("device-2", name="slice-2"),
        ],
        expect=[
            allocation(
                res("req-0", "device-2"),
                res(
                    "req-0",
                    "device-1",
                    pool="pool-0",
                    bindingConditions=["Attached"],
                    bindingFailureConditions=["Failed"],
                ),
            )
        ],
    ),
    AllocatorCase(
        "binding-conditions-feature-disabled",
        features=Features(device_binding_and_status=False),
        claims=[make_structured_claim("claim-0").request("req-0", "class-a").obj()],
        classes=[CLASS_A],
        slices=[node_slice(make_device("device-1").binding_conditions(["Attached"], ["Failed"]))],
        expect=None,
    ),
    # --- consumable capacity
    AllocatorCase(
        "consumable-capacity-shared-by-two-claims",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", capacity={"memory": "1500Mi"})
            .obj(),
            make_structured_claim("claim-1").request("req-0", "class-a").obj(),
        ],
        classes=[CLASS_A],
        slices=[node_slice(SHARED)],
        expect=[
            allocation(res("req-0", "device-1", shareID=ANY, consumedCapacity={"memory": "2Gi"})),
            allocation(res("req-0", "device-1", shareID=ANY, consumedCapacity={"memory": "1Gi"})),
        ],
    ),
    AllocatorCase(
        "consumable-capacity-exhausted",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", capacity={"memory": "2Gi"})
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(SHARED)],
        allocated=[
            allocation(res("req-0", "device-1", shareID="s-1", consumedCapacity={"memory": "9Gi"}))
        ],
        expect=None,
    ),
    AllocatorCase(
        "consumable-capacity-disabled",
        features=Features(consumable_capacity=False),
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", capacity={"memory": "1Gi"})
            .obj()
        ],
        classes=[CLASS_A],
        slices=[node_slice(SHARED)],
        error="claim default/claim-0, request req-0: has capacity requests, but the "
        "DRAConsumableCapacity feature is disabled",
    ),
    AllocatorCase(
        "capacity-request-filters-dedicated-devices",
        claims=[
            make_structured_claim("claim-0")
            .request("req-0", "class-a", capacity={"memory": "6Gi"})
            .obj()
        ],
        classes=[CLASS_A],
        slices=[
            node_slice(
                make_device("device-1").capacity("memory", "4Gi"),
                make_device("device-2").capacity("memory", "8Gi"),
            )
        ],
        expect=[allocation(res("req-0", "device-2"))],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocator_devices(case: AllocatorCase) -> None:
    check_case(case)
