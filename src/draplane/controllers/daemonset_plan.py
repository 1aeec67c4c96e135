"""One DaemonSet sync as pure functions (spec/workloads.md 4.3-4.5): `manage` (which nodes
need a pod, which pods go), `rolling_update` (maxUnavailable / maxSurge steps) and `status`,
over the set, the nodes and the pods it controls grouped by target node."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers import workload
from draplane.controllers.daemonset_nodes import is_updated, should_run, target_node

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"
FAILED_DAEMON_POD = "FailedDaemonPod"
SUCCEEDED_DAEMON_POD = "SucceededDaemonPod"


@dataclass
class Changes:
    """Nodes that need a new pod, pods to delete, Failed pods to delete (per node, subject to
    the controller's back-off), and Normal events to record about the set."""

    create_on: list[str] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    failed: list[tuple[str, Obj]] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.create_on or self.delete or self.failed)


def spec_of(ds: Obj) -> Obj:
    spec: Obj = ds.get("spec") or {}
    return spec


def min_ready_seconds(ds: Obj) -> int:
    return int(spec_of(ds).get("minReadySeconds") or 0)


def _order(pod: Obj) -> tuple[str, int, str]:
    """podByCreationTimestampAndPhase: oldest first, then Running before others."""
    return (
        str(meta.metadata(pod).get("creationTimestamp") or ""),
        0 if workload.phase(pod) == "Running" else 1,
        meta.name(pod),
    )


def pods_by_node(pods: list[Obj]) -> dict[str, list[Obj]]:
    """getNodesToDaemonPods: pods by target node, without terminal pods being deleted."""
    grouped: dict[str, list[Obj]] = defaultdict(list)
    for pod in pods:
        if workload.is_terminal(pod) and meta.deletion_timestamp(pod):
            continue
        grouped[target_node(pod)].append(pod)
    return dict(grouped)


def allows_surge(ds: Obj) -> bool:
    return _scaled(_rolling(ds).get("maxSurge"), 100) > 0 and is_rolling(ds)


def is_rolling(ds: Obj) -> bool:
    kind = (spec_of(ds).get("updateStrategy") or {}).get("type", ROLLING_UPDATE)
    return bool(kind == ROLLING_UPDATE)


def _rolling(ds: Obj) -> Obj:
    found: Obj = (spec_of(ds).get("updateStrategy") or {}).get("rollingUpdate") or {}
    return found


def _scaled(value: object, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent rounding up (DaemonSets round both up)."""
    if value is None:
        return 0
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(str(value))


def surge_and_unavailable(ds: Obj, desired: int) -> tuple[int, int]:
    rolling = _rolling(ds)
    surge = _scaled(rolling.get("maxSurge"), desired)
    unavailable_raw = rolling.get("maxUnavailable", None if "maxSurge" in rolling else 1)
    unavailable = _scaled(unavailable_raw, desired)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def manage(
    ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str, now: datetime
) -> Changes:
    out = Changes()
    surge = allows_surge(ds)
    min_ready = min_ready_seconds(ds)
    node_names = {meta.name(n) for n in nodes}
    for node in sorted(nodes, key=meta.name):
        name = meta.name(node)
        run, keep = should_run(node, ds)
        pods = by_node.get(name)
        if run and pods is None:
            out.create_on.append(name)
        elif keep:
            running = []
            for pod in pods or []:
                if meta.deletion_timestamp(pod):
                    continue
                if workload.phase(pod) == "Failed":
                    out.failed.append((name, pod))
                elif workload.phase(pod) == "Succeeded":
                    message = (
                        f"Found succeeded daemon pod {meta.key(pod)} on node {name}, "
                        "will try to delete it"
                    )
                    out.events.append((SUCCEEDED_DAEMON_POD, message))
                    out.delete.append(pod)
                else:
                    running.append(pod)
            running.sort(key=_order)
            if not surge:
                out.delete.extend(running[1:])
                continue
            newest: Obj | None = None
            oldest_old: Obj | None = None
            for pod in running:
                if is_updated(pod, ds, hash_) and newest is None:
                    newest = pod
                elif not is_updated(pod, ds, hash_) and oldest_old is None:
                    oldest_old = pod
                else:
                    out.delete.append(pod)
            if (
                newest is not None
                and oldest_old is not None
                and (
                    not workload.is_ready(oldest_old)
                    or workload.is_available(newest, min_ready, now)
                )
            ):
                out.delete.append(oldest_old)
        elif pods:
            out.delete.extend(p for p in pods if not meta.deletion_timestamp(p))
    # Unscheduled pods that target a node that is gone would never be scheduled.
    for name, pods in sorted(by_node.items()):
        if name not in node_names:
            out.delete.extend(
                p
                for p in pods
                if not (p.get("spec") or {}).get("nodeName") and not meta.deletion_timestamp(p)
            )
    return out


def _new_and_old(ds: Obj, pods: list[Obj], hash_: str) -> tuple[Obj | None, Obj | None, bool]:
    """findUpdatedPodsOnNode: at most one new and one old pod, else not ok."""
    new: Obj | None = None
    old: Obj | None = None
    for pod in pods:
        if meta.deletion_timestamp(pod):
            continue
        if is_updated(pod, ds, hash_):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def rolling_update(
    ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str, now: datetime
) -> Changes:
    by_name = {meta.name(n): n for n in nodes}
    candidates = dict(by_node)
    desired = 0
    for node in nodes:
        if should_run(node, ds)[0]:
            desired += 1
            candidates.setdefault(meta.name(node), [])
    max_surge, max_unavailable = surge_and_unavailable(ds, desired)
    min_ready = min_ready_seconds(ds)
    out = Changes()
    if max_surge == 0:
        unavailable = 0
        replace: list[Obj] = []
        optional: list[Obj] = []
        for _name, pods in sorted(candidates.items()):
            new, old, ok = _new_and_old(ds, pods, hash_)
            if not ok or (new is None) == (old is None):
                unavailable += 1
            elif new is not None:
                unavailable += not workload.is_available(new, min_ready, now)
            elif old is not None:
                if not workload.is_available(old, min_ready, now):
                    replace.append(old)
                elif unavailable < max_unavailable:
                    optional.append(old)
        remaining = min(max(max_unavailable - unavailable, 0), len(optional))
        out.delete = replace + optional[:remaining]
        return out
    surged = 0
    allowed: list[str] = []
    optional_nodes: list[str] = []
    for name, pods in sorted(candidates.items()):
        new, old, ok = _new_and_old(ds, pods, hash_)
        if not ok or old is None:
            continue
        if new is None:
            if not workload.is_available(old, min_ready, now):
                found = by_name.get(name)
                if found is None or not should_run(found, ds)[0]:
                    out.delete.append(old)
                    continue
                allowed.append(name)
            elif surged < max_surge:
                optional_nodes.append(name)
        elif not workload.is_available(new, min_ready, now):
            surged += 1
        else:
            out.delete.append(old)
    remaining = min(max(max_surge - surged, 0), len(optional_nodes))
    out.create_on = allowed + optional_nodes[:remaining]
    return out


def status(
    ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str, now: datetime
) -> Obj:
    counts = dict.fromkeys(("desired", "current", "miss", "ready", "available", "updated"), 0)
    min_ready = min_ready_seconds(ds)
    for node in nodes:
        pods = sorted(by_node.get(meta.name(node)) or [], key=_order)
        if not should_run(node, ds)[0]:
            counts["miss"] += bool(pods)
            continue
        counts["desired"] += 1
        if not pods:
            continue
        counts["current"] += 1
        oldest = pods[0]
        if workload.is_ready(oldest):
            counts["ready"] += 1
            counts["available"] += workload.is_available(oldest, min_ready, now)
        counts["updated"] += is_updated(oldest, ds, hash_)
    return {
        "currentNumberScheduled": counts["current"],
        "numberMisscheduled": counts["miss"],
        "desiredNumberScheduled": counts["desired"],
        "numberReady": counts["ready"],
        "updatedNumberScheduled": counts["updated"],
        "numberAvailable": counts["available"],
        "numberUnavailable": counts["desired"] - counts["available"],
    }


def wire_status(fields: Obj) -> Obj:
    """apps/v1 DaemonSetStatus as serialised: zero omitempty counters left out."""
    optional = (
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
        "observedGeneration",
    )
    return {k: v for k, v in fields.items() if not (k in optional and not v)}
