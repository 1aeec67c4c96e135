"""DeviceSet, the allocated devices by pool: a set of device IDs to every reader, copies that
share the pools' sets without seeing each other's changes, and the tracker's snapshots taken
apart from its later changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draplane.dra.structured import AllocatedCounts
from draplane.dra.structured.state import DeviceSet

A0, A1, B0 = ("d", "pool-a", "dev-0"), ("d", "pool-a", "dev-1"), ("d", "pool-b", "dev-0")


def _add(did: Any) -> Callable[[DeviceSet], None]:
    return lambda s: s.add(did)


def _discard(did: Any) -> Callable[[DeviceSet], None]:
    return lambda s: s.discard(did)


CASES = [
    pytest.param([], set(), id="empty"),
    pytest.param([_add(A0), _add(A1), _add(B0)], {A0, A1, B0}, id="two-pools"),
    pytest.param([_add(A0), _add(A0)], {A0}, id="added-twice"),
    pytest.param([_add(A0), _add(A1), _discard(A0)], {A1}, id="discarded"),
    pytest.param([_add(A0), _discard(A0), _discard(A0)], set(), id="last-of-a-pool"),
    pytest.param([_discard(B0)], set(), id="discard-absent"),
    pytest.param([lambda s: s.update([A0, B0, A1])], {A0, A1, B0}, id="update"),
]


@pytest.mark.parametrize(("steps", "expected"), CASES)
def test_a_device_set_holds_what_a_set_would(
    steps: list[Callable[[DeviceSet], None]], expected: set[Any]
) -> None:
    got = DeviceSet()
    for step in steps:
        step(got)
    assert got == expected and set(got) == expected and len(got) == len(expected)
    for did in (A0, A1, B0):
        assert (did in got) is (did in expected)


@pytest.mark.parametrize("other", [None, "d", ("d", "pool-a"), ["d", "pool-a", "dev-0"], 3])
def test_what_is_no_device_id_is_not_in_the_set(other: Any) -> None:
    assert other not in DeviceSet([A0])


def test_copies_do_not_see_each_others_changes() -> None:
    original = DeviceSet([A0, B0])
    copy = original.copy()
    copy.add(A1)
    copy.discard(B0)
    original.discard(A0)
    assert (original, copy) == ({B0}, {A0, A1})


def test_a_snapshot_keeps_the_devices_of_its_time() -> None:
    counts = AllocatedCounts()
    counts.add({"devices": {"results": [{"driver": "d", "pool": "pool-a", "device": "dev-0"}]}})
    before = counts.snapshot()
    counts.add({"devices": {"results": [{"driver": "d", "pool": "pool-a", "device": "dev-1"}]}})
    counts.remove({"devices": {"results": [{"driver": "d", "pool": "pool-a", "device": "dev-0"}]}})
    assert before.allocated_devices == {A0}
    assert counts.snapshot().allocated_devices == {A1}
