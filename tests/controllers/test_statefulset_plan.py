"""StatefulSet sync decisions (statefulset_plan.plan) as tables: from the set, its pods and its
revisions, the ordered actions (`create x-0`, `delete x-2`...) and the status."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers import statefulset_plan as sp
from draplane.controllers.history import CONTROLLER_REVISION_HASH

from .workload_objects import member, revision, statefulset

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)

V1 = statefulset()
REV1 = revision(V1, "app:1")
REV2 = revision(V1, "app:2", 2)
ON_DELETE = {"type": "OnDelete"}


def partitioned(partition: int) -> Obj:
    return {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}


@dataclass(frozen=True)
class Case:
    set_: Obj
    pods: tuple[Obj, ...]
    actions: tuple[str, ...]
    current: Obj = field(default_factory=lambda: REV1)
    update: Obj = field(default_factory=lambda: REV1)
    status: dict[str, object] = field(default_factory=dict)


def pods(set_: Obj, *states: str, rev: Obj = REV1, start: int = 0) -> tuple[Obj, ...]:
    return tuple(member(set_, start + i, rev=rev, state=s) for i, s in enumerate(states))


CASES = [
    pytest.param(Case(V1, (), ("create x-0",)), id="ordered-scale-up-creates-one"),
    pytest.param(
        Case(V1, pods(V1, "ready"), ("create x-1",)), id="ordered-next-after-ready-predecessor"
    ),
    pytest.param(Case(V1, pods(V1, "pending"), ()), id="ordered-waits-for-pending"),
    pytest.param(Case(V1, pods(V1, "unready"), ()), id="ordered-waits-for-unready"),
    pytest.param(
        Case(statefulset(policy="Parallel"), (), ("create x-0", "create x-1", "create x-2")),
        id="parallel-scale-up-creates-all",
    ),
    pytest.param(
        Case(statefulset(replicas=1), pods(V1, "ready", "ready", "ready"), ("delete x-2",)),
        id="ordered-scale-down-highest-first",
    ),
    pytest.param(
        Case(statefulset(replicas=1), pods(V1, "ready", "ready", "terminating"), ()),
        id="ordered-scale-down-waits-for-terminating",
    ),
    pytest.param(
        Case(statefulset(replicas=1), pods(V1, "ready", "unready", "unready"), ()),
        id="ordered-scale-down-blocked-by-unhealthy-predecessor",
    ),
    pytest.param(
        Case(statefulset(replicas=1), pods(V1, "ready", "ready", "unready"), ("delete x-2",)),
        id="ordered-scale-down-deletes-first-unhealthy",
    ),
    pytest.param(
        Case(
            statefulset(replicas=1, policy="Parallel"),
            pods(V1, "ready", "ready", "unready"),
            ("delete x-2", "delete x-1"),
        ),
        id="parallel-scale-down-deletes-all",
    ),
    pytest.param(
        Case(V1, pods(V1, "ready", "failed", "ready"), ("delete x-1",)),
        id="failed-pod-deleted-then-recreated",
    ),
    pytest.param(
        Case(V1, pods(V1, "ready", "succeeded"), ("delete x-1",)), id="succeeded-pod-deleted"
    ),
    pytest.param(
        Case(V1, (pods(V1, "ready")[0], pods(V1, "ready", "ready")[1]), ("create x-2",)),
        id="deleted-pod-recreated-in-its-slot",
    ),
    pytest.param(
        Case(
            statefulset(start=5),
            pods(statefulset(start=5), "ready", start=5),
            ("create x-6",),
        ),
        id="ordinals-start",
    ),
    pytest.param(
        Case(V1, pods(V1, "ready", "ready", "ready"), ("delete x-2",), update=REV2),
        id="rolling-update-highest-first",
    ),
    pytest.param(
        Case(
            V1,
            (*pods(V1, "ready", "ready"), member(V1, 2, rev=REV2, state="pending")),
            (),
            update=REV2,
        ),
        id="rolling-update-waits-for-updated-pod",
    ),
    pytest.param(
        Case(
            V1,
            (*pods(V1, "ready"), member(V1, 1, rev=REV2), member(V1, 2, rev=REV2)),
            ("delete x-0",),
            update=REV2,
        ),
        id="rolling-update-continues-down",
    ),
    pytest.param(
        Case(
            statefulset(strategy=partitioned(2)),
            pods(V1, "ready", "ready", "ready"),
            ("delete x-2",),
            update=REV2,
        ),
        id="partition-updates-above",
    ),
    pytest.param(
        Case(
            statefulset(strategy=partitioned(2)),
            (*pods(V1, "ready", "ready"), member(V1, 2, rev=REV2)),
            (),
            update=REV2,
        ),
        id="partition-keeps-below",
    ),
    pytest.param(
        Case(statefulset(strategy=ON_DELETE), pods(V1, "ready", "ready", "ready"), (), update=REV2),
        id="on-delete-never-deletes",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_plan(case: Case) -> None:
    result = sp.plan(
        case.set_,
        list(case.pods),
        current=case.current,
        update=case.update,
        collision_count=0,
        now=NOW,
    )
    assert tuple(str(a) for a in result.actions) == case.actions


@pytest.mark.parametrize(
    ("set_", "ordinal", "expected"),
    [
        pytest.param(V1, 0, REV2, id="rolling-update-new-pods-at-update"),
        pytest.param(statefulset(strategy=partitioned(2)), 1, REV1, id="below-partition-current"),
        pytest.param(statefulset(strategy=partitioned(2)), 2, REV2, id="at-partition-update"),
        pytest.param(statefulset(strategy=ON_DELETE), 0, REV2, id="on-delete-update"),
        pytest.param(
            statefulset(strategy={"type": "RollingUpdate"}, status={"currentReplicas": 2}),
            1,
            REV1,
            id="no-rolling-block-below-current-replicas",
        ),
    ],
)
def test_new_pod_revision(set_: Obj, ordinal: int, expected: Obj) -> None:
    pod = sp.new_pod(set_, ordinal, current=REV1, update=REV2)
    assert meta.labels(pod)[CONTROLLER_REVISION_HASH] == meta.name(expected)
    image = "app:1" if expected is REV1 else "app:2"
    assert pod["spec"]["containers"][0]["image"] == image


def test_new_pod_identity() -> None:
    pod = sp.new_pod(statefulset(start=3), 4, current=REV1, update=REV1)
    assert meta.name(pod) == "x-4"
    assert "generateName" not in pod["metadata"]
    assert meta.labels(pod) == {
        "app": "x",
        sp.POD_NAME_LABEL: "x-4",
        sp.POD_INDEX_LABEL: "4",
        CONTROLLER_REVISION_HASH: meta.name(REV1),
    }
    assert pod["spec"]["hostname"] == "x-4"
    assert pod["spec"]["subdomain"] == "x"
    [ref] = meta.owner_references(pod)
    assert ref == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "x",
        "uid": "x-uid",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_identity_labels_restored_in_place() -> None:
    broken = member(V1, 0, rev=REV1)
    del broken["metadata"]["labels"][sp.POD_INDEX_LABEL]
    result = sp.plan(
        statefulset(replicas=1), [broken], current=REV1, update=REV1, collision_count=0, now=NOW
    )
    [action] = result.actions
    assert action.verb == "update"
    assert meta.labels(action.pod)[sp.POD_INDEX_LABEL] == "0"


def test_not_members_ignored() -> None:
    stranger = member(statefulset("y"), 0, rev=REV1)
    result = sp.plan(V1, [stranger], current=REV1, update=REV1, collision_count=0, now=NOW)
    assert [str(a) for a in result.actions] == ["create x-0"]
    assert result.status["replicas"] == 0


def test_set_being_deleted_only_gets_status() -> None:
    deleting = statefulset()
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    result = sp.plan(
        deleting, list(pods(V1, "ready")), current=REV1, update=REV1, collision_count=0, now=NOW
    )
    assert result.actions == []
    assert result.status["replicas"] == 1


@pytest.mark.parametrize(
    ("set_", "states", "update", "expected"),
    [
        pytest.param(
            V1,
            ("ready", "ready", "ready"),
            REV1,
            {
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "currentRevision": meta.name(REV1),
            },
            id="all-ready",
        ),
        pytest.param(
            V1,
            ("ready", "pending", "terminating"),
            REV1,
            {
                "replicas": 3,
                "readyReplicas": 2,
                "availableReplicas": 2,
                "currentReplicas": 2,
                "updatedReplicas": 2,
                "currentRevision": meta.name(REV1),
            },
            id="terminating-not-current",
        ),
        pytest.param(
            V1,
            ("ready", "ready", "ready"),
            REV2,
            {
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "currentReplicas": 2,
                "updatedReplicas": 0,
                "currentRevision": meta.name(REV1),
            },
            id="update-in-progress-one-deleted",
        ),
        pytest.param(
            statefulset(min_ready=3600),
            ("ready",),
            REV1,
            {
                "replicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 0,
                "currentReplicas": 1,
                "updatedReplicas": 1,
                "currentRevision": meta.name(REV1),
            },
            id="min-ready-seconds-not-yet-available",
        ),
    ],
)
def test_status(set_: Obj, states: tuple[str, ...], update: Obj, expected: Obj) -> None:
    result = sp.plan(
        set_, list(pods(V1, *states)), current=REV1, update=update, collision_count=0, now=NOW
    )
    got = {k: result.status[k] for k in expected}
    assert got == expected
    assert result.status["updateRevision"] == meta.name(update)


def test_rolling_update_completes_current_revision() -> None:
    result = sp.plan(
        V1,
        list(pods(V1, "ready", "ready", "ready", rev=REV2)),
        current=REV1,
        update=REV2,
        collision_count=0,
        now=NOW,
    )
    assert result.actions == []
    assert result.status["currentRevision"] == meta.name(REV2)
    assert result.status["currentReplicas"] == 3


def test_requeue_when_next_pod_becomes_available() -> None:
    pod = member(V1, 0, rev=REV1, ready_since="2026-01-01T00:09:50Z")
    result = sp.plan(
        statefulset(min_ready=30), [pod], current=REV1, update=REV1, collision_count=0, now=NOW
    )
    assert result.actions == []
    assert result.requeue_after == 20.0
