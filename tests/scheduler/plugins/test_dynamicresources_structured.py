"""DynamicResources in the structured mode (resource.k8s.io/v1, spec section 4) at each extension
point: PreEnqueue/PreFilter lookups, Filter per node through the allocator, Reserve with in-flight
allocations, PreBind writes, Unreserve, PostFilter, the assume cache and the queueing hints.
"""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import versions
from draplane.api.kinds import NODES, PODS
from draplane.api.meta import Obj, deep_copy
from draplane.dra.resourcev1 import DELETE_PROTECTION_FINALIZER
from draplane.scheduler.algorithm import Diagnosis, FitError
from draplane.scheduler.framework import (
    GVK,
    SKIP,
    SUCCESS,
    ActionType,
    CycleState,
    QueueingHint,
    Status,
)
from draplane.scheduler.plugins.dynamicresources import (
    DynamicResources,
    StructuredDynamicResources,
    new,
)
from draplane.scheduler.plugins.dynamicresources.structured_hints import claim_event_key
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import make_node, make_pod
from draplane.testing.claimstore import ClaimStore, node_infos, pod_info, structured_handle
from draplane.testing.structured import (
    device_result,
    make_device_class,
    make_resource_slice,
    make_structured_claim,
    node_selector_for,
)

DRIVER = "driver.example.com"
NODE_A = make_node("node-a").obj()
NODE_B = make_node("node-b").obj()
NODES_AB = [NODE_A, NODE_B]
CLASS = make_device_class("gpu", DRIVER).obj()
SLICE_A = make_resource_slice("a", DRIVER, "node-a").node("node-a").device("dev-0", "dev-1").obj()
SLICE_B = make_resource_slice("b", DRIVER, "node-b").node("node-b").device("dev-0").obj()
SLICES = [SLICE_A, SLICE_B]


def _claim(name: str, count: int = 1) -> Any:
    return make_structured_claim(name).uid(f"{name}-uid").request("gpu", "gpu", count=count)


CLAIM = _claim("claim").obj()
CLAIM_2 = _claim("claim-2").obj()
TWO_DEVICES = _claim("claim", count=2).obj()
THREE_DEVICES = _claim("claim", count=3).obj()
ALLOCATION_A = {
    "devices": {"results": [device_result("gpu", "dev-0", DRIVER, "node-a")]},
    "nodeSelector": node_selector_for("node-a"),
}
ALLOCATED_A = _claim("claim").allocation(ALLOCATION_A).obj()


def _pod(name: str, *claims: str, **status: str | None) -> Obj:
    """A 1.36 pod: pod claims name their claim or template directly (no `source`)."""
    pod = make_pod(name).uid(f"{name}-uid")
    for i, claim in enumerate(claims):
        if claim.startswith("template:"):
            pod.claim_template(f"c{i}", claim.removeprefix("template:"), mode=versions.STRUCTURED)
        else:
            pod.claim_ref(f"c{i}", claim, mode=versions.STRUCTURED)
    for pod_claim, claim_name in status.items():
        pod.claim_status(pod_claim, claim_name)
    return pod.obj()


POD = _pod("pod", "claim")
POD_2 = _pod("pod-2", "claim-2")
POD_SHARING = _pod("pod-3", "claim")


def _reserved(claim: Obj, *pods: Obj, full: int = 0) -> Obj:
    out = deep_copy(claim)
    entries = [{"resource": "pods", "name": f"p{i}", "uid": f"p{i}"} for i in range(full)]
    entries += [
        {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}
        for p in pods
    ]
    out.setdefault("status", {})["reservedFor"] = entries
    return out


def _deleting(claim: Obj) -> Obj:
    out = deep_copy(claim)
    out["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return out


def _plugin(
    claims: list[Obj], *, classes: list[Obj] | None = None, slices: list[Obj] | None = None
) -> tuple[StructuredDynamicResources, ClaimStore]:
    store = ClaimStore(claims)
    plugin = StructuredDynamicResources(
        structured_handle(
            store,
            classes=[CLASS] if classes is None else classes,
            slices=SLICES if slices is None else slices,
        )
    )
    return plugin, store


def _filter_all(
    plugin: StructuredDynamicResources, pod: Obj, nodes: list[Obj] = NODES_AB
) -> tuple[CycleState, Status, dict[str, Status]]:
    state = CycleState()
    info = pod_info(pod)
    pre = plugin.pre_filter(state, info)
    statuses: dict[str, Status] = {}
    if pre.is_success:
        for node in node_infos(*nodes):
            statuses[node.name] = plugin.filter(state, info, node)
    return state, pre, statuses


async def _schedule(
    plugin: StructuredDynamicResources, pod: Obj, node: str
) -> tuple[CycleState, Status]:
    """PreFilter, Filter on every node, Reserve and PreBind on `node`."""
    state, pre, statuses = _filter_all(plugin, pod)
    assert pre.is_success and statuses[node].is_success, (pre, statuses)
    info = pod_info(pod)
    reserved = await plugin.reserve(state, info, node)
    if not reserved.is_success:
        return state, reserved
    return state, await plugin.pre_bind(state, info, node)


# -- PreEnqueue and PreFilter ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "claims", "expected"),
    [
        pytest.param(make_pod("plain").obj(), [], SKIP, id="no-claims"),
        pytest.param(
            POD,
            [],
            Status.unresolvable('resourceclaim.resource.k8s.io "claim" not found'),
            id="claim-missing",
        ),
        pytest.param(
            POD,
            [_deleting(CLAIM)],
            Status.unresolvable('resourceclaim "claim" is being deleted'),
            id="claim-being-deleted",
        ),
        pytest.param(
            _pod("pod", "template:tmpl"),
            [],
            Status.unresolvable('pod "default/pod": ResourceClaim not created yet'),
            id="generated-name-not-recorded",
        ),
        pytest.param(_pod("pod", "template:tmpl", c0=None), [], SKIP, id="no-claim-needed"),
        pytest.param(
            _pod("pod", "template:tmpl", c0="claim"),
            [CLAIM],
            Status.unresolvable(
                "ResourceClaim default/claim was not created for pod default/pod (pod is not owner)"
            ),
            id="generated-claim-not-owned",
        ),
    ],
)
def test_pre_enqueue_and_pre_filter_lookups(pod: Obj, claims: list[Obj], expected: Status) -> None:
    plugin, _ = _plugin(claims)
    enqueue = plugin.pre_enqueue(pod)
    assert enqueue == (SUCCESS if expected.code == SKIP.code else expected)
    assert plugin.pre_filter(CycleState(), pod_info(pod)) == expected


@pytest.mark.parametrize(
    ("claims", "classes", "expected"),
    [
        pytest.param([CLAIM], [CLASS], SUCCESS, id="unallocated"),
        pytest.param([ALLOCATED_A], [], SUCCESS, id="allocated-needs-no-class"),
        pytest.param(
            [CLAIM],
            [],
            Status.unresolvable("request gpu: device class gpu does not exist"),
            id="class-missing",
        ),
        pytest.param(
            [_reserved(ALLOCATED_A, full=256)],
            [CLASS],
            Status.unresolvable("resourceclaim in use"),
            id="reserved-for-full",
        ),
        pytest.param(
            [_reserved(ALLOCATED_A, POD, full=255)],
            [CLASS],
            SUCCESS,
            id="full-but-reserved-for-pod",
        ),
    ],
)
def test_pre_filter(claims: list[Obj], classes: list[Obj], expected: Status) -> None:
    plugin, _ = _plugin(claims, classes=classes)
    assert plugin.pre_filter(CycleState(), pod_info(POD)) == expected


# -- Filter --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        pytest.param([CLAIM], {"node-a": SUCCESS, "node-b": SUCCESS}, id="one-device-fits-both"),
        pytest.param(
            [TWO_DEVICES],
            {"node-a": SUCCESS, "node-b": Status.unresolvable("cannot allocate all claims")},
            id="two-devices-only-node-a",
        ),
        pytest.param(
            [THREE_DEVICES],
            {
                "node-a": Status.unresolvable("cannot allocate all claims"),
                "node-b": Status.unresolvable("cannot allocate all claims"),
            },
            id="unsatisfiable",
        ),
        pytest.param(
            [ALLOCATED_A],
            {
                "node-a": SUCCESS,
                "node-b": Status.unresolvable("resourceclaim not available on the node"),
            },
            id="allocated-node-selector",
        ),
        pytest.param(
            [TWO_DEVICES, _claim("other").allocation(ALLOCATION_A).obj()],
            {
                "node-a": Status.unresolvable("cannot allocate all claims"),
                "node-b": Status.unresolvable("cannot allocate all claims"),
            },
            id="devices-used-by-allocated-claim",
        ),
    ],
)
def test_filter_per_node(claims: list[Obj], expected: dict[str, Status]) -> None:
    plugin, _ = _plugin(claims)
    _, pre, statuses = _filter_all(plugin, POD)
    assert pre == SUCCESS
    assert statuses == expected


def test_filter_invalid_pool_is_per_node_reason() -> None:
    bad = (
        make_resource_slice("bad", DRIVER, "node-b")
        .node("node-b")
        .device({"name": "dev-0", "consumesCounters": [{"counterSet": "nope", "counters": {}}]})
        .obj()
    )
    plugin, _ = _plugin([THREE_DEVICES], slices=[SLICE_A, bad])
    _, _, statuses = _filter_all(plugin, POD)
    assert statuses["node-b"] == Status.unresolvable("invalid resource pools were encountered")
    diagnosis = Diagnosis(node_to_status=statuses)
    fit = FitError(pod_info=pod_info(POD), num_all_nodes=2, diagnosis=diagnosis)
    assert str(fit) == (
        "0/2 nodes are available: 1 cannot allocate all claims, "
        "1 invalid resource pools were encountered."
    )


# -- Reserve, PreBind, Unreserve -----------------------------------------------------------------


async def test_reserve_and_pre_bind_write_allocation_and_reservation() -> None:
    plugin, store = _plugin([CLAIM])
    _, status = await _schedule(plugin, POD, "node-a")
    assert status == SUCCESS
    claim = store.stored[("default", "claim")]
    assert claim["metadata"]["finalizers"] == [DELETE_PROTECTION_FINALIZER]
    assert claim["status"] == {
        "allocation": ALLOCATION_A,
        "reservedFor": [{"resource": "pods", "name": "pod", "uid": "pod-uid"}],
    }
    assert store.writes == ["update claim", "status claim"]
    assert plugin.tracker.in_flight_count() == 0


async def test_pre_bind_of_allocated_claim_only_reserves() -> None:
    plugin, store = _plugin([ALLOCATED_A])
    _, status = await _schedule(plugin, POD, "node-a")
    assert status == SUCCESS
    assert store.writes == ["status claim"]
    assert store.stored[("default", "claim")]["status"]["reservedFor"] == [
        {"resource": "pods", "name": "pod", "uid": "pod-uid"}
    ]


async def test_in_flight_allocation_hides_device_from_other_pods() -> None:
    one_device = [make_resource_slice("a", DRIVER, "node-a").node("node-a").device("dev-0").obj()]
    plugin, _ = _plugin([CLAIM, CLAIM_2], slices=one_device)
    state, _, statuses = _filter_all(plugin, POD, [NODE_A])
    assert statuses == {"node-a": SUCCESS}
    assert await plugin.reserve(state, pod_info(POD), "node-a") == SUCCESS
    _, _, statuses_2 = _filter_all(plugin, POD_2, [NODE_A])
    assert statuses_2 == {"node-a": Status.unresolvable("cannot allocate all claims")}
    await plugin.unreserve(state, pod_info(POD), "node-a")
    assert plugin.tracker.in_flight_count() == 0
    _, _, statuses_3 = _filter_all(plugin, POD_2, [NODE_A])
    assert statuses_3 == {"node-a": SUCCESS}


async def test_shared_claim_in_flight_for_another_pod() -> None:
    plugin, _ = _plugin([CLAIM])
    state, _, _ = _filter_all(plugin, POD)
    # The second pod filters before the first reserves: its Reserve finds the claim in flight.
    state_2, _, _ = _filter_all(plugin, POD_SHARING)
    assert await plugin.reserve(state, pod_info(POD), "node-a") == SUCCESS
    in_process = Status.unschedulable(
        "resource claim default/claim is in the process of being allocated"
    )
    assert await plugin.reserve(state_2, pod_info(POD_SHARING), "node-a") == in_process
    assert plugin.pre_filter(CycleState(), pod_info(POD_SHARING)) == in_process


async def test_assume_cache_keeps_allocation_until_informer_catches_up() -> None:
    one_device = [make_resource_slice("a", DRIVER, "node-a").node("node-a").device("dev-0").obj()]
    plugin, store = _plugin([CLAIM, CLAIM_2], slices=one_device)
    _, status = await _schedule(plugin, POD, "node-a")
    assert status == SUCCESS
    assert store.visible[("default", "claim")] is not store.stored[("default", "claim")]
    _, _, statuses = _filter_all(plugin, POD_2, [NODE_A])
    assert statuses == {"node-a": Status.unresolvable("cannot allocate all claims")}
    store.sync()
    assert plugin.tracker.get("claim", "default") is store.stored[("default", "claim")]


async def test_unreserve_after_pre_bind_removes_reservation() -> None:
    plugin, store = _plugin([CLAIM])
    state, status = await _schedule(plugin, POD, "node-a")
    assert status == SUCCESS
    await plugin.unreserve(state, pod_info(POD), "node-a")
    claim = store.stored[("default", "claim")]
    assert claim["status"] == {"allocation": ALLOCATION_A, "reservedFor": []}
    assert plugin.tracker.in_flight_count() == 0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            "delete",
            Status.error("claim default/claim got deleted in the meantime"),
            id="deleted",
        ),
        pytest.param(
            "allocate-elsewhere",
            Status.error("claim default/claim got allocated elsewhere in the meantime"),
            id="allocated-elsewhere",
        ),
        pytest.param("conflict", SUCCESS, id="conflict-retried"),
    ],
)
async def test_pre_bind_when_claim_changed(change: str, expected: Status) -> None:
    plugin, store = _plugin([CLAIM])
    state, _, _ = _filter_all(plugin, POD)
    info = pod_info(POD)
    assert await plugin.reserve(state, info, "node-b") == SUCCESS
    if change == "delete":
        store.delete("claim")
        store.sync()
    elif change == "allocate-elsewhere":
        store.stored[("default", "claim")] = _claim("claim").allocation(ALLOCATION_A).obj()
        store.sync()
    else:
        store.conflicts_left = 1
    assert await plugin.pre_bind(state, info, "node-b") == expected
    if expected.is_success:
        results = store.stored[("default", "claim")]["status"]["allocation"]["devices"]
        assert results == {"results": [device_result("gpu", "dev-0", DRIVER, "node-b")]}


# -- PostFilter ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "claims", "expected", "deallocated"),
    [
        pytest.param(
            POD,
            [ALLOCATED_A],
            Status.unschedulable("deallocation of ResourceClaim completed"),
            True,
            id="allocated-unreserved",
        ),
        pytest.param(
            POD,
            [_reserved(ALLOCATED_A, POD)],
            Status.unschedulable("deallocation of ResourceClaim completed"),
            True,
            id="reserved-only-for-pod",
        ),
        pytest.param(
            POD,
            [_reserved(ALLOCATED_A, POD_2)],
            Status.unschedulable("still not schedulable"),
            False,
            id="reserved-by-other",
        ),
        pytest.param(
            POD, [CLAIM], Status.unschedulable("still not schedulable"), False, id="unallocated"
        ),
        pytest.param(
            make_pod("plain").obj(),
            [],
            Status.unschedulable("no new claims to deallocate"),
            False,
            id="no-claims",
        ),
    ],
)
async def test_post_filter(
    pod: Obj, claims: list[Obj], expected: Status, deallocated: bool
) -> None:
    plugin, store = _plugin(claims)
    state, _, _ = _filter_all(plugin, pod, [NODE_B])
    assert await plugin.post_filter(state, pod_info(pod), {}) == expected
    if claims:
        status = store.stored[("default", "claim")].get("status") or {}
        assert ("allocation" not in status) is (deallocated or not claims[0].get("status"))


# -- queueing hints and events -------------------------------------------------------------------


def _with_finalizer(claim: Obj) -> Obj:
    out = deep_copy(claim)
    out["metadata"]["finalizers"] = [DELETE_PROTECTION_FINALIZER]
    return out


QUEUE = QueueingHint.QUEUE_IMMEDIATELY


@pytest.mark.parametrize(
    ("old", "new", "expected", "asks_every_pod"),
    [
        pytest.param(None, CLAIM, QUEUE, False, id="pods-claim-created"),
        pytest.param(None, CLAIM_2, QueueingHint.QUEUE_SKIP, False, id="unrelated-claim-created"),
        pytest.param(
            CLAIM, _with_finalizer(CLAIM), QueueingHint.QUEUE_SKIP, False, id="finalizer-only"
        ),
        pytest.param(
            ALLOCATED_A, _reserved(ALLOCATED_A, POD_2), QUEUE, False, id="reserved-for-changed"
        ),
        pytest.param(
            _claim("claim-2").allocation(ALLOCATION_A).obj(),
            CLAIM_2,
            QUEUE,
            True,
            id="other-claim-deallocated",
        ),
        pytest.param(
            _claim("claim-2").allocation(ALLOCATION_A).obj(),
            None,
            QUEUE,
            True,
            id="allocated-claim-deleted",
        ),
        pytest.param(CLAIM_2, None, QueueingHint.QUEUE_SKIP, False, id="unallocated-claim-deleted"),
    ],
)
def test_claim_hint(
    old: Obj | None, new: Obj | None, expected: QueueingHint, asks_every_pod: bool
) -> None:
    plugin, _ = _plugin([CLAIM, CLAIM_2])
    assert plugin.is_schedulable_after_claim_change(POD, old, new) == expected
    assert (claim_event_key(old, new) is None) is asks_every_pod


def test_events_registered() -> None:
    plugin, _ = _plugin([])
    events = {
        (e.event.resource, e.event.action_type): e.queueing_hint_fn is not None
        for e in plugin.events_to_register()
    }
    assert events == {
        (GVK.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE | ActionType.DELETE): True,
        (GVK.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE): False,
        (GVK.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE): False,
        (
            GVK.NODE,
            ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
        ): False,
    }


@pytest.mark.parametrize(
    ("structured", "kind"),
    [
        pytest.param(True, StructuredDynamicResources, id="1.36-listers"),
        pytest.param(False, DynamicResources, id="1.28-listers"),
    ],
)
def test_new_picks_mode_from_listers(structured: bool, kind: type) -> None:
    from draplane.api.kinds import POD_SCHEDULING_CONTEXTS, RESOURCE_CLAIMS, RESOURCE_CLASSES
    from draplane.scheduler.framework import Handle

    store = ClaimStore([])
    if structured:
        handle = structured_handle(store, classes=[], slices=[])
    else:
        empty = StaticLister([])
        listers = {
            rt: empty
            for rt in (PODS, NODES, RESOURCE_CLAIMS, RESOURCE_CLASSES, POD_SCHEDULING_CONTEXTS)
        }
        handle = Handle(structured_handle(store, classes=[], slices=[]).client, listers)
    assert type(new({}, handle)) is kind
