"""Deployment status and conditions (sync.go calculateStatus, progress.go), pure.

`rollout_status(d, all_rss, new_rs, now)` is the status the controller writes after a rollout
step: the replica sums, `Available`, `Progressing` (created, updated, complete or timed out,
when `progressDeadlineSeconds` is set) and `ReplicaFailure` copied from the ReplicaSets.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time, parse_time
from draplane.controllers.deployment_scale import available, total_replicas
from draplane.controllers.deployment_util import (
    MAX_INT32,
    max_unavailable,
    replicas,
    spec,
    status,
)

AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
RS_CREATE_ERROR = "ReplicaSetCreateError"


def has_progress_deadline(d: Obj) -> bool:
    deadline = spec(d).get("progressDeadlineSeconds")
    return deadline is not None and int(deadline) != MAX_INT32


def condition(obj_status: Obj, type_: str) -> Obj | None:
    for cond in obj_status.get("conditions") or []:
        if cond.get("type") == type_:
            return dict(cond)
    return None


def new_condition(type_: str, status_: str, reason: str, message: str, now: datetime) -> Obj:
    stamp = format_time(now)
    return {
        "type": type_,
        "status": status_,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def set_condition(obj_status: Obj, cond: Obj) -> None:
    """SetDeploymentCondition: no change for the same status and reason; a same-status change
    keeps lastTransitionTime."""
    current = condition(obj_status, cond["type"])
    if current is not None and current["status"] == cond["status"]:
        if current.get("reason") == cond.get("reason"):
            return
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(obj_status, cond["type"])
    obj_status.setdefault("conditions", []).append(cond)


def remove_condition(obj_status: Obj, type_: str) -> None:
    conditions = [c for c in obj_status.get("conditions") or [] if c.get("type") != type_]
    if conditions:
        obj_status["conditions"] = conditions
    else:
        obj_status.pop("conditions", None)


def calculate_status(d: Obj, all_rss: Sequence[Obj], new_rs: Obj | None, now: datetime) -> Obj:
    avail = sum(available(rs) for rs in all_rss)
    total = total_replicas(all_rss)
    old = status(d)
    out: Obj = {}
    for field, value in (
        ("observedGeneration", int(meta.metadata(d).get("generation") or 0)),
        ("replicas", sum(int(status(rs).get("replicas") or 0) for rs in all_rss)),
        ("updatedReplicas", int(status(new_rs).get("replicas") or 0) if new_rs else 0),
        ("readyReplicas", sum(int(status(rs).get("readyReplicas") or 0) for rs in all_rss)),
        ("availableReplicas", avail),
        ("unavailableReplicas", max(0, total - avail)),
    ):
        if value:
            out[field] = value
    if old.get("conditions"):
        out["conditions"] = [dict(c) for c in old["conditions"]]
    if old.get("collisionCount") is not None:
        out["collisionCount"] = old["collisionCount"]
    if avail >= replicas(d) - max_unavailable(d):
        cond = new_condition(
            AVAILABLE,
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
        )
    else:
        cond = new_condition(
            AVAILABLE,
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    set_condition(out, cond)
    return out


def deployment_complete(d: Obj, new_status: Obj) -> bool:
    want = replicas(d)
    return (
        int(new_status.get("updatedReplicas") or 0) == want
        and int(new_status.get("replicas") or 0) == want
        and int(new_status.get("availableReplicas") or 0) == want
        and int(new_status.get("observedGeneration") or 0)
        >= int(meta.metadata(d).get("generation") or 0)
    )


def deployment_progressing(d: Obj, new_status: Obj) -> bool:
    old = status(d)

    def n(s: Obj, field: str) -> int:
        return int(s.get(field) or 0)

    old_old = n(old, "replicas") - n(old, "updatedReplicas")
    new_old = n(new_status, "replicas") - n(new_status, "updatedReplicas")
    return (
        n(new_status, "updatedReplicas") > n(old, "updatedReplicas")
        or new_old < old_old
        or n(new_status, "readyReplicas") > n(old, "readyReplicas")
        or n(new_status, "availableReplicas") > n(old, "availableReplicas")
    )


def deployment_timed_out(d: Obj, new_status: Obj, now: datetime) -> bool:
    if not has_progress_deadline(d):
        return False
    cond = condition(new_status, PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = parse_time(str(cond.get("lastUpdateTime")))
    return since + timedelta(seconds=int(spec(d)["progressDeadlineSeconds"])) < now


def rollout_status(d: Obj, all_rss: Sequence[Obj], new_rs: Obj | None, now: datetime) -> Obj:
    """syncRolloutStatus's new status."""
    new_status = calculate_status(d, all_rss, new_rs, now)
    if not has_progress_deadline(d):
        remove_condition(new_status, PROGRESSING)
    current = condition(new_status, PROGRESSING)
    complete = (
        int(new_status.get("replicas") or 0) == int(new_status.get("updatedReplicas") or 0)
        and current is not None
        and current.get("reason") == NEW_RS_AVAILABLE
    )
    if has_progress_deadline(d) and not complete:
        rs_name = meta.name(new_rs) if new_rs is not None else ""
        if deployment_complete(d, new_status):
            message = f'ReplicaSet "{rs_name}" has successfully progressed.'
            if new_rs is None:
                message = f'Deployment "{meta.name(d)}" has successfully progressed.'
            set_condition(
                new_status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, message, now)
            )
        elif deployment_progressing(d, new_status):
            message = f'ReplicaSet "{rs_name}" is progressing.'
            if new_rs is None:
                message = f'Deployment "{meta.name(d)}" is progressing.'
            cond = new_condition(PROGRESSING, "True", RS_UPDATED, message, now)
            if current is not None:
                if current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime")
                remove_condition(new_status, PROGRESSING)
            set_condition(new_status, cond)
        elif deployment_timed_out(d, new_status, now):
            message = f'ReplicaSet "{rs_name}" has timed out progressing.'
            if new_rs is None:
                message = f'Deployment "{meta.name(d)}" has timed out progressing.'
            set_condition(new_status, new_condition(PROGRESSING, "False", TIMED_OUT, message, now))
    failures = replica_failures(all_rss, new_rs, now)
    if failures:
        set_condition(new_status, failures)
    else:
        remove_condition(new_status, REPLICA_FAILURE)
    return new_status


def replica_failures(all_rss: Sequence[Obj], new_rs: Obj | None, now: datetime) -> Obj | None:
    """A ReplicaFailure condition from the new ReplicaSet, else from any ReplicaSet."""
    candidates = [new_rs] if new_rs is not None else []
    for rs in [*candidates, *all_rss]:
        cond = condition(status(rs), REPLICA_FAILURE)
        if cond is not None:
            return {
                "type": REPLICA_FAILURE,
                "status": cond.get("status", "True"),
                "lastUpdateTime": cond.get("lastTransitionTime") or format_time(now),
                "lastTransitionTime": cond.get("lastTransitionTime") or format_time(now),
                "reason": cond.get("reason", ""),
                "message": cond.get("message", ""),
            }
    return None


def requeue_after(d: Obj, new_status: Obj, now: datetime) -> float | None:
    """When to look again for a progress deadline (requeueStuckDeployment), or None."""
    cond = condition(new_status, PROGRESSING)
    if not has_progress_deadline(d) or cond is None:
        return None
    if cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT):
        return None
    if deployment_complete(d, new_status):
        return None
    since = parse_time(str(cond.get("lastUpdateTime")))
    deadline = since + timedelta(seconds=int(spec(d)["progressDeadlineSeconds"]))
    after = (deadline - now).total_seconds()
    return 0.0 if after < 1 else after + 1


def paused_condition(d: Obj, now: datetime) -> Obj | None:
    """The status with the paused or resumed condition, or None when it needs no change."""
    if not has_progress_deadline(d):
        return None
    current = condition(status(d), PROGRESSING)
    if current is not None and current.get("reason") == TIMED_OUT:
        return None
    paused_exists = current is not None and current.get("reason") == PAUSED
    if spec(d).get("paused") and not paused_exists:
        cond = new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now)
    elif not spec(d).get("paused") and paused_exists:
        cond = new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now)
    else:
        return None
    new_status = meta.deep_copy(status(d))
    set_condition(new_status, cond)
    return new_status
