"""The structured plugin's ClaimTracker keeps the allocated devices current from claim events:
after every step of a claim's life its state equals the one added up from all claims (the
tracker without events), and AllocatedCounts keeps a device that two allocations name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draplane.api.meta import deep_copy
from draplane.dra.structured import AllocatedCounts, AllocatedState
from draplane.scheduler.plugins.dynamicresources.assume import ClaimTracker
from draplane.testing.claimstore import ClaimStore
from draplane.testing.structured import device_result, make_structured_claim

DRIVER = "driver.example.com"


def _allocation(*devices: str, share: str | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {"shareID": share, "consumedCapacity": {"mem": "1Gi"}} if share else {}
    return {"devices": {"results": [device_result("r", d, DRIVER, **extra) for d in devices]}}


def _claim(name: str, allocation: dict[str, Any] | None = None, rv: str = "1") -> dict[str, Any]:
    builder = (
        make_structured_claim(name).uid(f"{name}-uid").resource_version(rv).request("r", "gpu")
    )
    return (builder.allocation(allocation) if allocation is not None else builder).obj()


def _state(state: AllocatedState) -> tuple[Any, ...]:
    return (
        sorted(state.allocated_devices),
        sorted(state.allocated_shared_device_ids),
        sorted((k, sorted(v.items())) for k, v in state.aggregated_capacity.items()),
    )


Step = Callable[[ClaimStore, list[ClaimTracker]], None]


def _written(name: str, allocation: dict[str, Any] | None) -> Step:
    """The scheduler wrote the claim (assumed); the informer has not seen it yet."""

    def step(store: ClaimStore, trackers: list[ClaimTracker]) -> None:
        current = store.stored[("default", name)]
        obj = deep_copy(current)
        obj["status"] = {"allocation": allocation} if allocation else {}
        obj["metadata"]["resourceVersion"] = str(int(current["metadata"]["resourceVersion"]) + 1)
        store.stored[("default", name)] = obj
        for t in trackers:
            t.assume(obj)

    return step


def _in_flight(name: str, allocation: dict[str, Any], pod: str = "pod-uid") -> Step:
    def step(store: ClaimStore, trackers: list[ClaimTracker]) -> None:
        obj = deep_copy(store.stored[("default", name)])
        obj["status"] = {"allocation": allocation}
        for t in trackers:
            assert t.set_in_flight(obj, pod)

    return step


def _landed(name: str, pod: str = "pod-uid") -> Step:
    def step(store: ClaimStore, trackers: list[ClaimTracker]) -> None:
        for t in trackers:
            t.drop_in_flight(f"{name}-uid", pod)

    return step


def _sync(store: ClaimStore, trackers: list[ClaimTracker]) -> None:
    store.sync()


def _deleted(name: str) -> Step:
    def step(store: ClaimStore, trackers: list[ClaimTracker]) -> None:
        store.delete(name)

    return step


def _created(name: str, allocation: dict[str, Any] | None = None) -> Step:
    def step(store: ClaimStore, trackers: list[ClaimTracker]) -> None:
        store.stored[("default", name)] = _claim(name, allocation)

    return step


LIFECYCLES = [
    pytest.param(
        [
            _in_flight("a", _allocation("dev-0")),
            _written("a", _allocation("dev-0")),
            _landed("a"),
            _sync,
        ],
        id="reserve-prebind-informer",
    ),
    pytest.param([_in_flight("a", _allocation("dev-0")), _landed("a")], id="unreserve"),
    pytest.param([_sync, _written("b", None), _sync], id="deallocated"),
    pytest.param(
        [_deleted("b"), _sync, _created("b", _allocation("dev-1")), _sync], id="recreated"
    ),
    pytest.param(
        [_created("c", _allocation("dev-2", share="s1")), _sync, _written("c", None), _sync],
        id="shared-device",
    ),
    pytest.param(
        [_created("c", _allocation("dev-1")), _sync, _deleted("b"), _sync],
        id="two-claims-one-device",
    ),
]


@pytest.mark.parametrize("steps", LIFECYCLES)
def test_incremental_state_matches_adding_up_all_claims(steps: list[Step]) -> None:
    store = ClaimStore([_claim("a"), _claim("b", _allocation("dev-1"))])
    incremental = ClaimTracker(store, store)
    full = ClaimTracker(store)
    assert _state(incremental.allocated_state()) == _state(full.allocated_state())
    for step in steps:
        step(store, [incremental, full])
        assert _state(incremental.allocated_state()) == _state(full.allocated_state())


def test_counts_keep_a_device_two_allocations_name() -> None:
    counts = AllocatedCounts()
    first, second = _allocation("dev-0"), _allocation("dev-0", "dev-1")
    counts.add(first)
    counts.add(second)
    counts.remove(second)
    assert counts.snapshot().allocated_devices == {(DRIVER, "pool-0", "dev-0")}
    counts.remove(first)
    assert _state(counts.snapshot()) == _state(AllocatedState())
