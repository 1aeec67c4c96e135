"""SchedulerCache holds: a pod waiting for a driver to allocate on a node counts there until its
next attempt, alongside assumed and bound pods."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.framework import PodInfo
from draplane.testing.builders import from_pod, make_node, make_pod

POD = make_pod("p").obj()
INFO = PodInfo(POD)
UID = INFO.uid


def _cache() -> SchedulerCache:
    cache = SchedulerCache()
    for name in ("node-0", "node-1"):
        cache.add_node(make_node(name).obj())
    return cache


def _pods_on(cache: SchedulerCache) -> dict[str, list[str]]:
    return {n.name: [p.name for p in n.pods.values()] for n in cache.node_infos()}


def _held_then_forgotten(cache: SchedulerCache) -> None:
    # The attempt that asked the driver: assumed, held by Reserve, forgotten on failure.
    cache.assume_pod(INFO, "node-0")
    cache.hold(INFO, "node-0")
    cache.forget_pod(INFO)


def _released(cache: SchedulerCache) -> None:
    _held_then_forgotten(cache)
    cache.release(UID)


def _bound_elsewhere(cache: SchedulerCache) -> None:
    _held_then_forgotten(cache)
    cache.add_pod(from_pod(POD).node("node-1").obj())
    cache.release(UID)  # the next pop of the pod, if any, must not unplace the bound pod


def _deleted(cache: SchedulerCache) -> None:
    _held_then_forgotten(cache)
    cache.remove_pod(POD)


def _assumed_again(cache: SchedulerCache) -> None:
    # Next attempt: the pop releases the hold, then the pod is assumed on its node again.
    _held_then_forgotten(cache)
    cache.release(UID)
    cache.assume_pod(INFO, "node-0")


@pytest.mark.parametrize(
    ("steps", "want", "held", "assumed"),
    [
        pytest.param(_held_then_forgotten, {"node-0": ["p"], "node-1": []}, True, False, id="held"),
        pytest.param(_released, {"node-0": [], "node-1": []}, False, False, id="released"),
        pytest.param(_bound_elsewhere, {"node-0": [], "node-1": ["p"]}, False, False, id="bound"),
        pytest.param(_deleted, {"node-0": [], "node-1": []}, False, False, id="deleted"),
        pytest.param(_assumed_again, {"node-0": ["p"], "node-1": []}, False, True, id="assumed"),
    ],
)
def test_hold_lifecycle(
    steps: Callable[[SchedulerCache], None],
    want: dict[str, list[str]],
    held: bool,
    assumed: bool,
) -> None:
    cache = _cache()

    steps(cache)

    assert _pods_on(cache) == want
    assert (cache.is_held(UID), cache.is_assumed(UID)) == (held, assumed)


def test_a_held_pod_uses_the_nodes_capacity() -> None:
    cache = _cache()

    cache.hold(INFO, "node-1")

    node = next(n for n in cache.node_infos() if n.name == "node-1")
    assert (node.requested.pods, node.non_zero_requested.milli_cpu) == (1, 100)
    assert not cache.is_assumed(UID)
