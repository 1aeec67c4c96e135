"""Cell logic of the kinds whose printed columns need more than a field lookup.

Pods (READY, STATUS, RESTARTS, wide columns), Nodes (STATUS, ROLES), Events (LAST SEEN,
OBJECT, ...) and the ResourceClaim STATE summary, after kubernetes/kubernetes
`pkg/printers/internalversion/printers.go` (1.28). Columns are (name, type, priority, help).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draplane.api.meta import Obj

_NAME = ("Name", "string", 0, "Name must be unique within a namespace.")
_AGE = (
    "Age",
    "string",
    0,
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)

POD_COLUMNS = [
    _NAME,
    ("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
    ("Status", "string", 0, "The aggregate status of the containers in this pod."),
    (
        "Restarts",
        "string",
        0,
        "The number of times the containers in this pod have been "
        "restarted and when the last container in this pod has restarted.",
    ),
    _AGE,
    ("IP", "string", 1, "IP address allocated to the pod."),
    ("Node", "string", 1, "NodeName is a request to schedule this pod onto a specific node."),
    (
        "Nominated Node",
        "string",
        1,
        "nominatedNodeName is set only when this pod preempts other pods on the node.",
    ),
    (
        "Readiness Gates",
        "string",
        1,
        "If specified, all readiness gates will be evaluated for pod readiness.",
    ),
]

NODE_COLUMNS = [
    _NAME,
    ("Status", "string", 0, "The status of the node"),
    ("Roles", "string", 0, "The roles of the node"),
    _AGE,
    ("Version", "string", 0, "Kubelet Version reported by the node."),
    ("Internal-IP", "string", 1, "List of internal IPs (if any)."),
    ("External-IP", "string", 1, "List of external IPs (if any)."),
    ("OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release."),
    ("Kernel-Version", "string", 1, "Kernel Version reported by the node."),
    ("Container-Runtime", "string", 1, "Container Runtime Version reported by the node."),
]

EVENT_COLUMNS = [
    ("Last Seen", "string", 0, "Time when last occurrence of this event was recorded."),
    (
        "Type",
        "string",
        0,
        "Type of this event (Normal, Warning), new types could be added in the future.",
    ),
    (
        "Reason",
        "string",
        0,
        "This should be a short, machine understandable string that gives "
        "the reason for the transition into the object's current status.",
    ),
    ("Object", "string", 0, "The object that this event is about."),
    ("Subobject", "string", 1, "The subobject (container) this event is about."),
    ("Source", "string", 1, "The component reporting this event."),
    ("Message", "string", 0, "A human-readable description of the status of this operation."),
    ("First Seen", "string", 1, "The time at which the event was first recorded."),
    ("Count", "integer", 1, "The number of times this event has occurred."),
    ("Name", "string", 1, "Name must be unique within a namespace."),
]


def _container_reason(status: Obj, reason: str) -> tuple[str, bool]:
    """The reason a container status imposes on the pod, and whether it is ready and running."""
    state = status.get("state") or {}
    waiting, terminated = state.get("waiting"), state.get("terminated")
    if waiting is not None and waiting.get("reason"):
        return str(waiting["reason"]), False
    if terminated is not None:
        if terminated.get("reason"):
            return str(terminated["reason"]), False
        if terminated.get("signal"):
            return f"Signal:{terminated['signal']}", False
        return f"ExitCode:{terminated.get('exitCode', 0)}", False
    return reason, bool(status.get("ready")) and state.get("running") is not None


def pod_cells(pod: Obj) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason = str(status.get("reason") or status.get("phase") or "")
    conditions = status.get("conditions") or []
    for cond in conditions:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    restarts = ready = 0
    has_running = False
    for cs in reversed(status.get("containerStatuses") or []):
        restarts += int(cs.get("restartCount") or 0)
        reason, running = _container_reason(cs, reason)
        if running:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        reason = "Running" if pod_ready else "NotReady"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    gates = spec.get("readinessGates") or []
    gates_cell = "<none>"
    if gates:
        true_types = {c.get("type") for c in conditions if c.get("status") == "True"}
        gates_cell = f"{sum(1 for g in gates if g.get('conditionType') in true_types)}/{len(gates)}"
    return [
        (pod.get("metadata") or {}).get("name", ""),
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        str(restarts),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_cell,
    ]


def _node_status(node: Obj) -> str:
    states = []
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            states.append({"True": "Ready", "False": "NotReady"}.get(cond.get("status"), "Unknown"))
    if not states:
        states.append("Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    return ",".join(states)


def _node_roles(node: Obj) -> str:
    roles = set()
    for key, value in ((node.get("metadata") or {}).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/":
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def node_cells(node: Obj) -> list[Any]:
    status = node.get("status") or {}
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []

    def address(kind: str) -> str:
        return next((a.get("address") for a in addresses if a.get("type") == kind), "<none>")

    return [
        (node.get("metadata") or {}).get("name", ""),
        _node_status(node),
        _node_roles(node),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def event_cells(event: Obj, since: Callable[[Any], str]) -> list[Any]:
    first = since(event.get("firstTimestamp") or event.get("eventTime"))
    last = since(event["lastTimestamp"]) if event.get("lastTimestamp") else first
    count = int(event.get("count") or 0)
    series = event.get("series")
    if series:
        last = since(series.get("lastObservedTime"))
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source_obj = event.get("source") or {}
    source = [source_obj.get("component") or event.get("reportingComponent") or ""]
    if source_obj.get("host") or event.get("reportingInstance"):
        source.append(source_obj.get("host") or event.get("reportingInstance"))
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        ", ".join(source),
        str(event.get("message") or "").strip(),
        first,
        count,
        (event.get("metadata") or {}).get("name", ""),
    ]


def claim_state(claim: Obj) -> str:
    """`pending`, `allocated,reserved`, `deleted,allocated,deallocating`... as upstream prints."""
    deleted = bool((claim.get("metadata") or {}).get("deletionTimestamp"))
    status = claim.get("status") or {}
    states = ["deleted"] if deleted else []
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
        elif deleted or status.get("deallocationRequested"):
            states.append("deallocating")
    return ",".join(states)
