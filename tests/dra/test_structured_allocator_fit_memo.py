"""The first-fit answers kept per node across allocators (`Allocator.fit_memo`): every sequence
of cycles answers as without the memo (results and steps), reuses an answer only while nothing
the answer depends on changed, and never keeps errors or in-flight answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draplane.dra.structured import (
    AllocatedCounts,
    AllocatedState,
    AllocationError,
    Allocator,
    Features,
)
from draplane.dra.structured.pools import SliceIndex
from draplane.testing.builders import make_node
from draplane.testing.structured import (
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
)

A = "driver-a.example.com"
NODES = {n: make_node(n).obj() for n in ("node-1", "node-2")}
CLASSES = {"class-a": make_device_class("class-a", A).obj()}
BIG = 'device.attributes["driver-a.example.com"].size == "big"'
# One Features object, as the scheduler plugin passes: the index keeps a node's pools (and its
# memo) per node and Features object.
FEATURES = Features()
TOLERATE = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}


def _slices() -> list[Any]:
    return [
        make_resource_slice(f"{n}-slice", A, n)
        .node(n)
        .device(
            make_device("d0").attr("size", "small").taint("gpu")
            if n == "node-2"
            else make_device("d0").attr("size", "small"),
            make_device("d1").attr("size", "big"),
            make_device("d2").attr("size", "big"),
        )
        .obj()
        for n in NODES
    ]


def _claim(
    count: int = 1, selector: str | None = None, tolerations: list[Any] | None = None
) -> dict[str, Any]:
    return (
        make_structured_claim("c")
        .request(
            "gpu",
            "class-a",
            count=count,
            selectors=[selector] if selector else None,
            tolerations=tolerations,
        )
        .obj()
    )


def find(node: str, claim: dict[str, Any]) -> tuple[str, ...]:
    return ("find", node, claim)  # type: ignore[return-value]


def allocate(node: str, *devices: str) -> tuple[str, ...]:
    return ("allocate", node, devices)  # type: ignore[return-value]


def run(steps: list[tuple[Any, ...]], *, memo: bool) -> tuple[list[Any], int]:
    """Each find is one scheduling cycle: a new Allocator over the shared index and a
    snapshot of the allocated devices. Returns the answers (devices, steps) and the hits."""
    index = SliceIndex(_slices())
    counts = AllocatedCounts()
    answers: list[Any] = []
    for op, node, arg in steps:
        if op == "allocate":
            counts.add(
                {"devices": {"results": [{"driver": A, "pool": node, "device": d} for d in arg]}}
            )
            continue
        alloc = _allocator(index, counts.snapshot())
        alloc.fit_memo = memo
        got = alloc.allocate(NODES[node], [arg])
        devices = None if got is None else [r["device"] for r in got[0]["devices"]["results"]]
        answers.append((devices, alloc.steps))
    return answers, index.fit_hits


CASES = [
    pytest.param([find("node-1", _claim()), find("node-1", _claim())], 1, id="same-request"),
    pytest.param(
        [find("node-1", _claim()), allocate("node-1", "d0"), find("node-1", _claim())],
        0,
        id="node-changed",
    ),
    pytest.param(
        [find("node-1", _claim()), allocate("node-2", "d1"), find("node-1", _claim())],
        1,
        id="other-node-changed",
    ),
    pytest.param(
        [find("node-1", _claim()), find("node-1", _claim(selector=BIG))], 0, id="other-selector"
    ),
    pytest.param([find("node-1", _claim()), find("node-1", _claim(count=2))], 0, id="other-count"),
    pytest.param(
        [find("node-2", _claim()), find("node-2", _claim(tolerations=[TOLERATE]))],
        0,
        id="other-tolerations",
    ),
    pytest.param(
        [find("node-1", _claim(count=4)), find("node-1", _claim(count=4))], 1, id="no-fit"
    ),
    pytest.param(
        [
            allocate("node-1", "d0", "d1", "d2"),
            find("node-1", _claim()),
            find("node-1", _claim()),
        ],
        1,
        id="full-node",
    ),
    pytest.param(
        [
            find("node-1", _claim()),
            find("node-2", _claim()),
            allocate("node-1", "d0"),
            find("node-2", _claim()),
            find("node-1", _claim()),
            find("node-1", _claim()),
        ],
        2,
        id="two-nodes",
    ),
]


@pytest.mark.parametrize(("steps", "hits"), CASES)
def test_the_memo_answers_as_the_first_fit_path(steps: list[tuple[Any, ...]], hits: int) -> None:
    with_memo, got_hits = run(steps, memo=True)
    without, no_hits = run(steps, memo=False)
    assert with_memo == without
    assert (got_hits, no_hits) == (hits, 0)


def _allocator(index: SliceIndex, allocated: AllocatedState) -> Allocator:
    return Allocator(classes=CLASSES, slices=index, allocated=allocated, features=FEATURES)


NOT_REMEMBERED: list[Any] = [
    pytest.param(
        lambda index, counts: _allocator(index, AllocatedState()).allocate(
            NODES["node-1"], [_claim()]
        ),
        id="state-without-stamps",
    ),
    pytest.param(
        lambda index, counts: _allocator(index, counts.snapshot()).allocate(
            NODES["node-1"],
            [_claim()],
            in_flight=[{"devices": {"results": [{"driver": A, "pool": "node-1", "device": "d0"}]}}],
        ),
        id="in-flight",
    ),
]


@pytest.mark.parametrize("cycle", NOT_REMEMBERED)
def test_answers_that_depend_on_more_are_not_remembered(
    cycle: Callable[[SliceIndex, AllocatedCounts], Any],
) -> None:
    index = SliceIndex(_slices())
    counts = AllocatedCounts()
    first, second = cycle(index, counts), cycle(index, counts)
    assert first == second is not None
    assert index.fit_hits == 0


def test_a_selector_error_is_raised_every_time() -> None:
    index = SliceIndex(_slices())
    counts = AllocatedCounts()
    broken = _claim(selector='device.attributes["driver-a.example.com"].missing == "x"')
    for _ in range(2):
        with pytest.raises(AllocationError, match="CEL runtime error"):
            _allocator(index, counts.snapshot()).allocate(NODES["node-1"], [broken])
    assert index.fit_hits == 0


def test_a_new_node_object_starts_a_new_memo() -> None:
    index = SliceIndex(_slices())
    counts = AllocatedCounts()
    for node in (NODES["node-1"], make_node("node-1").obj()):
        got = _allocator(index, counts.snapshot()).allocate(node, [_claim()])
        assert got is not None
    assert index.fit_hits == 0
