"""DaemonSet decisions as tables: node eligibility and the default tolerations
(daemonset_nodes), manage, the rolling update steps and status (daemonset_plan)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers import daemonset_nodes as dn, daemonset_plan as dp
from draplane.testing.builders import make_node, make_pod
from draplane.testing.workloadbuilders import make_daemon_set

from .workload_objects import with_state

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
HASH = "newhash"
OLD = "oldhash"


def daemonset(*, strategy: Obj | None = None, **tmpl_spec: object) -> Obj:
    builder = (
        make_daemon_set("d")
        .uid("d-uid")
        .set("metadata.generation", 2)
        .selector({"app": "x"})
        .template_labels({"app": "x"})
        .set(
            "spec.updateStrategy",
            strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        )
    )
    for key, value in tmpl_spec.items():
        builder.pod_spec(key, value)
    return builder.obj()


DS = daemonset()


def node(name: str, *taints: tuple[str, str], **labels: str) -> Obj:
    builder = make_node(name)
    for key, effect in taints:
        builder.taint(key, effect)
    for key, value in labels.items():
        builder.label(key, value)
    return builder.obj()


def pod(name: str, node_name: str, *, hash_: str = HASH, state: str = "ready", at: int = 0) -> Obj:
    builder = (
        make_pod(name)
        .label("app", "x")
        .label("controller-revision-hash", hash_)
        .owner("DaemonSet", "d", "d-uid", api_version="apps/v1")
        .node(node_name)
        .set("metadata.creationTimestamp", f"2026-01-01T00:0{at}:00Z")
    )
    return with_state(builder, state).obj()


# -- eligibility ------------------------------------------------------------------------------

ELIGIBILITY = [
    pytest.param(DS, node("n"), (True, True), id="plain-node"),
    pytest.param(DS, node("n", ("example.com/gpu", "NoSchedule")), (False, True), id="no-schedule"),
    pytest.param(DS, node("n", ("example.com/gpu", "NoExecute")), (False, False), id="no-execute"),
    pytest.param(
        DS, node("n", ("example.com/gpu", "PreferNoSchedule")), (True, True), id="prefer-ignored"
    ),
    pytest.param(
        DS,
        node("n", ("node.kubernetes.io/unschedulable", "NoSchedule")),
        (True, True),
        id="unschedulable-tolerated",
    ),
    pytest.param(
        DS,
        node("n", ("node.kubernetes.io/not-ready", "NoExecute")),
        (True, True),
        id="not-ready-tolerated",
    ),
    pytest.param(
        DS,
        node("n", ("node.kubernetes.io/network-unavailable", "NoSchedule")),
        (False, True),
        id="network-unavailable-not-tolerated",
    ),
    pytest.param(
        daemonset(hostNetwork=True),
        node("n", ("node.kubernetes.io/network-unavailable", "NoSchedule")),
        (True, True),
        id="network-unavailable-tolerated-with-host-network",
    ),
    pytest.param(
        daemonset(tolerations=[{"key": "example.com/gpu", "operator": "Exists"}]),
        node("n", ("example.com/gpu", "NoExecute")),
        (True, True),
        id="template-toleration",
    ),
    pytest.param(daemonset(nodeSelector={"gpu": "yes"}), node("n"), (False, False), id="selector"),
    pytest.param(
        daemonset(nodeSelector={"gpu": "yes"}), node("n", gpu="yes"), (True, True), id="selected"
    ),
    pytest.param(daemonset(nodeName="other"), node("n"), (False, False), id="other-node-name"),
    pytest.param(
        daemonset(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["m"]}
                                ]
                            }
                        ]
                    }
                }
            }
        ),
        node("n"),
        (False, False),
        id="required-affinity",
    ),
]


@pytest.mark.parametrize(("ds", "n", "expected"), ELIGIBILITY)
def test_should_run(ds: Obj, n: Obj, expected: tuple[bool, bool]) -> None:
    assert dn.should_run(n, ds) == expected


def test_default_tolerations_added_and_replaced() -> None:
    spec = {
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 30,
            },
            {"key": "example.com/gpu", "operator": "Exists"},
        ]
    }
    got = dn.with_daemon_tolerations(spec)
    assert got == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "example.com/gpu", "operator": "Exists"},
        *(
            {"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": e}
            for k, e in (
                ("unreachable", "NoExecute"),
                ("disk-pressure", "NoSchedule"),
                ("memory-pressure", "NoSchedule"),
                ("pid-pressure", "NoSchedule"),
                ("unschedulable", "NoSchedule"),
            )
        ),
    ]


def test_new_pod_placement() -> None:
    ds = daemonset(nodeSelector={"gpu": "yes"})
    new = dn.new_pod(ds, ds["spec"]["template"], "n1", HASH)
    assert new["metadata"]["generateName"] == "d-"
    assert meta.labels(new) == {
        "app": "x",
        "controller-revision-hash": HASH,
        "pod-template-generation": "2",
    }
    assert "nodeName" not in new["spec"]
    assert new["spec"]["affinity"]["nodeAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
            ]
        }
    }
    assert dn.target_node(new) == "n1"
    assert new["spec"]["nodeSelector"] == {"gpu": "yes"}


# -- manage and rolling update ---------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    ds: Obj
    nodes: tuple[Obj, ...]
    pods: tuple[Obj, ...]
    create_on: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    rolling_create_on: tuple[str, ...] = ()
    rolling_delete: tuple[str, ...] = ()
    status: dict[str, int] = field(default_factory=dict)


N3 = (node("n1"), node("n2"), node("n3"))
SURGE = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
CASES = [
    pytest.param(Case(DS, N3, (), create_on=("n1", "n2", "n3")), id="one-pod-per-node"),
    pytest.param(
        Case(DS, N3, (pod("a", "n1"), pod("b", "n2")), create_on=("n3",)), id="node-added"
    ),
    pytest.param(
        Case(DS, N3[:2], (pod("a", "n1"), pod("b", "n2"), pod("c", "n3"))),
        id="node-removed-scheduled-pod-stays",
    ),
    pytest.param(
        Case(
            DS,
            N3[:2],
            (pod("a", "n1"), pod("b", "n2"), pod("c", "", state="pending")),
            delete=("c",),
        ),
        id="node-removed-unscheduled-pod-deleted",
    ),
    pytest.param(
        Case(
            DS,
            (node("n1"), node("n2", ("example.com/gpu", "NoExecute"))),
            (pod("a", "n1"), pod("b", "n2")),
            delete=("b",),
        ),
        id="tainted-no-execute-evicts",
    ),
    pytest.param(
        Case(
            DS,
            (node("n1"), node("n2", ("example.com/gpu", "NoSchedule"))),
            (pod("a", "n1"), pod("b", "n2")),
        ),
        id="tainted-no-schedule-keeps",
    ),
    pytest.param(
        Case(
            DS, (node("n1"), node("n2", ("example.com/gpu", "NoSchedule"))), (), create_on=("n1",)
        ),
        id="tainted-no-schedule-no-new-pod",
    ),
    pytest.param(
        Case(DS, N3[:1], (pod("a", "n1", at=1), pod("b", "n1", at=2)), delete=("b",)),
        id="extra-pod-beyond-oldest",
    ),
    pytest.param(
        Case(DS, N3[:1], (pod("a", "n1", state="failed"),), failed=("a",)),
        id="failed-pod-deleted",
    ),
    pytest.param(
        Case(DS, N3[:1], (pod("a", "n1", state="succeeded"),), delete=("a",)),
        id="succeeded-pod-deleted",
    ),
    pytest.param(
        Case(DS, N3[:1], (pod("a", "n1", state="terminating"),)),
        id="terminating-pod-waits",
    ),
    pytest.param(
        Case(
            DS,
            N3,
            (pod("a", "n1", hash_=OLD), pod("b", "n2", hash_=OLD), pod("c", "n3", hash_=OLD)),
            rolling_delete=("a",),
        ),
        id="max-unavailable-1-deletes-one-old",
    ),
    pytest.param(
        Case(
            DS,
            N3,
            (pod("a", "n1", state="pending"), pod("b", "n2", hash_=OLD), pod("c", "n3", hash_=OLD)),
            rolling_delete=(),
        ),
        id="max-unavailable-waits-for-new-pod",
    ),
    pytest.param(
        Case(
            DS,
            N3,
            (pod("a", "n1"), pod("b", "n2", hash_=OLD, state="unready"), pod("c", "n3", hash_=OLD)),
            rolling_delete=("b", "c"),
        ),
        # As upstream: an unavailable old pod is replaced without counting against the budget.
        id="unavailable-old-pod-replaced-outside-budget",
    ),
    pytest.param(
        Case(
            daemonset(
                strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}}
            ),
            N3,
            (pod("a", "n1", hash_=OLD), pod("b", "n2", hash_=OLD), pod("c", "n3", hash_=OLD)),
            rolling_delete=("a", "b"),
        ),
        id="percentage-rounds-up",
    ),
    pytest.param(
        Case(
            daemonset(strategy=SURGE),
            N3,
            (pod("a", "n1", hash_=OLD), pod("b", "n2", hash_=OLD), pod("c", "n3", hash_=OLD)),
            rolling_create_on=("n1",),
        ),
        id="surge-adds-new-pod-beside-old",
    ),
    pytest.param(
        Case(
            daemonset(strategy=SURGE),
            N3[:1],
            (pod("a", "n1", hash_=OLD, at=1), pod("b", "n1", at=2)),
            delete=("a",),
        ),
        id="surge-old-deleted-once-new-available",
    ),
    pytest.param(
        Case(
            daemonset(strategy=SURGE),
            N3[:1],
            (pod("a", "n1", hash_=OLD, at=1), pod("b", "n1", at=2, state="pending")),
        ),
        id="surge-waits-for-new-pod",
    ),
    pytest.param(
        Case(
            daemonset(strategy={"type": "OnDelete"}),
            N3[:1],
            (pod("a", "n1", hash_=OLD),),
        ),
        id="on-delete-keeps-old",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_manage_and_rolling_update(case: Case) -> None:
    nodes = list(case.nodes)
    by_node = dp.pods_by_node(list(case.pods))
    changes = dp.manage(case.ds, nodes, by_node, HASH, NOW)
    assert tuple(changes.create_on) == case.create_on
    assert tuple(meta.name(p) for p in changes.delete) == case.delete
    assert tuple(meta.name(p) for _, p in changes.failed) == case.failed
    rolling = dp.rolling_update(case.ds, nodes, by_node, HASH, NOW)
    if dp.is_rolling(case.ds) and changes.empty():
        assert tuple(rolling.create_on) == case.rolling_create_on
        assert tuple(meta.name(p) for p in rolling.delete) == case.rolling_delete
    else:
        assert not case.rolling_create_on and not case.rolling_delete


STATUS = [
    pytest.param(
        N3,
        (pod("a", "n1"), pod("b", "n2", hash_=OLD), pod("c", "n3", state="pending")),
        {
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 3,
            "numberReady": 2,
            "numberAvailable": 2,
            "updatedNumberScheduled": 2,
            "numberMisscheduled": 0,
            "numberUnavailable": 1,
        },
        id="mixed",
    ),
    pytest.param(
        (node("n1"), node("n2", ("example.com/gpu", "NoSchedule"))),
        (pod("a", "n1"), pod("b", "n2")),
        {
            "desiredNumberScheduled": 1,
            "currentNumberScheduled": 1,
            "numberReady": 1,
            "numberAvailable": 1,
            "updatedNumberScheduled": 1,
            "numberMisscheduled": 1,
            "numberUnavailable": 0,
        },
        id="misscheduled",
    ),
    pytest.param(
        N3[:1],
        (pod("a", "n1", hash_=OLD, at=1), pod("b", "n1", state="pending", at=2)),
        {
            "desiredNumberScheduled": 1,
            "currentNumberScheduled": 1,
            "numberReady": 1,
            "numberAvailable": 1,
            "updatedNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberUnavailable": 0,
        },
        id="judged-by-oldest-pod",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "expected"), STATUS)
def test_status(nodes: tuple[Obj, ...], pods: tuple[Obj, ...], expected: Obj) -> None:
    assert dp.status(DS, list(nodes), dp.pods_by_node(list(pods)), HASH, NOW) == expected


@pytest.mark.parametrize(
    ("rolling", "desired", "expected"),
    [
        pytest.param({"maxUnavailable": 1, "maxSurge": 0}, 3, (0, 1), id="default"),
        pytest.param({"maxUnavailable": "34%", "maxSurge": 0}, 3, (0, 2), id="percent-up"),
        pytest.param({"maxUnavailable": 0, "maxSurge": "10%"}, 3, (1, 0), id="surge-percent-up"),
        pytest.param({"maxUnavailable": 0, "maxSurge": 0}, 3, (0, 1), id="both-zero-means-one"),
        pytest.param({"maxUnavailable": "10%", "maxSurge": 0}, 0, (0, 0), id="no-nodes"),
    ],
)
def test_surge_and_unavailable(rolling: Obj, desired: int, expected: tuple[int, int]) -> None:
    ds = daemonset(strategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    assert dp.surge_and_unavailable(ds, desired) == expected
