"""Table columns and cells of the apps/v1 and batch/v1 kinds, as kube-apiserver 1.28 prints them
(pkg/printers/internalversion/printers.go): READY/UP-TO-DATE/AVAILABLE of Deployments,
DESIRED/CURRENT/READY of ReplicaSets, the DaemonSet counters, Job COMPLETIONS and DURATION,
CronJob SCHEDULE/TIMEZONE/SUSPEND/ACTIVE/LAST SCHEDULE, ControllerRevision CONTROLLER/REVISION;
`-o wide` adds CONTAINERS, IMAGES and SELECTOR. Cells never fail on a malformed stored object.
The age cells (AGE, DURATION, LAST SCHEDULE) are formatted by the caller's `age` function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draplane.api.meta import Obj
from draplane.api.validation.podtemplate import format_selector

Column = tuple[str, str, int, str]
AgeFn = Callable[[Any], str]

NAME: Column = ("Name", "string", 0, "Name must be unique within a namespace.")
AGE: Column = (
    "Age",
    "string",
    0,
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)
_WIDE: list[Column] = [
    ("Containers", "string", 1, "Names of each container in the template."),
    ("Images", "string", 1, "Images referenced by each container in the template."),
    ("Selector", "string", 1, "Label selector for pods."),
]


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _at(obj: Any, *path: str) -> Any:
    for key in path:
        obj = _obj(obj).get(key)
    return obj


def _containers(template: Any) -> tuple[str, str]:
    containers = _at(template, "spec", "containers")
    items = [_obj(c) for c in containers] if isinstance(containers, list) else []
    names = ",".join(str(c.get("name") or "") for c in items)
    images = ",".join(str(c.get("image") or "") for c in items)
    return names, images


def _wide(template: Any, selector: Any) -> list[Any]:
    names, images = _containers(template)
    return [names, images, format_selector(selector) if selector is not None else "<none>"]


def _name(obj: Obj) -> str:
    return str(_at(obj, "metadata", "name") or "")


DEPLOYMENT_COLUMNS: list[Column] = [
    NAME,
    ("Ready", "string", 0, "Number of the pod with ready state"),
    (
        "Up-to-date",
        "string",
        0,
        (
            "Total number of non-terminated pods targeted by this deployment that "
            "have the desired template spec."
        ),
    ),
    (
        "Available",
        "string",
        0,
        "Total number of available pods (ready for at least minReadySeconds) "
        "targeted by this deployment.",
    ),
    AGE,
    *_WIDE,
]


def deployment_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    return [
        _name(obj),
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        age(_at(obj, "metadata", "creationTimestamp")),
        *_wide(spec.get("template"), spec.get("selector")),
    ]


REPLICA_SET_COLUMNS: list[Column] = [
    NAME,
    ("Desired", "integer", 0, "Replicas is the number of desired replicas."),
    ("Current", "integer", 0, "Replicas is the most recently observed number of replicas."),
    (
        "Ready",
        "integer",
        0,
        "readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.",
    ),
    AGE,
    *_WIDE,
]


def replica_set_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    return [
        _name(obj),
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(_at(obj, "metadata", "creationTimestamp")),
        *_wide(spec.get("template"), spec.get("selector")),
    ]


STATEFUL_SET_COLUMNS: list[Column] = [
    NAME,
    ("Ready", "string", 0, "Number of the pod with ready state"),
    AGE,
    *_WIDE[:2],
]


def stateful_set_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    names, images = _containers(spec.get("template"))
    return [
        _name(obj),
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'))}",
        age(_at(obj, "metadata", "creationTimestamp")),
        names,
        images,
    ]


DAEMON_SET_COLUMNS: list[Column] = [
    NAME,
    (
        "Desired",
        "integer",
        0,
        "The total number of nodes that should be running the daemon pod "
        "(including nodes correctly running the daemon pod).",
    ),
    (
        "Current",
        "integer",
        0,
        "The number of nodes that are running at least 1 daemon pod and are "
        "supposed to run the daemon pod.",
    ),
    (
        "Ready",
        "integer",
        0,
        "numberReady is the number of nodes that should be running the daemon "
        "pod and have one or more of the daemon pod running with a Ready "
        "Condition.",
    ),
    ("Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"),
    (
        "Available",
        "integer",
        0,
        "The number of nodes that should be running the daemon pod and have "
        "one or more of the daemon pod running and available (ready for at "
        "least spec.minReadySeconds)",
    ),
    (
        "Node Selector",
        "string",
        0,
        "NodeSelector is a selector which must be true for the pod to fit on a node.",
    ),
    AGE,
    *_WIDE,
]


def _labels_text(labels: Any) -> str:
    """labels.FormatLabels: sorted `k=v` pairs, "<none>" when empty."""
    items = sorted(_obj(labels).items())
    return ",".join(f"{k}={v}" for k, v in items) or "<none>"


def daemon_set_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    return [
        _name(obj),
        _int(status.get("desiredNumberScheduled")),
        _int(status.get("currentNumberScheduled")),
        _int(status.get("numberReady")),
        _int(status.get("updatedNumberScheduled")),
        _int(status.get("numberAvailable")),
        _labels_text(_at(spec, "template", "spec", "nodeSelector")),
        age(_at(obj, "metadata", "creationTimestamp")),
        *_wide(spec.get("template"), spec.get("selector")),
    ]


JOB_COLUMNS: list[Column] = [
    NAME,
    ("Completions", "string", 0, "The number of pods which reached phase Succeeded."),
    ("Duration", "string", 0, "Time required to complete the job."),
    AGE,
    *_WIDE,
]


def job_completions(spec: Obj, status: Obj) -> str:
    succeeded = _int(status.get("succeeded"))
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    if isinstance(completions, int) and not isinstance(completions, bool):
        return f"{succeeded}/{completions}"
    if isinstance(parallelism, int) and not isinstance(parallelism, bool) and parallelism > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def job_cells(obj: Obj, age: AgeFn, duration: Callable[[Any, Any], str]) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    start = status.get("startTime")
    return [
        _name(obj),
        job_completions(spec, status),
        duration(start, status.get("completionTime")) if start else "",
        age(_at(obj, "metadata", "creationTimestamp")),
        *_wide(spec.get("template"), spec.get("selector")),
    ]


CRON_JOB_COLUMNS: list[Column] = [
    NAME,
    (
        "Schedule",
        "string",
        0,
        "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
    ),
    (
        "Timezone",
        "string",
        0,
        "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.",
    ),
    (
        "Suspend",
        "boolean",
        0,
        "This flag tells the controller to suspend subsequent executions, it "
        "does not apply to already started executions.  Defaults to false.",
    ),
    ("Active", "integer", 0, "A list of pointers to currently running jobs."),
    (
        "Last Schedule",
        "string",
        0,
        "Information when was the last time the job was successfully scheduled.",
    ),
    AGE,
    *_WIDE,
]


def cron_job_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    last = status.get("lastScheduleTime")
    active = status.get("active")
    job_spec = _at(spec, "jobTemplate", "spec")
    zone = spec.get("timeZone")
    return [
        _name(obj),
        str(spec.get("schedule") or ""),
        zone if isinstance(zone, str) else "<none>",
        spec.get("suspend") is True,
        len(active) if isinstance(active, list) else 0,
        age(last) if last else "<none>",
        age(_at(obj, "metadata", "creationTimestamp")),
        *_wide(_obj(job_spec).get("template"), _obj(job_spec).get("selector")),
    ]


CONTROLLER_REVISION_COLUMNS: list[Column] = [
    NAME,
    ("Controller", "string", 0, "Controller of the object"),
    ("Revision", "string", 0, "Revision of the ControllerRevision"),
    AGE,
]


def controller_revision_cells(obj: Obj, age: AgeFn) -> list[Any]:
    controller = "<none>"
    refs = _at(obj, "metadata", "ownerReferences")
    for ref in refs if isinstance(refs, list) else []:
        ref = _obj(ref)
        if ref.get("controller") is True:
            api_version = str(ref.get("apiVersion") or "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = str(ref.get("kind") or "")
            qualified = f"{kind}.{group}" if group else kind
            controller = f"{qualified.lower()}/{ref.get('name') or ''}"
            break
    return [
        _name(obj),
        controller,
        _int(obj.get("revision")),
        age(_at(obj, "metadata", "creationTimestamp")),
    ]


# Secrets, Services, Endpoints, EndpointSlices ---------------------------------------------------

SECRET_COLUMNS: list[Column] = [
    NAME,
    ("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
    ("Data", "string", 0, "Data contains the secret data."),
    AGE,
]


def secret_cells(obj: Obj, age: AgeFn) -> list[Any]:
    data = obj.get("data")
    return [
        _name(obj),
        str(obj.get("type") or ""),
        len(data) if isinstance(data, dict) else 0,
        age(_at(obj, "metadata", "creationTimestamp")),
    ]


SERVICE_COLUMNS: list[Column] = [
    NAME,
    ("Type", "string", 0, "type determines how the Service is exposed."),
    ("Cluster-IP", "string", 0, "clusterIP is the IP address of the service."),
    (
        "External-IP",
        "string",
        0,
        "externalIPs is a list of IP addresses for which nodes in the cluster "
        "will also accept traffic for this service.",
    ),
    ("Port(s)", "string", 0, "The list of ports that are exposed by this service."),
    AGE,
    (
        "Selector",
        "string",
        1,
        "Route service traffic to pods with label keys and values matching this selector.",
    ),
]


def _external_ip(spec: Obj, status: Obj) -> str:
    kind = spec.get("type") or "ClusterIP"
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    if kind == "LoadBalancer":
        ingress = _at(status, "loadBalancer", "ingress")
        addresses = [
            str(_obj(i).get("ip") or _obj(i).get("hostname") or "")
            for i in (ingress if isinstance(ingress, list) else [])
        ]
        found = addresses + external
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _service_ports(spec: Obj) -> str:
    parts = []
    ports = spec.get("ports")
    for port in ports if isinstance(ports, list) else []:
        port = _obj(port)
        protocol = port.get("protocol") or "TCP"
        if port.get("nodePort"):
            parts.append(f"{port.get('port')}:{port.get('nodePort')}/{protocol}")
        else:
            parts.append(f"{port.get('port')}/{protocol}")
    return ",".join(parts) or "<none>"


def service_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    ips = spec.get("clusterIPs")
    cluster_ip = str(ips[0]) if isinstance(ips, list) and ips else "<none>"
    return [
        _name(obj),
        str(spec.get("type") or ""),
        cluster_ip,
        _external_ip(spec, status),
        _service_ports(spec),
        age(_at(obj, "metadata", "creationTimestamp")),
        _labels_text(spec.get("selector")),
    ]


ENDPOINTS_COLUMNS: list[Column] = [
    NAME,
    ("Endpoints", "string", 0, "The set of all endpoints is the union of all subsets."),
    AGE,
]


def _first_three(items: list[str]) -> str:
    if not items:
        return "<none>"
    text = ",".join(items[:3])
    return text + (f" + {len(items) - 3} more..." if len(items) > 3 else "")


def endpoints_cells(obj: Obj, age: AgeFn) -> list[Any]:
    items: list[str] = []
    subsets = obj.get("subsets")
    for subset in subsets if isinstance(subsets, list) else []:
        subset = _obj(subset)
        ports = [_obj(p) for p in subset.get("ports") or []] or [{}]
        for address in subset.get("addresses") or []:
            ip = str(_obj(address).get("ip") or "")
            for port in ports:
                items.append(f"{ip}:{port['port']}" if "port" in port else ip)
    return [_name(obj), _first_three(items), age(_at(obj, "metadata", "creationTimestamp"))]


ENDPOINT_SLICE_COLUMNS: list[Column] = [
    NAME,
    (
        "AddressType",
        "string",
        0,
        "addressType specifies the type of address carried by this EndpointSlice.",
    ),
    (
        "Ports",
        "string",
        0,
        "ports specifies the list of network ports exposed by each endpoint in this slice.",
    ),
    ("Endpoints", "string", 0, "endpoints is a list of unique endpoints in this slice."),
    AGE,
]


def endpoint_slice_cells(obj: Obj, age: AgeFn) -> list[Any]:
    ports = obj.get("ports")
    port_text = ",".join(
        str(_obj(p).get("port")) for p in (ports if isinstance(ports, list) else [])
    )
    endpoints = obj.get("endpoints")
    addresses = [
        str(a)
        for e in (endpoints if isinstance(endpoints, list) else [])
        for a in (_obj(e).get("addresses") or [])
    ]
    return [
        _name(obj),
        str(obj.get("addressType") or ""),
        port_text or "<unset>",
        _first_three(addresses),
        age(_at(obj, "metadata", "creationTimestamp")),
    ]
