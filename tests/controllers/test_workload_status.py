"""Pure status tables: the ReplicaSet's deletion ranking and status, the Deployment's
status and its Available, Progressing and ReplicaFailure conditions."""

from __future__ import annotations

from datetime import UTC, datetime
from fnmatch import fnmatch

import pytest

from draplane.api.meta import Obj
from draplane.controllers.deployment_status import (
    calculate_status,
    condition,
    paused_condition,
    requeue_after,
    rollout_status,
)
from draplane.controllers.replicaset_util import pods_to_delete, replica_set_status

from .workloads import deployment, pod, replica_set

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
LATER = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        pytest.param(
            [pod("on-node", node="n1"), pod("unscheduled")], "unscheduled", id="unassigned first"
        ),
        pytest.param(
            [pod("running", node="n1"), pod("pending", node="n1", phase="Pending")],
            "pending",
            id="pending before running",
        ),
        pytest.param(
            [pod("ready", node="n1"), pod("unready", node="n1", ready=False)],
            "unready",
            id="not ready before ready",
        ),
        pytest.param(
            [pod("costly", node="n1", cost=10), pod("cheap", node="n1", cost=-5)],
            "cheap",
            id="lower deletion cost first",
        ),
        pytest.param(
            [pod("alone", node="n1"), pod("crowded", node="n2"), pod("crowded-2", node="n2")],
            "crowded*",
            id="crowded nodes first",
        ),
        pytest.param(
            [
                pod("early", node="n1", ready_at="2026-01-01T00:00:00Z"),
                pod("recent", node="n2", ready_at="2026-01-01T00:05:00Z"),
            ],
            "recent",
            id="more recently ready first",
        ),
        pytest.param(
            [pod("stable", node="n1"), pod("flaky", node="n2", restarts=4)],
            "flaky",
            id="more restarts first",
        ),
        pytest.param(
            [
                pod("old", node="n1", created="2026-01-01T00:00:00Z"),
                pod("new", node="n2", created="2026-01-01T00:01:00Z"),
            ],
            "new",
            id="newer first",
        ),
    ],
)
def test_scale_down_ranking(pods: list[Obj], expected: str) -> None:
    victims = pods_to_delete(pods, pods, 1)
    assert len(victims) == 1
    assert fnmatch(victims[0]["metadata"]["name"], expected)


@pytest.mark.parametrize(
    ("pods", "manage_error", "min_ready", "expected"),
    [
        pytest.param(
            [pod("a"), pod("b", ready=False), pod("c", labels={"app": "web", "x": "y"})],
            None,
            0,
            {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 2},
            id="counts",
        ),
        pytest.param(
            [pod("a", ready_at="2026-01-01T00:09:50Z"), pod("b")],
            None,
            30,
            {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 1},
            id="minReadySeconds",
        ),
        pytest.param([], ("FailedCreate", "quota"), 0, {"replicas": 0}, id="failure condition"),
    ],
)
def test_replica_set_status(
    pods: list[Obj], manage_error: tuple[str, str] | None, min_ready: int, expected: Obj
) -> None:
    rs = replica_set("web-1", 3)
    rs["metadata"]["generation"] = 2
    rs["spec"]["template"]["metadata"]["labels"] = {"app": "web"}
    rs["spec"]["minReadySeconds"] = min_ready
    rs["status"] = {}
    status = replica_set_status(rs, pods, manage_error, NOW)
    conditions = status.pop("conditions", [])
    assert status == {**expected, "observedGeneration": 2}
    assert [(c["type"], c["reason"], c["message"]) for c in conditions] == (
        [("ReplicaFailure", *manage_error)] if manage_error else []
    )


def test_replica_failure_is_removed_after_a_clean_manage() -> None:
    rs = replica_set("web-1", 0)
    rs["status"] = {"replicas": 0, "conditions": [{"type": "ReplicaFailure", "status": "True"}]}
    assert "conditions" not in replica_set_status(rs, [], None, NOW)


def test_deployment_status_sums_replica_sets() -> None:
    d = deployment(4, surge=1, unavailable=1)
    new = replica_set("new", 2, available=1, readyReplicas=2)
    old = replica_set("old", 3, available=3, readyReplicas=3)
    status = calculate_status(d, [new, old], new, NOW)
    available = condition(status, "Available")
    status.pop("conditions")
    assert status == {
        "observedGeneration": 1,
        "replicas": 5,
        "updatedReplicas": 2,
        "readyReplicas": 5,
        "availableReplicas": 4,
        "unavailableReplicas": 1,
    }
    assert available is not None and available["reason"] == "MinimumReplicasAvailable"


def _progressing(reason: str, status: str = "True", at: str = "2026-01-01T00:00:00Z") -> Obj:
    return {
        "type": "Progressing",
        "status": status,
        "reason": reason,
        "message": "",
        "lastUpdateTime": at,
        "lastTransitionTime": at,
    }


@pytest.mark.parametrize(
    ("old_status", "new_rs", "now", "expected"),
    [
        pytest.param(
            {
                "replicas": 3,
                "updatedReplicas": 3,
                "conditions": [_progressing("ReplicaSetUpdated")],
            },
            replica_set("new", 3, available=3),
            NOW,
            ("True", "NewReplicaSetAvailable", 'ReplicaSet "new" has successfully progressed.'),
            id="complete",
        ),
        pytest.param(
            {"conditions": [_progressing("NewReplicaSetCreated")]},
            replica_set("new", 3, available=1),
            NOW,
            ("True", "ReplicaSetUpdated", 'ReplicaSet "new" is progressing.'),
            id="progress",
        ),
        pytest.param(
            {
                "replicas": 3,
                "updatedReplicas": 3,
                "availableReplicas": 1,
                "conditions": [_progressing("ReplicaSetUpdated")],
            },
            replica_set("new", 3, available=1),
            LATER,
            ("False", "ProgressDeadlineExceeded", 'ReplicaSet "new" has timed out progressing.'),
            id="deadline exceeded",
        ),
        pytest.param(
            {
                "replicas": 3,
                "updatedReplicas": 3,
                "availableReplicas": 1,
                "conditions": [_progressing("ReplicaSetUpdated")],
            },
            replica_set("new", 3, available=1),
            NOW,
            ("True", "ReplicaSetUpdated", ""),
            id="no progress before the deadline: unchanged",
        ),
    ],
)
def test_progressing(
    old_status: Obj, new_rs: Obj, now: datetime, expected: tuple[str, str, str]
) -> None:
    d = deployment(3, status=old_status)
    status = rollout_status(d, [new_rs], new_rs, now)
    cond = condition(status, "Progressing")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == expected


def test_stuck_deployment_is_requeued_for_its_deadline() -> None:
    d = deployment(3, deadline=600)
    status = {"conditions": [_progressing("ReplicaSetUpdated", at="2026-01-01T00:05:00Z")]}
    assert requeue_after(d, status, NOW) == 301.0
    assert requeue_after(d, status, LATER) == 0.0


@pytest.mark.parametrize(
    ("paused", "current", "expected"),
    [
        pytest.param(True, None, "DeploymentPaused", id="pause"),
        pytest.param(False, "DeploymentPaused", "DeploymentResumed", id="resume"),
        pytest.param(True, "DeploymentPaused", None, id="already paused"),
        pytest.param(True, "ProgressDeadlineExceeded", None, id="timed out stays"),
    ],
)
def test_paused_condition(paused: bool, current: str | None, expected: str | None) -> None:
    status = {"conditions": [_progressing(current, "Unknown")]} if current else {}
    d = deployment(3, status=status, paused=paused)
    new_status = paused_condition(d, NOW)
    if expected is None:
        assert new_status is None
    else:
        assert new_status is not None
        cond = condition(new_status, "Progressing")
        assert cond is not None and (cond["status"], cond["reason"]) == ("Unknown", expected)


def test_replica_failure_is_copied_from_the_new_replica_set() -> None:
    new = replica_set("new", 3)
    new["status"]["conditions"] = [
        {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": "quota"}
    ]
    status = rollout_status(deployment(3), [new], new, NOW)
    cond = condition(status, "ReplicaFailure")
    assert cond is not None and (cond["reason"], cond["message"]) == ("FailedCreate", "quota")
