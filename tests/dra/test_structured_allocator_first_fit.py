"""The allocator's first-fit path (one claim, one plain ExactCount request) against the general
depth-first search: the same answer and the same step count for every shape, and the general
search wherever a device's acceptance depends on the other picks."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.dra.structured import AllocatedState, Allocator
from draplane.testing.builders import make_node
from draplane.testing.structured import (
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

A = "driver-a.example.com"
NODE = make_node("node-1").obj()
CLASSES = {"class-a": make_device_class("class-a", A).obj()}
BIG = 'device.attributes["driver-a.example.com"].size == "big"'


def _slice(devices: list[Any], name: str = "s") -> dict[str, Any]:
    return make_resource_slice(name, A, "node-1").node("node-1").device(*devices).obj()


def _devices(n: int) -> list[Any]:
    return [make_device(f"d{i}").attr("size", "big" if i % 2 else "small") for i in range(n)]


def _tainted(n: int) -> list[Any]:
    return [make_device(f"d{i}").taint("gpu", "NoSchedule") if i < 2 else f"d{i}" for i in range(n)]


def _counters() -> list[Any]:
    return [make_device(f"d{i}").consumes("set", mem="4Gi") for i in range(3)]


CASES = [
    pytest.param([_slice(_devices(4))], 1, None, (), id="one-of-four"),
    pytest.param([_slice(_devices(4))], 3, None, (), id="three-of-four"),
    pytest.param([_slice(_devices(4))], 5, None, (), id="too-many"),
    pytest.param([_slice(_devices(6))], 2, BIG, (), id="selector"),
    pytest.param([_slice(_devices(6))], 4, BIG, (), id="selector-too-few"),
    pytest.param([_slice(_devices(4))], 2, None, ("d0", "d2"), id="allocated"),
    pytest.param([_slice(_devices(4))], 3, None, ("d0", "d2"), id="allocated-too-few"),
    pytest.param([_slice(_tainted(4))], 2, None, (), id="taints"),
    pytest.param([_slice(["d0"], "a"), _slice(["d1", "d2"], "b")], 2, None, (), id="two-slices"),
]


@pytest.mark.parametrize(("slices", "count", "selector", "allocated"), CASES)
def test_first_fit_answers_as_the_search(
    slices: list[Any], count: int, selector: str | None, allocated: tuple[str, ...]
) -> None:
    claim = (
        make_structured_claim("c")
        .request("gpu", "class-a", count=count, selectors=[selector] if selector else None)
        .obj()
    )

    def run(general: bool) -> tuple[Any, int]:
        state = AllocatedState({(A, "node-1", d) for d in allocated})
        alloc = Allocator(classes=CLASSES, slices=slices, allocated=state)
        alloc.first_fit = not general
        got = alloc.allocate(NODE, [claim])
        return got, alloc.steps

    assert run(general=False) == run(general=True)


def test_counters_take_the_general_search() -> None:
    slice_ = (
        make_resource_slice("s", A, "node-1")
        .node("node-1")
        .shared_counters("set", mem="8Gi")
        .device(*_counters())
        .obj()
    )
    claim = make_structured_claim("c").request("gpu", "class-a", count=3).obj()
    alloc = Allocator(classes=CLASSES, slices=[slice_])
    # Two 4Gi devices exhaust the 8Gi counter set: the third does not fit.
    assert alloc.allocate(NODE, [claim]) is None
    claim2 = make_structured_claim("c").request("gpu", "class-a", count=2).obj()
    got = alloc.allocate(NODE, [claim2])
    assert got is not None
    assert [r["device"] for r in got[0]["devices"]["results"]] == ["d0", "d1"]
