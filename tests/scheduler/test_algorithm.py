"""The scheduling algorithm: FitError wording, feasible-node search limit, cache accounting."""

from __future__ import annotations

import pytest

from draplane.scheduler.algorithm import (
    Diagnosis,
    FitError,
    SchedulingAlgorithm,
    num_feasible_nodes_to_find,
)
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.config import PluginRef, PluginSet, Profile
from draplane.scheduler.framework import Code, CycleState, Handle, PodInfo, Status
from draplane.scheduler.plugins import names
from draplane.scheduler.plugins.registry import new_in_tree_registry
from draplane.scheduler.runtime import Framework, merge
from draplane.testing.builders import make_node, make_pod
from draplane.testing.fake_plugins import FakeFilterPlugin, registry_of


@pytest.mark.parametrize(
    ("diagnosis", "message"),
    [
        pytest.param(
            Diagnosis(
                node_to_status={
                    "a": Status.unschedulable("Insufficient cpu", "Insufficient memory"),
                    "b": Status.unschedulable("Insufficient cpu"),
                    "c": Status.unresolvable("node(s) were unschedulable"),
                }
            ),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
            "2 Insufficient cpu.",
            id="histogram",
        ),
        pytest.param(
            Diagnosis(
                pre_filter_msg="unallocated immediate resourceclaim",
                post_filter_msg="no new claims to deallocate",
            ),
            "0/3 nodes are available: unallocated immediate resourceclaim. "
            "no new claims to deallocate.",
            id="prefilter-and-postfilter",
        ),
    ],
)
def test_fit_error_message(diagnosis: Diagnosis, message: str) -> None:
    err = FitError(pod_info=PodInfo(make_pod().obj()), num_all_nodes=3, diagnosis=diagnosis)
    assert str(err) == message


@pytest.mark.parametrize(
    ("nodes", "percentage", "want"),
    [
        pytest.param(50, 0, 50, id="small-cluster-all"),
        pytest.param(500, 0, 230, id="adaptive-500"),
        pytest.param(5000, 0, 500, id="adaptive-5000"),
        pytest.param(500, 100, 500, id="all-configured"),
        pytest.param(200, 10, 100, id="at-least-100"),
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, want: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == want


def make_algorithm(fake: FakeFilterPlugin) -> SchedulingAlgorithm:
    registry = new_in_tree_registry()
    merge(registry, registry_of([fake]))
    profile = Profile(
        plugins={
            "multiPoint": PluginSet(disabled=(names.DYNAMIC_RESOURCES,)),
            "filter": PluginSet(enabled=(PluginRef("FakeFilter"),)),
        }
    )
    framework = Framework(
        profile=profile, registry=registry, handle=Handle(client=None, listers={})
    )  # type: ignore[arg-type]
    return SchedulingAlgorithm(framework=framework)


def test_filter_stops_after_enough_feasible_nodes_and_rotates() -> None:
    fake = FakeFilterPlugin()
    algorithm = make_algorithm(fake)
    cache = SchedulerCache()
    for i in range(500):
        cache.add_node(make_node(f"n-{i:03d}").obj())
    pod_info = PodInfo(make_pod().obj())
    algorithm.schedule_pod(CycleState(), pod_info, cache.node_infos())
    algorithm.schedule_pod(CycleState(), pod_info, cache.node_infos())
    assert fake.calls == 2 * 230


def test_all_nodes_rejected_raises_fit_error_naming_the_plugin() -> None:
    algorithm = make_algorithm(FakeFilterPlugin(failed_nodes={"a": Code.UNSCHEDULABLE}))
    cache = SchedulerCache()
    cache.add_node(make_node("a").obj())
    with pytest.raises(FitError) as info:
        algorithm.schedule_pod(CycleState(), PodInfo(make_pod().obj()), cache.node_infos())
    assert info.value.diagnosis.unschedulable_plugins == {"FakeFilter"}
    assert str(info.value) == "0/1 nodes are available: 1 injected filter status for a."


def test_cache_counts_assumed_pods_until_forgotten() -> None:
    cache = SchedulerCache()
    cache.add_node(make_node("a").obj())
    pod_info = PodInfo(make_pod("p").requests(cpu="1").obj())
    cache.assume_pod(pod_info, "a")
    node = cache.node_info("a")
    assert node is not None
    assert (node.requested.milli_cpu, node.requested.pods, cache.is_assumed(pod_info.uid)) == (
        1000,
        1,
        True,
    )
    bound = make_pod("p").uid(pod_info.uid).requests(cpu="1").node("a").obj()
    cache.add_pod(bound)  # the informer confirms the binding
    cache.forget_pod(pod_info)  # no-op once confirmed
    assert (node.requested.milli_cpu, cache.is_assumed(pod_info.uid)) == (1000, False)
    cache.remove_pod(bound)
    assert (node.requested.milli_cpu, node.requested.pods) == (0, 0)
