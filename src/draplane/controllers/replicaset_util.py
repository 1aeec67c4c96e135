"""The ReplicaSet controller's pure parts: which pods to delete first, and the status.

`deletion_order` is upstream's ActivePodsWithRanks ordering (earlier = deleted first):
unassigned before assigned; Pending, Unknown, Running; not ready before ready; lower
`controller.kubernetes.io/pod-deletion-cost`; more pods of the same owner on the node; more
recently ready; more restarts; newer. Upstream compares ready times and creation times in
log2 buckets; here they are compared exactly (docs/fidelity.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.clock import format_time, parse_time
from draplane.controllers.controller_utils import (
    is_pod_available,
    is_pod_ready,
    pod_phase,
    ready_since,
)

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
REPLICA_FAILURE = "ReplicaFailure"
BURST_REPLICAS = 500
"""At most this many creates or deletes per sync."""

_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: Obj) -> int:
    try:
        return int(meta.annotations(pod).get(POD_DELETION_COST, "0"))
    except ValueError:
        return 0


def _restarts(pod: Obj) -> tuple[int, int]:
    status = pod.get("status") or {}
    regular = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    sidecar = sum(
        int(c.get("restartCount") or 0) for c in status.get("initContainerStatuses") or []
    )
    return regular, sidecar


def _timestamp(value: datetime | None) -> float:
    return value.timestamp() if value is not None else math.inf


def _created(pod: Obj) -> float:
    stamp = meta.metadata(pod).get("creationTimestamp")
    return parse_time(str(stamp)).timestamp() if stamp else math.inf


def node_ranks(pods: Sequence[Obj], related: Sequence[Obj]) -> dict[str, int]:
    """For each pod's UID, how many of `related` (the active pods of every ReplicaSet with the
    same controlling owner) share its node."""
    per_node = Counter(
        str((p.get("spec") or {}).get("nodeName") or "")
        for p in related
        if (p.get("spec") or {}).get("nodeName")
    )
    return {
        meta.uid(p): per_node.get(str((p.get("spec") or {}).get("nodeName") or ""), 0) for p in pods
    }


def deletion_key(pod: Obj, rank: int) -> tuple[Any, ...]:
    """Sort key: pods that sort first are deleted first."""
    spec = pod.get("spec") or {}
    ready = is_pod_ready(pod)
    since = ready_since(pod) if ready else None
    regular, sidecar = _restarts(pod)
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_ORDER.get(pod_phase(pod), 0),
        1 if ready else 0,
        _deletion_cost(pod),
        -rank,
        -_timestamp(since) if ready else 0.0,
        -regular,
        -sidecar,
        -_created(pod),
        meta.uid(pod),
    )


def pods_to_delete(pods: Sequence[Obj], related: Sequence[Obj], count: int) -> list[Obj]:
    """The `count` pods to delete first (getPodsToDelete)."""
    if count >= len(pods):
        return list(pods)
    ranks = node_ranks(pods, related)
    ordered = sorted(pods, key=lambda p: deletion_key(p, ranks.get(meta.uid(p), 0)))
    return ordered[:count]


def _template_labels(rs: Obj) -> dict[str, str]:
    return dict(
        (((rs.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    )


def replica_set_status(
    rs: Obj, pods: Sequence[Obj], manage_error: tuple[str, str] | None, now: datetime
) -> Obj:
    """calculateStatus: counts over the claimed active pods, and the ReplicaFailure condition
    (`manage_error` is (reason, message) when manage failed)."""
    spec = rs.get("spec") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    wanted = _template_labels(rs).items()
    fully_labeled = ready = available = 0
    for p in pods:
        fully_labeled += wanted <= meta.labels(p).items()
        if is_pod_ready(p):
            ready += 1
            available += is_pod_available(p, min_ready, now)
    old = rs.get("status") or {}
    conditions = [dict(c) for c in old.get("conditions") or []]
    failure = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
    if manage_error is not None and failure is None:
        reason, message = manage_error
        conditions.append(
            {
                "type": REPLICA_FAILURE,
                "status": "True",
                "lastTransitionTime": format_time(now),
                "reason": reason,
                "message": message,
            }
        )
    elif manage_error is None and failure is not None:
        conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    status: Obj = {"replicas": len(pods)}
    for field, value in (
        ("fullyLabeledReplicas", fully_labeled),
        ("readyReplicas", ready),
        ("availableReplicas", available),
        ("observedGeneration", int(meta.metadata(rs).get("generation") or 0)),
    ):
        if value:
            status[field] = value
    if conditions:
        status["conditions"] = conditions
    return status
