"""DynamicResources with extended resources backed by DRA (spec 4.9) at each extension point,
against the in-process 1.36 API: Filter allocates only where the node's allocatable lacks the
resource, Reserve keeps the devices in flight, PreBind creates and records the claim, Unreserve
deletes it, and a later cycle uses the recorded claim."""

from __future__ import annotations

from typing import Any

import pytest

from draplane.api import kinds, meta, versions
from draplane.api.meta import Obj
from draplane.dra import extended
from draplane.dra.resourcev1 import DEVICE_CLASSES, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.scheduler.framework import CycleState, Handle, NodeInfo, PodInfo, Status
from draplane.scheduler.plugins.dynamicresources import StructuredDynamicResources
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import make_node, make_pod
from draplane.testing.cluster import Cluster
from draplane.testing.structured import make_device_class, make_resource_slice

DRIVER = "driver.example.com"
GPU = "example.com/gpu"
CLASS = make_device_class("gpu", DRIVER).extended_resource_name(GPU).obj()
SLICES = [
    make_resource_slice(n, DRIVER, n).node(n).device("dev-0", "dev-1").obj()
    for n in ("node-a", "node-b")
]


class _Claims:
    """The claims as the API has them at the last `refresh` (the scheduler's informer)."""

    def __init__(self) -> None:
        self.objs: dict[tuple[str, str], Obj] = {}

    async def refresh(self, cluster: Cluster) -> None:
        listed = await cluster.client().list(RESOURCE_CLAIMS_V1)
        self.objs = {(meta.namespace(o), meta.name(o)): o for o in listed["items"]}

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self.objs.get((namespace, name))

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        return [o for (ns, _), o in self.objs.items() if namespace in (None, ns)]


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    return {"mode": versions.STRUCTURED}


def _plugin(cluster: Cluster, claims: _Claims) -> StructuredDynamicResources:
    listers = {
        RESOURCE_CLAIMS_V1: claims,
        DEVICE_CLASSES: StaticLister([CLASS]),
        RESOURCE_SLICES: StaticLister(SLICES),
    }
    return StructuredDynamicResources(Handle(cluster.client(), listers))


async def _pod(cluster: Cluster, name: str, count: str = "2") -> Obj:
    pod = make_pod(name).requests(**{GPU: count}).obj()
    pod["metadata"].pop("uid")
    pod["spec"]["containers"][0]["resources"]["limits"] = {GPU: count}
    return await cluster.client().create(kinds.PODS, pod, "default")


def _nodes(*, a_has_gpus: bool = False) -> list[NodeInfo]:
    a = make_node("node-a").capacity(**({GPU: "4"} if a_has_gpus else {})).obj()
    return [NodeInfo(a), NodeInfo(make_node("node-b").obj())]


def _filter(
    plugin: StructuredDynamicResources, pod: Obj, nodes: list[NodeInfo]
) -> tuple[CycleState, Status, dict[str, Status]]:
    state = CycleState()
    info = PodInfo(pod)
    pre = plugin.pre_filter(state, info)
    return state, pre, {n.name: plugin.filter(state, info, n) for n in nodes}


async def test_pre_bind_creates_records_and_reserves_the_claim(cluster: Cluster) -> None:
    claims = _Claims()
    plugin = _plugin(cluster, claims)
    pod = await _pod(cluster, "p")
    state, pre, filtered = _filter(plugin, pod, _nodes())
    assert pre.is_success and all(s.is_success for s in filtered.values())

    assert (await plugin.reserve(state, PodInfo(pod), "node-b")).is_success
    # From Reserve on the node's devices are in flight: another pod finds node-b full.
    other = await _pod(cluster, "other")
    _, _, other_filtered = _filter(plugin, other, _nodes())
    assert other_filtered["node-b"].reasons == ("cannot allocate all claims",)
    assert other_filtered["node-a"].is_success

    assert (await plugin.pre_bind(state, PodInfo(pod), "node-b")).is_success

    stored = await cluster.client().get(kinds.PODS, "p", "default")
    status = stored["status"]["extendedResourceClaimStatus"]
    claim = await cluster.client().get(RESOURCE_CLAIMS_V1, status["resourceClaimName"], "default")
    assert extended.is_extended_claim(claim)
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["pool"], r["device"]) for r in results] == [
        ("container-0-request-0", "node-b", "dev-0"),
        ("container-0-request-0", "node-b", "dev-1"),
    ]
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": meta.uid(pod)}
    ]
    assert plugin.tracker.in_flight_count() == 0

    # A later cycle of the pod uses the recorded claim: only its node fits.
    await claims.refresh(cluster)
    _, pre, again = _filter(plugin, stored, _nodes())
    assert pre.is_success
    assert again["node-b"].is_success
    assert again["node-a"].reasons == ("resourceclaim not available on the node",)


async def test_node_allocatable_serves_the_resource_through_its_device_plugin(
    cluster: Cluster,
) -> None:
    plugin = _plugin(cluster, _Claims())
    pod = await _pod(cluster, "p")
    state, _, filtered = _filter(plugin, pod, _nodes(a_has_gpus=True))
    assert all(s.is_success for s in filtered.values())

    assert (await plugin.reserve(state, PodInfo(pod), "node-a")).is_success
    assert (await plugin.pre_bind(state, PodInfo(pod), "node-a")).is_success

    stored = await cluster.client().get(kinds.PODS, "p", "default")
    assert "extendedResourceClaimStatus" not in stored["status"]
    assert (await cluster.client().list(RESOURCE_CLAIMS_V1, "default"))["items"] == []


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        pytest.param("2", {"node-a": True, "node-b": True}, id="fits"),
        pytest.param("3", {"node-a": False, "node-b": False}, id="too-many"),
    ],
)
async def test_filter_allocates_the_requested_count(
    cluster: Cluster, count: str, expected: dict[str, bool]
) -> None:
    plugin = _plugin(cluster, _Claims())
    pod = await _pod(cluster, "p", count)

    _, pre, filtered = _filter(plugin, pod, _nodes())

    assert pre.is_success
    assert {n: s.is_success for n, s in filtered.items()} == expected


async def test_pods_without_extended_resources_skip(cluster: Cluster) -> None:
    plugin = _plugin(cluster, _Claims())
    pod = make_pod("plain").requests(cpu="1", **{"example.com/unmapped": "1"}).obj()

    assert plugin.pre_filter(CycleState(), PodInfo(pod)).code == Status.skip().code


async def test_unreserve_after_pre_bind_deletes_the_claim(cluster: Cluster) -> None:
    plugin = _plugin(cluster, _Claims())
    pod = await _pod(cluster, "p")
    state, _, _ = _filter(plugin, pod, _nodes())
    await plugin.reserve(state, PodInfo(pod), "node-a")
    assert (await plugin.pre_bind(state, PodInfo(pod), "node-a")).is_success

    await plugin.unreserve(state, PodInfo(pod), "node-a")

    assert (await cluster.client().list(RESOURCE_CLAIMS_V1, "default"))["items"] == []
    stored = await cluster.client().get(kinds.PODS, "p", "default")
    assert "extendedResourceClaimStatus" not in stored["status"]
    assert plugin.tracker.in_flight_count() == 0
