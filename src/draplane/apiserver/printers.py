"""Cell logic of the kinds whose printed columns need more than a field lookup.

Pods (READY, STATUS, RESTARTS, wide columns), Nodes (STATUS, ROLES), Events (LAST SEEN,
OBJECT, ...) and the ResourceClaim STATE summary, after kubernetes/kubernetes
`pkg/printers/internalversion/printers.go` (1.28). Columns are (name, type, priority, help).
Cells read stored objects through type-checking accessors: a field of an unexpected type prints
as if absent, never fails the whole Table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draplane.api.eventconversion import to_core
from draplane.api.meta import Obj
from draplane.apiserver.printing import (
    AGE as _AGE,
    NAME as _NAME,
    Column,
    Printer,
    aged,
    field,
    name,
    with_age,
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


def _obj(value: Any) -> Obj:
    """`value` if it is an object, else {}: printers read whatever is stored without failing."""
    return value if isinstance(value, dict) else {}


def _objs(value: Any) -> list[Obj]:
    """The objects of a list (anything else, and non-object items, are skipped)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _container_reason(status: Obj, reason: str) -> tuple[str, bool]:
    """The reason a container status imposes on the pod, and whether it is ready and running."""
    state = _obj(status.get("state"))
    waiting, terminated = state.get("waiting"), state.get("terminated")
    if isinstance(waiting, dict) and _text(waiting.get("reason")):
        return _text(waiting["reason"]), False
    if isinstance(terminated, dict):
        if _text(terminated.get("reason")):
            return _text(terminated["reason"]), False
        if _count(terminated.get("signal")):
            return f"Signal:{terminated['signal']}", False
        return f"ExitCode:{_count(terminated.get('exitCode'))}", False
    return reason, status.get("ready") is True and isinstance(state.get("running"), dict)


def pod_cells(pod: Obj) -> list[Any]:
    spec, status = _obj(pod.get("spec")), _obj(pod.get("status"))
    reason = _text(status.get("reason")) or _text(status.get("phase"))
    conditions = _objs(status.get("conditions"))
    for cond in conditions:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    restarts = ready = 0
    has_running = False
    for cs in reversed(_objs(status.get("containerStatuses"))):
        restarts += _count(cs.get("restartCount"))
        reason, running = _container_reason(cs, reason)
        if running:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        reason = "Running" if pod_ready else "NotReady"
    if _obj(pod.get("metadata")).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    gates = _objs(spec.get("readinessGates"))
    gates_cell = "<none>"
    if gates:
        true_types = {_text(c.get("type")) for c in conditions if c.get("status") == "True"}
        gates_cell = (
            f"{sum(1 for g in gates if _text(g.get('conditionType')) in true_types)}/{len(gates)}"
        )
    containers = spec.get("containers")
    return [
        _text(_obj(pod.get("metadata")).get("name")),
        f"{ready}/{len(containers) if isinstance(containers, list) else 0}",
        reason,
        str(restarts),
        _text(status.get("podIP")) or "<none>",
        _text(spec.get("nodeName")) or "<none>",
        _text(status.get("nominatedNodeName")) or "<none>",
        gates_cell,
    ]


def _node_status(node: Obj) -> str:
    states = []
    for cond in _objs(_obj(node.get("status")).get("conditions")):
        if cond.get("type") == "Ready":
            states.append(
                {"True": "Ready", "False": "NotReady"}.get(_text(cond.get("status")), "Unknown")
            )
    if not states:
        states.append("Unknown")
    if _obj(node.get("spec")).get("unschedulable") is True:
        states.append("SchedulingDisabled")
    return ",".join(states)


def _node_roles(node: Obj) -> str:
    roles = set()
    for key, value in _obj(_obj(node.get("metadata")).get("labels")).items():
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/":
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and _text(value):
            roles.add(_text(value))
    return ",".join(sorted(roles)) or "<none>"


def node_cells(node: Obj) -> list[Any]:
    status = _obj(node.get("status"))
    info = _obj(status.get("nodeInfo"))
    addresses = _objs(status.get("addresses"))

    def address(kind: str) -> str:
        return next((_text(a.get("address")) for a in addresses if a.get("type") == kind), "<none>")

    return [
        _text(_obj(node.get("metadata")).get("name")),
        _node_status(node),
        _node_roles(node),
        _text(info.get("kubeletVersion")),
        address("InternalIP"),
        address("ExternalIP"),
        _text(info.get("osImage")) or "<unknown>",
        _text(info.get("kernelVersion")) or "<unknown>",
        _text(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


def event_cells(event: Obj, since: Callable[[Any], str]) -> list[Any]:
    first = since(_text(event.get("firstTimestamp")) or _text(event.get("eventTime")))
    last = since(_text(event["lastTimestamp"])) if _text(event.get("lastTimestamp")) else first
    count = _count(event.get("count"))
    series = _obj(event.get("series"))
    if series:
        last = since(_text(series.get("lastObservedTime")))
        count = _count(series.get("count"))
    elif count == 0:
        count = 1
    involved = _obj(event.get("involvedObject"))
    kind = _text(involved.get("kind")).lower()
    name = _text(involved.get("name"))
    target = f"{kind}/{name}" if name else kind
    source_obj = _obj(event.get("source"))
    source = [_text(source_obj.get("component")) or _text(event.get("reportingComponent"))]
    host = _text(source_obj.get("host")) or _text(event.get("reportingInstance"))
    if host:
        source.append(host)
    return [
        last,
        _text(event.get("type")),
        _text(event.get("reason")),
        target,
        _text(involved.get("fieldPath")),
        ", ".join(source),
        _text(event.get("message")).strip(),
        first,
        count,
        _text(_obj(event.get("metadata")).get("name")),
    ]


def claim_state(claim: Obj) -> str:
    """`pending`, `allocated,reserved`, `deleted,allocated,deallocating`... as upstream prints."""
    deleted = bool(_obj(claim.get("metadata")).get("deletionTimestamp"))
    status = _obj(claim.get("status"))
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


def entries(value: Any) -> int:
    """How many entries an object has (0 for anything else)."""
    return len(value) if isinstance(value, dict) else 0


# The printers of the core, coordination, resource.k8s.io and apiextensions kinds, as their
# declarations name them (`draplane.apiserver.strategies`).
POD = Printer(POD_COLUMNS, with_age(pod_cells, age_at=4))
NODE = Printer(NODE_COLUMNS, with_age(node_cells, age_at=3))
NAMESPACE = Printer(
    [_NAME, ("Status", "string", 0, "The status of the namespace"), _AGE],
    with_age(lambda o: [name(o), field(o, "status", "phase")]),
)
EVENT = Printer(EVENT_COLUMNS, aged(event_cells))
EVENT_V1 = Printer(EVENT_COLUMNS, aged(lambda e, since: event_cells(to_core(e), since)))
"""events.k8s.io/v1 Events print as core/v1's (one internal type, one TableConvertor)."""
CONFIG_MAP = Printer(
    [_NAME, ("Data", "integer", 0, "Number of data entries"), _AGE],
    with_age(lambda o: [name(o), entries(o.get("data")) + entries(o.get("binaryData"))]),
)
LEASE = Printer(
    [_NAME, ("Holder", "string", 0, "The holder of the lease"), _AGE],
    with_age(lambda o: [name(o), field(o, "spec", "holderIdentity")]),
)
RESOURCE_CLASS = Printer(
    [_NAME, ("DriverName", "string", 0, "The driver handling this class"), _AGE],
    with_age(lambda o: [name(o), field(o, "driverName")]),
)
_STATE: Column = (
    "State",
    "string",
    0,
    "A summary of the current state (allocated, pending, reserved, etc.).",
)
RESOURCE_CLAIM_V1ALPHA2 = Printer(
    [
        _NAME,
        ("ResourceClassName", "string", 0, "The resource class of the claim"),
        ("AllocationMode", "string", 0, "When the claim gets allocated"),
        _STATE,
        _AGE,
    ],
    with_age(
        lambda o: [
            name(o),
            field(o, "spec", "resourceClassName"),
            field(o, "spec", "allocationMode"),
            claim_state(o),
        ]
    ),
)
RESOURCE_CLAIM_TEMPLATE_V1ALPHA2 = Printer(
    [
        _NAME,
        ("ResourceClassName", "string", 0, "The resource class of the claims"),
        ("AllocationMode", "string", 0, "When the claims get allocated"),
        _AGE,
    ],
    with_age(
        lambda o: [
            name(o),
            field(o, "spec", "spec", "resourceClassName"),
            field(o, "spec", "spec", "allocationMode"),
        ]
    ),
)
POD_SCHEDULING_CONTEXT = Printer(
    [_NAME, ("SelectedNode", "string", 0, "The node selected by the scheduler"), _AGE],
    with_age(lambda o: [name(o), field(o, "spec", "selectedNode")]),
)
CUSTOM_RESOURCE_DEFINITION = Printer(
    [_NAME, ("Created At", "date", 0, _AGE[3])],
    lambda o, _now: [name(o), field(o, "metadata", "creationTimestamp")],
)
# resource.k8s.io/v1 and its beta versions (the 1.36 mode; pkg/printers/internalversion).
RESOURCE_CLAIM = Printer([_NAME, _STATE, _AGE], with_age(lambda o: [name(o), claim_state(o)]))
RESOURCE_SLICE = Printer(
    [
        _NAME,
        ("Node", "string", 0, "The node providing the devices of the slice"),
        ("Driver", "string", 0, "The driver providing the devices of the slice"),
        ("Pool", "string", 0, "The pool of the slice"),
        _AGE,
    ],
    with_age(
        lambda o: [
            name(o),
            field(o, "spec", "nodeName"),
            field(o, "spec", "driver"),
            field(o, "spec", "pool", "name"),
        ]
    ),
)
