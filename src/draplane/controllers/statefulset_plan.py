"""One StatefulSet sync as a pure function (spec/workloads.md 3.1-3.3, 3.6): from the set, the
pods it controls and its current and update revisions, the ordered pod actions and the status.

`plan(...)` lays the pods out by ordinal, walks the replicas in ascending order (create the
missing, delete the terminal, fix identity labels), then the condemned ones in descending order,
then the RollingUpdate step; OrderedReady stops at the first pod that is not Running, Ready and
available, Parallel goes on. The controller (statefulset.py) executes the actions in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers import workload
from draplane.controllers.history import CONTROLLER_REVISION_HASH, template_of

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
ORDERED_READY = "OrderedReady"
PARALLEL = "Parallel"
ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"

_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")

Verb = Literal["create", "delete", "update"]


@dataclass(frozen=True)
class Action:
    verb: Verb
    pod: Obj

    def __str__(self) -> str:
        return f"{self.verb} {meta.name(self.pod)}"


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    status: Obj = field(default_factory=dict)
    requeue_after: float | None = None
    monotonic: bool = True


# -- identity --------------------------------------------------------------------------------


def parent_and_ordinal(pod: Obj) -> tuple[str, int] | None:
    found = _ORDINAL.match(meta.name(pod))
    if found is None:
        return None
    return found.group(1), int(found.group(2))


def ordinal_of(set_: Obj, pod: Obj) -> int | None:
    """The pod's ordinal if its name is `<set>-<int>` (membership), else None."""
    parsed = parent_and_ordinal(pod)
    if parsed is None or parsed[0] != meta.name(set_):
        return None
    return parsed[1]


def pod_name(set_: Obj, ordinal: int) -> str:
    return f"{meta.name(set_)}-{ordinal}"


def spec_of(set_: Obj) -> Obj:
    spec: Obj = set_.get("spec") or {}
    return spec


def start_ordinal(set_: Obj) -> int:
    return int((spec_of(set_).get("ordinals") or {}).get("start") or 0)


def desired_replicas(set_: Obj) -> int:
    replicas = spec_of(set_).get("replicas")
    return 1 if replicas is None else int(replicas)


def strategy(set_: Obj) -> Obj:
    found: Obj = spec_of(set_).get("updateStrategy") or {"type": ROLLING_UPDATE}
    return found


def partition(set_: Obj) -> int:
    rolling = strategy(set_).get("rollingUpdate")
    return int((rolling or {}).get("partition") or 0)


def pod_revision(pod: Obj) -> str:
    return meta.labels(pod).get(CONTROLLER_REVISION_HASH, "")


def identity_matches(set_: Obj, pod: Obj) -> bool:
    ordinal = ordinal_of(set_, pod)
    labels = meta.labels(pod)
    return (
        ordinal is not None
        and meta.namespace(pod) == meta.namespace(set_)
        and labels.get(POD_NAME_LABEL) == meta.name(pod)
        and labels.get(POD_INDEX_LABEL) == str(ordinal)
    )


def with_identity(set_: Obj, pod: Obj, ordinal: int) -> Obj:
    """The pod with its identity labels restored (updateIdentity)."""
    fixed = meta.deep_copy(pod)
    labels = fixed["metadata"].setdefault("labels", {})
    labels[POD_NAME_LABEL] = pod_name(set_, ordinal)
    labels[POD_INDEX_LABEL] = str(ordinal)
    return fixed


def new_pod(set_: Obj, ordinal: int, *, current: Obj, update: Obj) -> Obj:
    """newVersionedStatefulSetPod: the pod for `ordinal` from the revision it should run."""
    revision = update
    st = strategy(set_)
    start = start_ordinal(set_)
    rolling = st.get("rollingUpdate")
    current_replicas = int((set_.get("status") or {}).get("currentReplicas") or 0)
    # Upstream's operator precedence, kept on purpose (spec 3.3 [QUIRK]).
    if (
        st.get("type") == ROLLING_UPDATE and rolling is None and ordinal < start + current_replicas
    ) or (rolling is not None and ordinal < start + partition(set_)):
        revision = current
    pod = workload.pod_from_template(template_of(revision), set_)
    name = pod_name(set_, ordinal)
    pod["metadata"]["name"] = name
    labels = pod["metadata"].setdefault("labels", {})
    labels[POD_NAME_LABEL] = name
    labels[POD_INDEX_LABEL] = str(ordinal)
    labels[CONTROLLER_REVISION_HASH] = meta.name(revision)
    pod["spec"]["hostname"] = name
    service = spec_of(set_).get("serviceName")
    if service:
        pod["spec"]["subdomain"] = service
    return pod


# -- status ----------------------------------------------------------------------------------


def running_and_ready(pod: Obj) -> bool:
    return workload.phase(pod) == "Running" and workload.is_ready(pod)


def healthy(pod: Obj, min_ready: int, now: datetime) -> bool:
    return (
        running_and_ready(pod)
        and workload.is_available(pod, min_ready, now)
        and not workload.is_terminating(pod)
    )


def compute_status(
    set_: Obj, pods: list[Obj], *, current: str, update: str, collision_count: int, now: datetime
) -> Obj:
    min_ready = int(spec_of(set_).get("minReadySeconds") or 0)
    counts = {"replicas": 0, "ready": 0, "available": 0, "current": 0, "updated": 0}
    for pod in pods:
        created = workload.phase(pod) != ""
        counts["replicas"] += created
        if running_and_ready(pod):
            counts["ready"] += 1
            counts["available"] += workload.is_available(pod, min_ready, now)
        if created and not workload.is_terminating(pod):
            counts["current"] += pod_revision(pod) == current
            counts["updated"] += pod_revision(pod) == update
    status: Obj = {
        "observedGeneration": int(meta.metadata(set_).get("generation") or 0),
        "replicas": counts["replicas"],
        "readyReplicas": counts["ready"],
        "currentReplicas": counts["current"],
        "updatedReplicas": counts["updated"],
        "currentRevision": current,
        "updateRevision": update,
        "collisionCount": collision_count,
        "availableReplicas": counts["available"],
    }
    return status


def complete_rolling_update(set_: Obj, status: Obj) -> Obj:
    """When every pod is updated and ready, the update revision becomes the current one."""
    done = dict(status)
    if (
        strategy(set_).get("type") == ROLLING_UPDATE
        and done["updatedReplicas"] == done["replicas"]
        and done["readyReplicas"] == done["replicas"]
    ):
        done["currentReplicas"] = done["updatedReplicas"]
        done["currentRevision"] = done["updateRevision"]
    return done


def wire_status(status: Obj) -> Obj:
    """The status as apps/v1 serialises it: zero omitempty counters left out."""
    optional = ("readyReplicas", "currentReplicas", "updatedReplicas", "observedGeneration")
    return {k: v for k, v in status.items() if not (k in optional and not v) and v != ""}


# -- the sync --------------------------------------------------------------------------------


def plan(
    set_: Obj,
    pods: list[Obj],
    *,
    current: Obj,
    update: Obj,
    collision_count: int,
    now: datetime,
) -> Plan:
    """What one sync of `set_` does, given the pods it controls (already claimed)."""
    spec = spec_of(set_)
    start, count = start_ordinal(set_), desired_replicas(set_)
    monotonic = spec.get("podManagementPolicy", ORDERED_READY) != PARALLEL
    min_ready = int(spec.get("minReadySeconds") or 0)
    replicas: list[Obj | None] = [None] * count
    condemned: list[tuple[int, Obj]] = []
    for pod in pods:
        ordinal = ordinal_of(set_, pod)
        if ordinal is None:
            continue
        if start <= ordinal < start + count:
            replicas[ordinal - start] = pod
        else:
            condemned.append((ordinal, pod))
    condemned.sort(key=lambda item: item[0], reverse=True)
    members = [p for p in replicas if p is not None] + [p for _, p in condemned]
    status = compute_status(
        set_,
        members,
        current=meta.name(current),
        update=meta.name(update),
        collision_count=collision_count,
        now=now,
    )
    result = Plan(status=status, monotonic=monotonic)
    waits = [workload.available_in(p, min_ready, now) for p in members]
    result.requeue_after = min((w for w in waits if w is not None), default=None)
    if meta.deletion_timestamp(set_):
        result.status = complete_rolling_update(set_, status)
        return result
    _steps(set_, result, replicas, condemned, current=current, update=update, now=now)
    result.status = complete_rolling_update(set_, result.status)
    return result


def _steps(
    set_: Obj,
    result: Plan,
    replicas: list[Obj | None],
    condemned: list[tuple[int, Obj]],
    *,
    current: Obj,
    update: Obj,
    now: datetime,
) -> None:
    start = start_ordinal(set_)
    monotonic = result.monotonic
    min_ready = int(spec_of(set_).get("minReadySeconds") or 0)
    actions = result.actions
    unhealthy = sorted(
        (ordinal_of(set_, p) or 0, meta.name(p))
        for p in [*(p for p in replicas if p is not None), *(p for _, p in condemned)]
        if not healthy(p, min_ready, now)
    )
    first_unhealthy = unhealthy[0][1] if unhealthy else None
    for i, pod in enumerate(replicas):
        ordinal = start + i
        if pod is not None and workload.is_terminal(pod):
            if not meta.deletion_timestamp(pod):
                actions.append(Action("delete", pod))
            if monotonic:
                return
            # Recreated on a later sync, once the old object is gone.
            replicas[i] = _marked_deleted(pod)
            continue
        if pod is None:
            created = new_pod(set_, ordinal, current=current, update=update)
            actions.append(Action("create", created))
            if monotonic:
                return
            replicas[i] = created
            continue
        if monotonic and not healthy(pod, min_ready, now):
            return
        if not identity_matches(set_, pod):
            actions.append(Action("update", with_identity(set_, pod, ordinal)))
    for _, pod in condemned:
        if workload.is_terminating(pod):
            if monotonic:
                return
            continue
        if monotonic and meta.name(pod) != first_unhealthy and not healthy(pod, min_ready, now):
            return
        actions.append(Action("delete", pod))
        if monotonic:
            return
    if strategy(set_).get("type") == ON_DELETE:
        return
    for target in range(len(replicas) - 1, partition(set_) - 1, -1):
        pod = replicas[target]
        if pod is None:
            return
        if pod_revision(pod) != meta.name(update) and not workload.is_terminating(pod):
            actions.append(Action("delete", pod))
            result.status["currentReplicas"] = max(result.status["currentReplicas"] - 1, 0)
            return
        if not healthy(pod, min_ready, now):
            return


def _marked_deleted(pod: Obj) -> Obj:
    marked = meta.deep_copy(pod)
    marked["metadata"]["deletionTimestamp"] = "deleting"
    marked.setdefault("status", {})["phase"] = "Pending"
    return marked
