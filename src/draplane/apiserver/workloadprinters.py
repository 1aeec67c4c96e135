"""Table columns and cells of the apps/v1 and batch/v1 kinds, as kube-apiserver 1.28 prints them
(pkg/printers/internalversion/printers.go): READY/UP-TO-DATE/AVAILABLE of Deployments,
DESIRED/CURRENT/READY of ReplicaSets (and core/v1 ReplicationControllers), the DaemonSet
counters, Job COMPLETIONS and DURATION, CronJob SCHEDULE/TIMEZONE/SUSPEND/ACTIVE/LAST SCHEDULE,
ControllerRevision CONTROLLER/REVISION;
`-o wide` adds CONTAINERS, IMAGES and SELECTOR. Cells never fail on a malformed stored object.
The age cells (AGE, DURATION, LAST SCHEDULE) are formatted by the caller's `age` function.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from draplane.api.meta import Obj
from draplane.api.validation.podtemplate import format_selector
from draplane.apiserver.printing import (
    AGE,
    NAME,
    AgeFn,
    Column,
    Printer,
    age,
    aged,
    human_duration,
)
from draplane.clock import parse_time

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


def replication_controller_cells(obj: Obj, age: AgeFn) -> list[Any]:
    """A ReplicaSet's cells, the selector a label map (labels.FormatLabels)."""
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    names, images = _containers(spec.get("template"))
    selector = _obj(spec.get("selector"))
    return [
        _name(obj),
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(_at(obj, "metadata", "creationTimestamp")),
        names,
        images,
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
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


def _job_row(obj: Obj, now: datetime) -> list[Any]:
    def duration(start: Any, end: Any) -> str:
        try:
            finish = parse_time(str(end)) if end else now
            return human_duration((finish - parse_time(str(start))).total_seconds())
        except (ValueError, TypeError, OverflowError):
            return "<unknown>"

    return job_cells(obj, lambda ts: age(ts, now), duration)


DEPLOYMENT = Printer(DEPLOYMENT_COLUMNS, aged(deployment_cells))
REPLICA_SET = Printer(REPLICA_SET_COLUMNS, aged(replica_set_cells))
REPLICATION_CONTROLLER = Printer(REPLICA_SET_COLUMNS, aged(replication_controller_cells))
STATEFUL_SET = Printer(STATEFUL_SET_COLUMNS, aged(stateful_set_cells))
DAEMON_SET = Printer(DAEMON_SET_COLUMNS, aged(daemon_set_cells))
JOB = Printer(JOB_COLUMNS, _job_row)
CRON_JOB = Printer(CRON_JOB_COLUMNS, aged(cron_job_cells))
CONTROLLER_REVISION = Printer(CONTROLLER_REVISION_COLUMNS, aged(controller_revision_cells))
