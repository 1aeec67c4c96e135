"""The example driver's allocation model alone (spec/scheduler.md §8), table-driven."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from draplane.drivers.example import AllocationError, Allocator, Grant, Resources


@dataclass(frozen=True)
class Step:
    claim_uid: str
    selected_node: str | None
    expect: Grant | str
    """The grant, or the error message."""


@dataclass(frozen=True)
class Case:
    resources: Resources
    steps: list[Step]
    nodes: list[str] = field(default_factory=lambda: ["node-0", "node-1"])
    allocations: int = 0


CASES = [
    pytest.param(
        Case(
            Resources(devices_per_node=2),
            [
                Step("a", "node-0", Grant("node-0", ("dev-0",))),
                Step("b", "node-0", Grant("node-0", ("dev-1",))),
                Step("c", "node-0", 'resources exhausted on node "node-0"'),
                Step("c", "node-1", Grant("node-1", ("dev-0",))),
            ],
            allocations=3,
        ),
        id="node-local-limit-per-node",
    ),
    pytest.param(
        Case(
            Resources(devices_per_node=1),
            [
                Step("a", "node-0", Grant("node-0", ("dev-0",))),
                Step("a", "node-0", Grant("node-0", ("dev-0",))),
                Step("a", "node-1", Grant("node-0", ("dev-0",))),
            ],
            allocations=1,
        ),
        id="idempotent-per-claim-uid",
    ),
    pytest.param(
        Case(
            Resources(network_attached=2),
            [
                Step("a", "node-0", Grant("", ("dev-0",))),
                Step("b", "node-1", Grant("", ("dev-1",))),
                Step("c", "node-0", "resources exhausted in the cluster"),
            ],
            allocations=2,
        ),
        id="network-pool-limit",
    ),
    pytest.param(
        Case(
            Resources(devices_per_node=1),
            [
                Step("a", None, Grant("node-0", ("dev-0",))),
                Step("b", None, Grant("node-1", ("dev-0",))),
                Step("c", None, "resources exhausted on all nodes"),
            ],
            allocations=2,
        ),
        id="immediate-picks-a-node-with-room",
    ),
    pytest.param(
        Case(
            Resources(devices_per_node=0),
            [Step(str(i), "node-0", Grant("node-0", (f"dev-{i}",))) for i in range(20)],
            allocations=20,
        ),
        id="zero-means-unlimited",
    ),
    pytest.param(
        Case(
            Resources(devices_per_node=4, nodes=("node-1",)),
            [
                Step("a", "node-0", 'resources exhausted on node "node-0"'),
                Step("a", None, Grant("node-1", ("dev-0",))),
            ],
            allocations=1,
        ),
        id="driver-runs-only-on-some-nodes",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_allocate(case: Case) -> None:
    # A seeded choice keeps immediate allocation reproducible; the cases leave one candidate.
    allocator = Allocator(case.resources, rng=random.Random(1))
    for step in case.steps:
        if isinstance(step.expect, str):
            with pytest.raises(AllocationError) as raised:
                allocator.allocate(
                    step.claim_uid, selected_node=step.selected_node, nodes=case.nodes
                )
            assert str(raised.value) == step.expect
        else:
            grant = allocator.allocate(
                step.claim_uid, selected_node=step.selected_node, nodes=case.nodes
            )
            assert grant == step.expect
    assert allocator.allocations == case.allocations


def test_deallocate_frees_the_device_and_is_idempotent() -> None:
    allocator = Allocator(Resources(devices_per_node=1))
    allocator.allocate("a", selected_node="node-0", nodes=[])
    allocator.deallocate("a")
    allocator.deallocate("a")
    allocator.deallocate("never-allocated")
    assert allocator.deallocations == 1
    assert allocator.allocate("b", selected_node="node-0", nodes=[]) == Grant("node-0", ("dev-0",))


def test_restore_counts_against_the_limit_without_counting_an_allocation() -> None:
    allocator = Allocator(Resources(devices_per_node=2))
    allocator.restore("a", Grant("node-0", ("dev-1",)))
    assert allocator.allocate("b", selected_node="node-0", nodes=[]) == Grant("node-0", ("dev-0",))
    with pytest.raises(AllocationError):
        allocator.allocate("c", selected_node="node-0", nodes=[])
    assert allocator.allocations == 1


@pytest.mark.parametrize(
    ("resources", "held", "claim_count", "expected"),
    [
        pytest.param(Resources(devices_per_node=2), {"node-0": 1}, 1, [], id="room-for-one"),
        pytest.param(
            Resources(devices_per_node=2), {"node-0": 1}, 2, ["node-0"], id="joint-two-claims"
        ),
        pytest.param(
            Resources(devices_per_node=2),
            {"node-0": 2, "node-1": 2},
            1,
            ["node-0", "node-1"],
            id="all-full",
        ),
        pytest.param(Resources(devices_per_node=0), {"node-0": 50}, 3, [], id="unlimited"),
        pytest.param(
            Resources(network_attached=2),
            {"": 1},
            2,
            ["node-0", "node-1", "node-2"],
            id="network-pool-too-small-for-the-pod",
        ),
        pytest.param(
            Resources(devices_per_node=2, nodes=("node-0", "node-1")),
            {},
            1,
            ["node-2"],
            id="driver-not-on-node",
        ),
    ],
)
def test_unsuitable_nodes(
    resources: Resources, held: dict[str, int], claim_count: int, expected: list[str]
) -> None:
    allocator = Allocator(resources)
    for node, count in held.items():
        for i in range(count):
            allocator.restore(f"{node}-{i}", Grant(node, (f"dev-{i}",)))
    unsuitable = allocator.unsuitable_nodes(
        potential_nodes=["node-0", "node-1", "node-2"], claim_count=claim_count
    )
    assert unsuitable == expected
