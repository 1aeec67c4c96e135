"""One Allocator serving a pod's Filter calls: per-node results, in-flight allocations, benches."""

from __future__ import annotations

import pytest

from draplane.bench import celcompare, structuredalloc
from draplane.dra.structured import AllocatedState, AllocationError, Allocator
from draplane.testing.builders import make_node
from draplane.testing.structured import (
    device_result,
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    node_selector_for,
)

A = "driver-a.example.com"
CLASSES = {"class-a": make_device_class("class-a", A).obj()}


def node_slices(*nodes: str) -> list[dict[str, object]]:
    return [
        make_resource_slice(f"{n}-slice", A, n).node(n).device("gpu-0", "gpu-1").obj()
        for n in nodes
    ]


def test_one_allocator_many_nodes() -> None:
    alloc = Allocator(classes=CLASSES, slices=node_slices("node-1", "node-2"))
    claim = make_structured_claim("c").request("gpu", "class-a", count=2).obj()
    for n in ("node-1", "node-2", "node-1"):
        assert alloc.allocate(make_node(n).obj(), [claim]) == [
            {
                "devices": {
                    "results": [
                        device_result("gpu", "gpu-0", A, n),
                        device_result("gpu", "gpu-1", A, n),
                    ]
                },
                "nodeSelector": node_selector_for(n),
            }
        ]
    assert alloc.allocate(make_node("node-3").obj(), [claim]) is None


def test_in_flight_allocations_of_concurrent_pods() -> None:
    alloc = Allocator(classes=CLASSES, slices=node_slices("node-1"))
    node = make_node("node-1").obj()
    first = make_structured_claim("a").request("gpu", "class-a").obj()
    second = make_structured_claim("b").request("gpu", "class-a").obj()
    third = make_structured_claim("c").request("gpu", "class-a").obj()
    (a,) = alloc.allocate(node, [first]) or []
    (b,) = alloc.allocate(node, [second], in_flight=[a]) or []
    assert b["devices"]["results"][0]["device"] == "gpu-1"
    assert alloc.allocate(node, [third], in_flight=[a, b]) is None
    # in-flight devices count for that call only
    assert alloc.allocate(node, [third]) is not None


def test_in_flight_partitionable_device_consumes_counters() -> None:
    slices = [
        make_resource_slice("devices", A, "pool-1")
        .node("node-1")
        .slice_count(2)
        .device(
            make_device("half-0").consumes("set", memory="4Gi"),
            make_device("half-1").consumes("set", memory="4Gi"),
            make_device("whole").attr("whole", True).consumes("set", memory="8Gi"),
        )
        .obj(),
        make_resource_slice("counters", A, "pool-1")
        .node("node-1")
        .slice_count(2)
        .shared_counters("set", memory="8Gi")
        .obj(),
    ]
    node = make_node("node-1").obj()
    claim = (
        make_structured_claim("c")
        .request("gpu", "class-a", selectors=["device.attributes.size() >= 0"])
        .obj()
    )
    whole = (
        make_structured_claim("w")
        .request("gpu", "class-a", selectors=[f'"whole" in device.attributes["{A}"]'])
        .obj()
    )
    alloc = Allocator(classes=CLASSES, slices=slices)
    in_flight = [{"devices": {"results": [device_result("gpu", "half-0", A, "pool-1")]}}]
    (got,) = alloc.allocate(node, [claim], in_flight=in_flight) or []
    assert got["devices"]["results"][0]["device"] == "half-1"
    assert alloc.allocate(node, [whole], in_flight=in_flight) is None
    # the cached counters of the allocator itself are untouched by in-flight ones
    state = AllocatedState()
    assert Allocator(classes=CLASSES, slices=slices, allocated=state).allocate(node, [whole])


def test_request_errors_repeat_on_every_node() -> None:
    alloc = Allocator(classes=CLASSES, slices=node_slices("node-1"))
    claim = make_structured_claim("c").request("gpu", "no-such-class").obj()
    for _ in range(2):
        with pytest.raises(AllocationError):
            alloc.allocate(make_node("node-1").obj(), [claim])


@pytest.mark.parametrize(
    ("tracked", "memo", "fits", "hits", "evaluations"),
    [
        # class + request selector on the first device of 3 nodes
        pytest.param(False, True, 6, 0, 6, id="fixed-state"),
        # The first pod takes node-0's one A100: the second pod finds node-0 changed (its
        # H100 evaluated, no fit) and reuses the answers of the other two.
        pytest.param(True, True, 5, 2, 8, id="tracked"),
        pytest.param(True, False, 5, 0, 8, id="tracked-without-memo"),
    ],
)
def test_allocation_bench_runs(
    tracked: bool, memo: bool, fits: int, hits: int, evaluations: int
) -> None:
    result = structuredalloc.run(
        nodes=3, devices=2, pods=2, allocated_fraction=0.0, tracked=tracked, memo=memo
    )
    assert (result["fits"], result["fit_memo_hits"]) == (fits, hits)
    assert result["evaluations"] == evaluations


def test_cel_bench_runs() -> None:
    assert set(celcompare.bench_draplane(2)) == {"string", "quantity", "semver"}
