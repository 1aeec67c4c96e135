"""Table-driven allocator test cases: `AllocatorCase` and `check_case()`.

A case lists the objects (claims, classes, slices, node), the allocated state (allocation dicts
or bare device IDs), the features, and exactly one expectation: `expect` (the list of allocation
dicts, `None` for "does not fit"), `error` (the exact AllocationError text) or `node_error` (the
exact FailedAllocationOnNode text). `shareID` values are random: expect `unittest.mock.ANY`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from draplane.api.meta import Obj
from draplane.dra.structured import (
    AllocatedState,
    AllocationError,
    Allocator,
    DeviceID,
    FailedAllocationOnNode,
    Features,
)
from draplane.testing.builders import make_node
from draplane.testing.structured import node_selector_for

_UNSET: Any = object()


@dataclass
class AllocatorCase:
    id: str
    claims: list[Obj]
    classes: list[Obj] = field(default_factory=list)
    slices: list[Obj] = field(default_factory=list)
    node: Obj = field(default_factory=lambda: make_node("node-1").label("region", "region-1").obj())
    allocated: list[Obj] = field(default_factory=list)
    allocated_devices: list[DeviceID] = field(default_factory=list)
    in_flight: list[Obj] = field(default_factory=list)
    features: Features = field(default_factory=Features)
    expect: list[Obj] | None = _UNSET
    error: str | None = None
    node_error: str | None = None
    steps: int | None = None
    is_cancelled: Callable[[], str | None] | None = None


def allocation(
    *results: Obj,
    node: str | None = "node-1",
    config: list[Obj] | None = None,
    node_selector: Obj | None = None,
) -> Obj:
    """An expected AllocationResult: node-local to `node` unless `node_selector` or node=None."""
    out: dict[str, Any] = {"devices": {"results": list(results)}}
    if config:
        out["devices"]["config"] = config
    if node_selector is not None:
        out["nodeSelector"] = node_selector
    elif node is not None:
        out["nodeSelector"] = node_selector_for(node)
    return out


def make_allocator(case: AllocatorCase) -> Allocator:
    state = AllocatedState.from_allocations(case.allocated)
    state.allocated_devices.update(case.allocated_devices)
    classes = {c["metadata"]["name"]: c for c in case.classes}
    return Allocator(classes=classes, slices=case.slices, allocated=state, features=case.features)


def check_case(case: AllocatorCase) -> Allocator:
    """Run the case and assert its expectation; returns the allocator (for step counts)."""
    alloc = make_allocator(case)
    try:
        got = alloc.allocate(
            case.node, case.claims, in_flight=case.in_flight, is_cancelled=case.is_cancelled
        )
    except FailedAllocationOnNode as e:
        assert case.node_error is not None, f"unexpected node error: {e}"
        assert str(e) == case.node_error
        return alloc
    except AllocationError as e:
        assert case.error is not None, f"unexpected error: {e}"
        assert str(e) == case.error
        return alloc
    assert case.error is None and case.node_error is None, f"expected an error, got {got}"
    assert case.expect is not _UNSET, "case has no expectation"
    assert got == case.expect
    if case.steps is not None:
        assert alloc.steps == case.steps
    return alloc
