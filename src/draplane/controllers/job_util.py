"""The Job controller's pure helpers: spec defaults, pod predicates, completion indexes and their
interval strings, pods from the template, conditions and the failure back-off.

Everything here works on wire-shaped dicts and takes the time as an argument, so the tables in
the tests call it directly (pkg/controller/job: job_controller.go, indexed_job_utils.go,
backoff_utils.go, and pkg/controller/controller_utils.go).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time, parse_time

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
MAX_UNCOUNTED_PODS = 500
MAX_POD_CREATE_DELETE_PER_SYNC = 500
DEFAULT_BACKOFF_LIMIT = 6

COMPLETE = "Complete"
FAILED = "Failed"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
SUSPENDED = "Suspended"
REASON_BACKOFF_LIMIT = "BackoffLimitExceeded"
REASON_DEADLINE = "DeadlineExceeded"
REASON_COMPLETIONS_REACHED = "CompletionsReached"
REASON_MAX_FAILED_INDEXES = "MaxFailedIndexesExceeded"
REASON_FAILED_INDEXES = "FailedIndexes"
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
MESSAGE_BACKOFF_LIMIT = "Job has reached the specified backoff limit"
MESSAGE_DEADLINE = "Job was active longer than specified deadline"
MESSAGE_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"
MESSAGE_MAX_FAILED_INDEXES = "Job has exceeded the specified maximal number of failed indexes"
MESSAGE_FAILED_INDEXES = "Job has failed indexes"


# --- the spec, with the API server's defaults for fields a stored Job always has ----------


def spec(job: Obj) -> Obj:
    value: Obj = job.get("spec") or {}
    return value


def completions(job: Obj) -> int | None:
    value = spec(job).get("completions")
    return None if value is None else int(value)


def parallelism(job: Obj) -> int:
    value = spec(job).get("parallelism")
    return 1 if value is None else int(value)


def backoff_limit(job: Obj) -> int:
    value = spec(job).get("backoffLimit")
    if value is None:
        return 2**31 - 1 if backoff_limit_per_index(job) is not None else DEFAULT_BACKOFF_LIMIT
    return int(value)


def backoff_limit_per_index(job: Obj) -> int | None:
    value = spec(job).get("backoffLimitPerIndex")
    return None if value is None else int(value)


def is_indexed(job: Obj) -> bool:
    return spec(job).get("completionMode") == "Indexed"


def is_suspended(job: Obj) -> bool:
    return bool(spec(job).get("suspend"))


def only_replace_failed_pods(job: Obj) -> bool:
    """podReplacementPolicy Failed (the default with a podFailurePolicy)."""
    policy = spec(job).get("podReplacementPolicy")
    if policy is None:
        return spec(job).get("podFailurePolicy") is not None
    return bool(policy == "Failed")


def restart_policy(job: Obj) -> str:
    template_spec = (spec(job).get("template") or {}).get("spec") or {}
    return str(template_spec.get("restartPolicy") or "")


# --- conditions -----------------------------------------------------------------------------


def conditions(job: Obj) -> list[Obj]:
    value: list[Obj] = (job.get("status") or {}).get("conditions") or []
    return value


def find_condition(job: Obj, type_: str) -> Obj | None:
    for cond in conditions(job):
        if cond.get("type") == type_ and cond.get("status") == "True":
            return cond
    return None


def finished_type(job: Obj) -> str | None:
    """`Complete` or `Failed` when the Job has that condition True (IsJobFinished)."""
    for type_ in (COMPLETE, FAILED):
        if find_condition(job, type_) is not None:
            return type_
    return None


def new_condition(type_: str, status: str, reason: str, message: str, now: datetime) -> Obj:
    stamp = format_time(now)
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
    }


def ensure_condition(
    conds: list[Obj], type_: str, status: str, reason: str, message: str, now: datetime
) -> tuple[list[Obj], bool]:
    """ensureJobConditionStatus: set the condition, or add it unless it would be False."""
    out = [dict(c) for c in conds]
    for cond in out:
        if cond.get("type") != type_:
            continue
        if (cond.get("status"), cond.get("reason"), cond.get("message")) == (
            status,
            reason,
            message,
        ):
            return out, False
        if cond.get("status") != status:
            cond["lastTransitionTime"] = format_time(now)
        cond.update(status=status, reason=reason, message=message, lastProbeTime=format_time(now))
        return out, True
    if status == "False":
        return out, False
    out.append(new_condition(type_, status, reason, message, now))
    return out, True


# --- pods -----------------------------------------------------------------------------------


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_terminal(pod: Obj) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_active(pod: Obj) -> bool:
    """Not terminal and not being deleted (controller.IsPodActive)."""
    return not is_terminal(pod) and not meta.deletion_timestamp(pod)


def is_terminating(pod: Obj) -> bool:
    return bool(meta.deletion_timestamp(pod)) and not is_terminal(pod)


def is_ready(pod: Obj) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def is_pod_failed(pod: Obj, job: Obj) -> bool:
    """Failed, or (unless only failed pods are replaced) deleted before it succeeded."""
    if phase(pod) == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return bool(meta.deletion_timestamp(pod)) and phase(pod) != "Succeeded"


def has_tracking_finalizer(pod: Obj) -> bool:
    return JOB_TRACKING_FINALIZER in meta.finalizers(pod)


def completion_index(pod: Obj) -> int | None:
    """The pod's completion index from its annotation (else its label), None when invalid."""
    value = meta.annotations(pod).get(COMPLETION_INDEX) or meta.labels(pod).get(COMPLETION_INDEX)
    if value is None or not value.isdigit():
        return None
    return int(value)


def valid_index(pod: Obj, job: Obj) -> int | None:
    index = completion_index(pod)
    total = completions(job)
    if index is None or total is None or index >= total:
        return None
    return index


def restart_count(pod: Obj) -> int:
    status = pod.get("status") or {}
    entries = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    return sum(int(entry.get("restartCount") or 0) for entry in entries)


def finish_time(pod: Obj, now: datetime) -> datetime:
    """When the pod finished (getFinishedTime): its last container termination, else when its
    Ready condition turned False on a terminal pod, else when its deletion began, else now."""
    status = pod.get("status") or {}
    stamps = [
        ((entry.get("state") or {}).get("terminated") or {}).get("finishedAt")
        for entry in status.get("containerStatuses") or []
    ]
    found = [parse_time(s) for s in stamps if s]
    if found:
        return max(found)
    for cond in status.get("conditions") or []:
        ready_false = cond.get("type") == "Ready" and cond.get("status") == "False"
        if ready_false and is_terminal(pod) and cond.get("lastTransitionTime"):
            return parse_time(str(cond["lastTransitionTime"]))
    deleted = meta.deletion_timestamp(pod)
    if deleted:
        grace = int(meta.metadata(pod).get("deletionGracePeriodSeconds") or 0)
        return parse_time(deleted) - timedelta(seconds=grace)
    return now


def _removal_rank(pod: Obj) -> tuple[int, int, int, int]:
    node = 1 if (pod.get("spec") or {}).get("nodeName") else 0
    pending = 0 if phase(pod) == "Pending" else 1
    return (node, pending, 1 if is_ready(pod) else 0, -restart_count(pod))


def pods_for_removal(pods: Iterable[Obj], count: int) -> list[Obj]:
    """activePodsForRemoval: unassigned, pending, not ready, more restarts, newer first."""
    if count <= 0:
        return []
    newest_first = sorted(
        pods, key=lambda p: str(meta.metadata(p).get("creationTimestamp") or ""), reverse=True
    )
    return sorted(newest_first, key=_removal_rank)[:count]


# --- completion indexes ---------------------------------------------------------------------


def parse_intervals(value: str | None, limit: int | None = None) -> set[int]:
    """`"0-3,5"` as a set of indexes (entries at or beyond `limit` are dropped)."""
    out: set[int] = set()
    for part in (value or "").split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            continue
        out.update(range(low, high + 1 if limit is None else min(high + 1, limit)))
    return out


def format_intervals(indexes: Iterable[int]) -> str:
    """A set of indexes as upstream's interval string: `"0-3,5,7-9"`."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def first_pending_indexes(
    total: int, count: int, *, succeeded: set[int], active: set[int], failed: set[int]
) -> list[int]:
    """The lowest `count` indexes below `total` that are neither succeeded, active nor failed."""
    out: list[int] = []
    index = 0
    while len(out) < count and index < total:
        if index not in succeeded and index not in active and index not in failed:
            out.append(index)
        index += 1
    return out


# --- pods from the template -----------------------------------------------------------------


def _with_index_env(container: Obj) -> None:
    env: list[Obj] = container.setdefault("env", [])
    if any(entry.get("name") == COMPLETION_INDEX_ENV for entry in env):
        return
    field_path = f"metadata.annotations['{COMPLETION_INDEX}']"
    env.append({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": field_path}}})


def pod_from_template(job: Obj, index: int | None, failures: int | None = None) -> Obj:
    """The pod the Job controller creates (GetPodFromTemplate plus the Job's additions)."""
    template = meta.deep_copy(spec(job).get("template") or {})
    template_md: Obj = template.get("metadata") or {}
    pod_spec: Obj = template.get("spec") or {}
    name = meta.name(job)
    md: Obj = {
        "namespace": meta.namespace(job),
        "generateName": f"{name}-" if index is None else f"{name}-{index}-",
        "labels": dict(template_md.get("labels") or {}),
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": name,
                "uid": meta.uid(job),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if template_md.get("annotations"):
        md["annotations"] = dict(template_md["annotations"])
    finalizers = list(template_md.get("finalizers") or [])
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    md["finalizers"] = finalizers
    if index is not None:
        md.setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
        if failures is not None:
            md["annotations"][INDEX_FAILURE_COUNT] = str(failures)
        md["labels"][COMPLETION_INDEX] = str(index)
        pod_spec["hostname"] = f"{name}-{index}"
        for container in [*(pod_spec.get("initContainers") or []), *pod_spec["containers"]]:
            _with_index_env(container)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": pod_spec}
