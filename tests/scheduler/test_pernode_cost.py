"""What keeps the per-node cost small without changing the outcome: a plugin whose PreFilter
returns Skip is left out of Filter; nextStartNodeIndex rotation; extended-resource sums kept
on the NodeInfo as pods come and go."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api.meta import Obj
from draplane.scheduler.algorithm import FitError, SchedulingAlgorithm
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.config import PluginSet, Profile
from draplane.scheduler.framework import CycleState, Handle, NodeInfo, PodInfo
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.nodeaffinity import ERR_REASON
from draplane.scheduler.plugins.registry import new_in_tree_registry
from draplane.scheduler.runtime import Framework
from draplane.testing.builders import from_pod, make_node, make_pod

GPU = "example.com/gpu"


def algorithm(percentage: int = 0) -> SchedulingAlgorithm:
    framework = Framework(
        profile=Profile(plugins={"multiPoint": PluginSet(disabled=(names.DYNAMIC_RESOURCES,))}),
        registry=new_in_tree_registry(),
        handle=Handle(client=None, listers={}),  # type: ignore[arg-type]
    )
    return SchedulingAlgorithm(framework=framework, percentage_of_nodes_to_score=percentage)


def zoned_cache() -> SchedulerCache:
    """Four nodes: a-0, a-1 in zone a, b-0, b-1 in zone b."""
    cache = SchedulerCache()
    for zone in "ab":
        for i in range(2):
            cache.add_node(make_node(f"{zone}-{i}").label("zone", zone).obj())
    return cache


def required_zone(*zones: str) -> Obj:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": list(zones)}]}
    affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    return from_pod(make_pod("p").obj()).set("spec.affinity", {"nodeAffinity": affinity}).obj()


@dataclass(frozen=True)
class SkipCase:
    pod: Obj
    skipped: bool
    """NodeAffinity's PreFilter returns Skip: its Filter must not run (it would fail, for it
    reads the PreFilter state that a skipping PreFilter never writes)."""
    zones: str
    """The zones the pod may land in; empty: no node fits."""


SKIP_CASES = [
    pytest.param(SkipCase(make_pod("p").obj(), True, "ab"), id="no-selector-no-affinity"),
    pytest.param(
        SkipCase(make_pod("p").node_selector({}).obj(), True, "ab"), id="empty-node-selector"
    ),
    pytest.param(
        SkipCase(
            from_pod(make_pod("p").obj())
            .set("spec.affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnored": []}})
            .obj(),
            True,
            "ab",
        ),
        id="affinity-without-required-terms",
    ),
    pytest.param(
        SkipCase(make_pod("p").node_selector({"zone": "b"}).obj(), False, "b"),
        id="node-selector",
    ),
    pytest.param(SkipCase(required_zone("a"), False, "a"), id="required-affinity"),
    pytest.param(
        SkipCase(make_pod("p").node_selector({"zone": "c"}).obj(), False, ""),
        id="node-selector-no-match",
    ),
]


@pytest.mark.parametrize("case", SKIP_CASES)
def test_pre_filter_skip_leaves_the_plugin_out_of_filter(case: SkipCase) -> None:
    cache = zoned_cache()
    state = CycleState()
    pod_info = PodInfo(case.pod)
    nodes = cache.node_infos()
    if not case.zones:
        with pytest.raises(FitError) as info:
            algorithm().schedule_pod(state, pod_info, nodes)
        diagnosis = info.value.diagnosis
        assert diagnosis.unschedulable_plugins == {names.NODE_AFFINITY}
        assert {n: (s.plugin, s.reasons) for n, s in diagnosis.node_to_status.items()} == {
            n.name: (names.NODE_AFFINITY, (ERR_REASON,)) for n in nodes
        }
    else:
        chosen = algorithm().schedule_pod(state, pod_info, nodes)
        assert chosen[0] in case.zones
    assert (names.NODE_AFFINITY in state.skip_filter_plugins) == case.skipped


@pytest.mark.parametrize(
    ("cordoned", "starts"),
    [
        # 200 nodes, 100 feasible wanted: each attempt starts where the last one stopped.
        pytest.param((), [0, 100, 0], id="all-feasible"),
        # The rejected nodes count as examined: 150 examined, the next starts at 150.
        pytest.param(tuple(range(50)), [0, 150, 100], id="rejections-count-as-examined"),
    ],
)
def test_next_start_node_index_rotates_over_examined_nodes(
    cordoned: tuple[int, ...], starts: list[int]
) -> None:
    cache = SchedulerCache()
    for i in range(200):
        cache.add_node(make_node(f"n-{i:03d}").unschedulable(i in cordoned).obj())
    alg = algorithm()
    seen = []
    for _ in starts:
        seen.append(alg._next_start)  # upstream: nextStartNodeIndex
        alg.schedule_pod(CycleState(), PodInfo(make_pod("p").obj()), cache.node_infos())
    assert seen == starts


@pytest.mark.parametrize(
    ("added", "removed", "want"),
    [
        pytest.param(("2", "1"), (), {GPU: 3}, id="summed"),
        pytest.param(("2", "1"), (0,), {GPU: 1}, id="one-removed"),
        pytest.param(("2",), (0,), {}, id="all-removed"),
        pytest.param((None, "1"), (0,), {GPU: 1}, id="pod-without-extended"),
    ],
)
def test_node_info_keeps_extended_resource_sums(
    added: tuple[str | None, ...], removed: tuple[int, ...], want: dict[str, int]
) -> None:
    node = NodeInfo(make_node("n").capacity(**{GPU: "4"}).obj())
    infos = []
    for i, amount in enumerate(added):
        builder = make_pod(f"p-{i}")
        infos.append(PodInfo((builder.requests(**{GPU: amount}) if amount else builder).obj()))
        node.add_pod(infos[-1])
    for index in removed:
        node.remove_pod(infos[index].uid)
    assert (node.requested_scalar, node.allocatable_scalar) == (want, {GPU: 4})
