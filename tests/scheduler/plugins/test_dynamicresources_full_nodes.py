"""DynamicResources' Filter on nodes without enough free devices: the allocator's answer without
the search (`freedevices.py`) is the search's answer, status for status, and it is given only
where it is exact (no adminAccess, no multi-allocatable devices, no CEL error on a free device);
the free-device counts follow allocations, in-flight allocations and deallocations.
"""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import versions
from draplane.api.meta import Obj, deep_copy
from draplane.scheduler.framework import SUCCESS, CycleState, Status
from draplane.scheduler.plugins.dynamicresources import StructuredDynamicResources
from draplane.scheduler.plugins.dynamicresources.structured import STRUCTURED_STATE_KEY
from draplane.testing.builders import make_node, make_pod
from draplane.testing.claimstore import ClaimStore, node_infos, pod_info, structured_handle
from draplane.testing.structured import (
    device_result,
    make_device,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    make_subrequest,
)

DRIVER = "driver.example.com"
NODE = make_node("node-a").obj()
CLASS = make_device_class("gpu", DRIVER).obj()
CANNOT = Status.unresolvable("cannot allocate all claims")
NO_KEY = f'device.attributes["{DRIVER}"].model == "x"'


def _slice(*devices: Any, counters: dict[str, str] | None = None, pool: str = "node-a") -> Obj:
    b = make_resource_slice(pool, DRIVER, pool).node("node-a")
    if counters:
        b = b.shared_counters("set", **counters)
    return b.device(*devices).obj()


def _devices(n: int) -> tuple[str, ...]:
    return tuple(f"dev-{i}" for i in range(n))


def _allocated(device: str, share: str | None = None) -> Obj:
    result = device_result("gpu", device, DRIVER, "node-a")
    if share:
        result["shareID"] = share
    return (
        make_structured_claim(f"other-{device}-{share or ''}")
        .uid(f"other-{device}-{share}-uid")
        .request("gpu", "gpu")
        .allocation({"devices": {"results": [result]}})
        .obj()
    )


def _claim(name: str = "claim", **request: Any) -> Obj:
    return make_structured_claim(name).uid(f"{name}-uid").request("gpu", "gpu", **request).obj()


def _pod(*claims: str) -> Obj:
    """A 1.36 pod using the ResourceClaims `claims` (pod claims c0, c1, ...)."""
    pod = make_pod("pod").uid("pod-uid")
    for i, claim in enumerate(claims):
        pod.claim_ref(f"c{i}", claim, mode=versions.STRUCTURED)
    return pod.obj()


FIRST_AVAILABLE = (
    make_structured_claim("claim")
    .uid("claim-uid")
    .first_available("gpu", make_subrequest("two", "gpu", count=2), make_subrequest("one", "gpu"))
    .obj()
)
INVALID = _slice(
    {"name": "dev-0", "consumesCounters": [{"counterSet": "nope", "counters": {}}]}, pool="bad"
)
COUNTING = [make_device(f"dev-{i}").consumes("set", mem="4Gi") for i in range(3)]
MULTI = make_device("dev-0").allow_multiple_allocations()
TAKEN = ["dev-0", "dev-1"]

CASES = [
    # (slices, allocated devices, the pod's claims, expected, answered without the search;
    # None: the search raised, which counts no steps either way)
    pytest.param([_slice(*_devices(2))], TAKEN, [_claim()], CANNOT, True, id="no-free"),
    pytest.param(
        [_slice(*_devices(2))],
        TAKEN,
        [FIRST_AVAILABLE],
        CANNOT,
        True,
        id="no-free-first-available",
    ),
    pytest.param(
        [_slice(*_devices(2))],
        TAKEN,
        [_claim(mode="All")],
        CANNOT,
        True,
        id="no-free-all-mode",
    ),
    pytest.param(
        [_slice(*_devices(2))],
        TAKEN,
        [_claim(selectors=[NO_KEY])],
        CANNOT,
        True,
        id="no-free-selector-errors-on-allocated-only",
    ),
    pytest.param(
        [_slice(*_devices(3))], ["dev-0"], [_claim(count=3)], CANNOT, True, id="fewer-than-count"
    ),
    pytest.param(
        [_slice(*_devices(2))],
        ["dev-0"],
        [_claim(), _claim("claim-2")],
        CANNOT,
        True,
        id="fewer-than-two-claims",
    ),
    pytest.param(
        [_slice(*_devices(3))], ["dev-0"], [_claim(count=2)], SUCCESS, False, id="enough-free"
    ),
    pytest.param(
        [_slice(*_devices(3))],
        ["dev-0"],
        [_claim(count=3, selectors=[NO_KEY])],
        Status.error("claim default/claim: selector #0: CEL runtime error: no such key: model"),
        None,
        id="fewer-than-count-selector-error-on-free",
    ),
    pytest.param(
        [_slice(*_devices(2))],
        TAKEN,
        [_claim(admin_access=True)],
        SUCCESS,
        False,
        id="admin-access-uses-allocated",
    ),
    pytest.param(
        [_slice(*_devices(2)), INVALID],
        TAKEN,
        [_claim()],
        Status.unresolvable("invalid resource pools were encountered"),
        True,
        id="no-free-invalid-pool",
    ),
    pytest.param(
        [_slice(*COUNTING, counters={"mem": "8Gi"})],
        [],
        [_claim(count=3)],
        CANNOT,
        False,
        id="counters-short-free-devices-enough",
    ),
    pytest.param(
        [_slice(*COUNTING, counters={"mem": "16Gi"})],
        ["dev-0", "dev-1", "dev-2"],
        [_claim()],
        CANNOT,
        True,
        id="counters-no-free",
    ),
    pytest.param(
        [_slice(*_devices(2))], TAKEN, [_claim(count=-1)], CANNOT, False, id="negative-count"
    ),
    pytest.param(
        [_slice(MULTI)],
        [],
        [_claim(), _claim("claim-2")],
        SUCCESS,
        False,
        id="multi-allocatable-shared-by-two-claims",
    ),
]


def _plugin(slices: list[Obj], claims: list[Obj]) -> tuple[StructuredDynamicResources, ClaimStore]:
    store = ClaimStore(claims)
    return StructuredDynamicResources(
        structured_handle(store, classes=[CLASS], slices=slices)
    ), store


def _filter(
    plugin: StructuredDynamicResources, pod: Obj, *, skip: bool = True
) -> tuple[Status, int]:
    """Filter on node-a: the status and the allocator's search steps."""
    state = CycleState()
    info = pod_info(pod)
    assert plugin.pre_filter(state, info) == SUCCESS
    allocator = state.read(STRUCTURED_STATE_KEY).allocator
    assert allocator is not None
    allocator.skip_full_nodes = skip
    status = plugin.filter(state, info, node_infos(NODE)[0])
    return status, allocator.steps


@pytest.mark.parametrize(("slices", "allocated", "claims", "expected", "skipped"), CASES)
def test_filter_without_search_answers_as_the_search(
    slices: list[Obj],
    allocated: list[str],
    claims: list[Obj],
    expected: Status,
    skipped: bool | None,
) -> None:
    others = [_allocated(d) for d in allocated]
    pod = _pod(*(c["metadata"]["name"] for c in claims))
    with_skip, steps = _filter(_plugin(slices, [*others, *claims])[0], pod)
    without, searched = _filter(_plugin(slices, [*others, *claims])[0], pod, skip=False)
    assert with_skip == without == expected
    if skipped is not None:
        assert (steps == 0) is skipped
        assert searched > 0


async def test_free_counts_follow_in_flight_and_deallocation() -> None:
    claims = [_allocated("dev-0"), _claim(), _claim("claim-2")]
    plugin, store = _plugin([_slice(*_devices(2))], claims)
    state = CycleState()
    first = _pod("claim")
    assert plugin.pre_filter(state, pod_info(first)) == SUCCESS
    assert plugin.filter(state, pod_info(first), node_infos(NODE)[0]) == SUCCESS
    assert (await plugin.reserve(state, pod_info(first), "node-a")) == SUCCESS
    second = make_pod("pod-2").uid("pod-2-uid").obj()
    second["spec"]["resourceClaims"] = [{"name": "c0", "resourceClaimName": "claim-2"}]
    # dev-1 is in flight for the first pod: nothing is free for the second.
    assert _filter(plugin, second) == (CANNOT, 0)
    await plugin.unreserve(state, pod_info(first), "node-a")
    assert _filter(plugin, second)[0] == SUCCESS
    # The allocated claim's deallocation frees dev-0 as well.
    assert (await plugin.reserve(state, pod_info(first), "node-a")) == SUCCESS
    assert _filter(plugin, second) == (CANNOT, 0)
    freed = deep_copy(store.stored[("default", "other-dev-0-")])
    freed.pop("status")
    store.stored[("default", "other-dev-0-")] = freed
    store.sync()
    status, _ = _filter(plugin, second)
    assert status == SUCCESS


async def test_later_cycles_reuse_the_answers_of_unchanged_nodes() -> None:
    node_b = make_node("node-b").obj()
    slices = [
        _slice(*_devices(2)),
        make_resource_slice("node-b", DRIVER, "node-b").node("node-b").device("dev-0").obj(),
    ]
    plugin, _ = _plugin(slices, [_claim(), _claim("claim-2")])
    nodes = node_infos(NODE, node_b)
    first, second = _pod("claim"), make_pod("pod-2").uid("pod-2-uid").obj()
    second["spec"]["resourceClaims"] = [{"name": "c0", "resourceClaimName": "claim-2"}]
    state = CycleState()
    assert plugin.pre_filter(state, pod_info(first)) == SUCCESS
    assert [plugin.filter(state, pod_info(first), n) for n in nodes] == [SUCCESS, SUCCESS]
    assert (await plugin.reserve(state, pod_info(first), "node-a")) == SUCCESS
    # The next cycle: node-b's answer is reused, node-a (dev-0 now in flight) is asked anew.
    state = CycleState()
    assert plugin.pre_filter(state, pod_info(second)) == SUCCESS
    assert [plugin.filter(state, pod_info(second), n) for n in nodes] == [SUCCESS, SUCCESS]
    data = state.read(STRUCTURED_STATE_KEY)
    assert data.allocator is not None and data.allocator.slices.fit_hits == 1
    picked = {n: data.results[n].results()[0]["devices"]["results"] for n in ("node-a", "node-b")}
    assert picked == {
        "node-a": [device_result("gpu", "dev-1", DRIVER, "node-a")],
        "node-b": [device_result("gpu", "dev-0", DRIVER, "node-b")],
    }
