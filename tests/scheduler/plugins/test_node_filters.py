"""Filter plugins other than DynamicResources: one table of pod, node and expected Status."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api.meta import Obj
from draplane.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    NodeInfo,
    PodInfo,
    QueuedPodInfo,
    Status,
)
from draplane.scheduler.plugins.nodeaffinity import NodeAffinity
from draplane.scheduler.plugins.nodename import NodeName
from draplane.scheduler.plugins.noderesources import NodeResourcesFit
from draplane.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from draplane.scheduler.plugins.queuesort import PrioritySort
from draplane.scheduler.plugins.tainttoleration import TaintToleration
from draplane.testing.apiobjects import StaticLister
from draplane.testing.builders import from_pod, make_node, make_pod
from draplane.testing.structured import make_device_class

POD = make_pod("p").obj()
GPU, IMPLICIT_GPU = "example.com/gpu", "deviceclass.resource.kubernetes.io/gpu"
NO_GPU, NO_NIC = (Status.unschedulable(f"Insufficient {r}") for r in (GPU, "example.com/nic"))
GPU_POD = make_pod("other").requests(**{GPU: "2"}).obj()
FIT = NodeResourcesFit()
FIT_DRA = NodeResourcesFit(
    classes=StaticLister(
        [make_device_class("gpu", "gpu.example.com").extended_resource_name(GPU).obj()]
    )
)


def with_gpus(count: str) -> Obj:
    return make_node("n").capacity(cpu="4", memory="32Gi", pods="110", **{GPU: count}).obj()


NODE = make_node("n").label("zone", "a").obj()
UAU = Status.unresolvable


def with_tolerations(*tolerations: Obj) -> Obj:
    return from_pod(POD).set("spec.tolerations", list(tolerations)).obj()


def with_affinity(*expressions: Obj) -> Obj:
    return (
        from_pod(POD)
        .set(
            "spec.affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
                    }
                }
            },
        )
        .obj()
    )


@dataclass(frozen=True)
class Case:
    plugin: object
    pod: Obj
    node: Obj
    want: Status
    pods_on_node: tuple[Obj, ...] = ()


TAINTED = make_node("n").taint("gpu", "NoSchedule", "true").obj()
CASES = [
    pytest.param(Case(NodeUnschedulable(), POD, NODE, SUCCESS), id="schedulable-node"),
    pytest.param(
        Case(
            NodeUnschedulable(),
            POD,
            make_node("n").unschedulable().obj(),
            UAU("node(s) were unschedulable"),
        ),
        id="cordoned-node",
    ),
    pytest.param(
        Case(
            NodeUnschedulable(),
            with_tolerations(
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoSchedule",
                }
            ),
            make_node("n").unschedulable().obj(),
            SUCCESS,
        ),
        id="cordoned-node-tolerated",
    ),
    pytest.param(Case(NodeName(), POD, NODE, SUCCESS), id="no-node-name"),
    pytest.param(
        Case(
            NodeName(),
            from_pod(POD).node("other").obj(),
            NODE,
            UAU("node(s) didn't match the requested node name"),
        ),
        id="other-node-name",
    ),
    pytest.param(
        Case(TaintToleration(), POD, TAINTED, UAU("node(s) had untolerated taint {gpu: true}")),
        id="untolerated-taint",
    ),
    pytest.param(
        Case(
            TaintToleration(),
            with_tolerations(
                {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
            ),
            TAINTED,
            SUCCESS,
        ),
        id="tolerated-taint",
    ),
    pytest.param(
        Case(TaintToleration(), POD, make_node("n").taint("x", "PreferNoSchedule").obj(), SUCCESS),
        id="prefer-no-schedule-ignored",
    ),
    pytest.param(
        Case(NodeAffinity(), from_pod(POD).node_selector({"zone": "a"}).obj(), NODE, SUCCESS),
        id="node-selector-match",
    ),
    pytest.param(
        Case(
            NodeAffinity(),
            from_pod(POD).node_selector({"zone": "b"}).obj(),
            NODE,
            UAU("node(s) didn't match Pod's node affinity/selector"),
        ),
        id="node-selector-mismatch",
    ),
    pytest.param(
        Case(
            NodeAffinity(),
            with_affinity({"key": "zone", "operator": "In", "values": ["a", "c"]}),
            NODE,
            SUCCESS,
        ),
        id="required-affinity-match",
    ),
    pytest.param(
        Case(
            NodeAffinity(),
            with_affinity({"key": "zone", "operator": "NotIn", "values": ["a"]}),
            NODE,
            UAU("node(s) didn't match Pod's node affinity/selector"),
        ),
        id="required-affinity-mismatch",
    ),
    pytest.param(
        Case(NodeResourcesFit(), from_pod(POD).requests(cpu="3").obj(), NODE, SUCCESS), id="fits"
    ),
    pytest.param(
        Case(
            NodeResourcesFit(),
            from_pod(POD).requests(cpu="3", memory="40Gi").obj(),
            NODE,
            Status.unschedulable("Insufficient memory"),
        ),
        id="insufficient-memory",
    ),
    pytest.param(
        Case(
            NodeResourcesFit(),
            from_pod(POD).requests(cpu="2").obj(),
            NODE,
            Status.unschedulable("Insufficient cpu"),
            pods_on_node=(make_pod("a").requests(cpu="2500m").obj(),),
        ),
        id="assumed-pod-counts",
    ),
    pytest.param(
        Case(
            NodeResourcesFit(),
            POD,
            make_node("n").capacity(cpu="4", memory="1Gi", pods="1").obj(),
            Status.unschedulable("Too many pods"),
            pods_on_node=(make_pod("a").obj(),),
        ),
        id="too-many-pods",
    ),
    *(
        pytest.param(
            Case(fit, from_pod(POD).requests(**{res: want}).obj(), node, status, pods), id=i
        )
        for i, fit, res, want, node, status, pods in [
            ("extended-fits", FIT, GPU, "2", with_gpus("2"), SUCCESS, ()),
            ("extended-insufficient", FIT, GPU, "2", with_gpus("1"), NO_GPU, ()),
            ("extended-used-by-pods", FIT, GPU, "2", with_gpus("3"), NO_GPU, (GPU_POD,)),
            ("extended-missing", FIT, GPU, "1", NODE, NO_GPU, ()),
            ("extended-dra-serves-it", FIT_DRA, GPU, "2", NODE, SUCCESS, ()),
            ("extended-device-plugin-wins", FIT_DRA, GPU, "2", with_gpus("1"), NO_GPU, ()),
            ("extended-class-name", FIT_DRA, IMPLICIT_GPU, "1", NODE, SUCCESS, ()),
            ("extended-not-served", FIT_DRA, "example.com/nic", "1", NODE, NO_NIC, ()),
        ]
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_filter(case: Case) -> None:
    pod_info = PodInfo(case.pod)
    node = NodeInfo(case.node)
    for other in case.pods_on_node:
        node.add_pod(PodInfo(other))
    state = CycleState()
    pre_filter = getattr(case.plugin, "pre_filter", None)
    if pre_filter is not None and pre_filter(state, pod_info) == SKIP:
        got = SUCCESS
    else:
        got = case.plugin.filter(state, pod_info, node)  # type: ignore[attr-defined]
    assert got == case.want


def test_least_allocated_prefers_emptier_nodes() -> None:
    plugin = NodeResourcesFit()
    empty, busy = NodeInfo(make_node("empty").obj()), NodeInfo(make_node("busy").obj())
    busy.add_pod(PodInfo(make_pod("a").requests(cpu="2", memory="16Gi").obj()))
    pod_info = PodInfo(make_pod("p").requests(cpu="1", memory="8Gi").obj())
    scores = [plugin.score(CycleState(), pod_info, n) for n in (empty, busy)]
    assert scores == [(75 + 75) // 2, (25 + 25) // 2]


def test_priority_sort() -> None:
    sort = PrioritySort()
    high = QueuedPodInfo(PodInfo(from_pod(POD).priority(5).obj()), timestamp=2.0)
    early = QueuedPodInfo(PodInfo(POD), timestamp=1.0)
    late = QueuedPodInfo(PodInfo(POD), timestamp=3.0)
    assert [sort.less(high, early), sort.less(early, late), sort.less(late, early)] == [
        True,
        True,
        False,
    ]
