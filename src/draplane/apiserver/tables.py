"""meta.k8s.io Table output per kind, with the columns kube-apiserver 1.28 prints.

`to_table(rt, objs, ...)` turns objects into `columnDefinitions` + `rows` (`cells`, `object`);
priority-1 columns show only with `kubectl -o wide`. Ages are pre-formatted as kubectl's
`HumanDuration` does, relative to the server clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver import crtables, networkprinters as np, printers, workloadprinters as wp
from draplane.clock import parse_time

Column = tuple[str, str, int, str]  # name, type, priority, description
RowFn = Callable[[Obj, datetime], list[Any]]

_NAME: Column = ("Name", "string", 0, "Name must be unique within a namespace.")
_AGE: Column = (
    "Age",
    "string",
    0,
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)


def human_duration(seconds: float) -> str:
    """kubectl's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: Any, now: datetime) -> str:
    if not timestamp:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(str(timestamp))).total_seconds())
    except (ValueError, TypeError, OverflowError):
        # Not RFC 3339, without a time zone, or out of datetime's range.
        return "<unknown>"


def _created(obj: Obj, now: datetime) -> str:
    return age(printers.field(obj, "metadata", "creationTimestamp"), now)


def _with_age(fn: Callable[[Obj], list[Any]], *, age_at: int = -1) -> RowFn:
    """A row function inserting the object's age at `age_at` (-1: last)."""

    def row(obj: Obj, now: datetime) -> list[Any]:
        cells = fn(obj)
        cells.insert(len(cells) if age_at < 0 else age_at, _created(obj, now))
        return cells

    return row


def _events_row(obj: Obj, now: datetime) -> list[Any]:
    return printers.event_cells(obj, lambda ts: age(ts, now))


# kind key -> (columns, row function producing cells in column order)
_PRINTERS: dict[str, tuple[list[Column], RowFn]] = {
    kinds.PODS.key: (printers.POD_COLUMNS, _with_age(printers.pod_cells, age_at=4)),
    kinds.NODES.key: (printers.NODE_COLUMNS, _with_age(printers.node_cells, age_at=3)),
    kinds.NAMESPACES.key: (
        [_NAME, ("Status", "string", 0, "The status of the namespace"), _AGE],
        _with_age(lambda o: [_name(o), printers.field(o, "status", "phase")]),
    ),
    kinds.EVENTS.key: (printers.EVENT_COLUMNS, _events_row),
    kinds.CONFIGMAPS.key: (
        [_NAME, ("Data", "integer", 0, "Number of data entries"), _AGE],
        _with_age(
            lambda o: [
                _name(o),
                printers.entries(o.get("data")) + printers.entries(o.get("binaryData")),
            ]
        ),
    ),
    kinds.LEASES.key: (
        [_NAME, ("Holder", "string", 0, "The holder of the lease"), _AGE],
        _with_age(lambda o: [_name(o), printers.field(o, "spec", "holderIdentity")]),
    ),
    kinds.RESOURCE_CLASSES.key: (
        [_NAME, ("DriverName", "string", 0, "The driver handling this class"), _AGE],
        _with_age(lambda o: [_name(o), printers.field(o, "driverName")]),
    ),
    kinds.RESOURCE_CLAIMS.key: (
        [
            _NAME,
            ("ResourceClassName", "string", 0, "The resource class of the claim"),
            ("AllocationMode", "string", 0, "When the claim gets allocated"),
            (
                "State",
                "string",
                0,
                "A summary of the current state (allocated, pending, reserved, etc.).",
            ),
            _AGE,
        ],
        _with_age(
            lambda o: [
                _name(o),
                printers.field(o, "spec", "resourceClassName"),
                printers.field(o, "spec", "allocationMode"),
                printers.claim_state(o),
            ]
        ),
    ),
    kinds.RESOURCE_CLAIM_TEMPLATES.key: (
        [
            _NAME,
            ("ResourceClassName", "string", 0, "The resource class of the claims"),
            ("AllocationMode", "string", 0, "When the claims get allocated"),
            _AGE,
        ],
        _with_age(
            lambda o: [
                _name(o),
                printers.field(o, "spec", "spec", "resourceClassName"),
                printers.field(o, "spec", "spec", "allocationMode"),
            ]
        ),
    ),
    kinds.POD_SCHEDULING_CONTEXTS.key: (
        [_NAME, ("SelectedNode", "string", 0, "The node selected by the scheduler"), _AGE],
        _with_age(lambda o: [_name(o), printers.field(o, "spec", "selectedNode")]),
    ),
    kinds.CUSTOM_RESOURCE_DEFINITIONS.key: (
        [_NAME, ("Created At", "date", 0, _AGE[3])],
        lambda o, _now: [_name(o), printers.field(o, "metadata", "creationTimestamp")],
    ),
}


def _aged(fn: Callable[[Obj, Callable[[Any], str]], list[Any]]) -> RowFn:
    return lambda obj, now: fn(obj, lambda ts: age(ts, now))


def _job_row(obj: Obj, now: datetime) -> list[Any]:
    def duration(start: Any, end: Any) -> str:
        try:
            finish = parse_time(str(end)) if end else now
            return human_duration((finish - parse_time(str(start))).total_seconds())
        except (ValueError, TypeError, OverflowError):
            return "<unknown>"

    return wp.job_cells(obj, lambda ts: age(ts, now), duration)


_PRINTERS.update(
    {
        kinds.DEPLOYMENTS.key: (wp.DEPLOYMENT_COLUMNS, _aged(wp.deployment_cells)),
        kinds.REPLICA_SETS.key: (wp.REPLICA_SET_COLUMNS, _aged(wp.replica_set_cells)),
        kinds.STATEFUL_SETS.key: (wp.STATEFUL_SET_COLUMNS, _aged(wp.stateful_set_cells)),
        kinds.DAEMON_SETS.key: (wp.DAEMON_SET_COLUMNS, _aged(wp.daemon_set_cells)),
        kinds.JOBS.key: (wp.JOB_COLUMNS, _job_row),
        kinds.CRON_JOBS.key: (wp.CRON_JOB_COLUMNS, _aged(wp.cron_job_cells)),
        kinds.CONTROLLER_REVISIONS.key: (
            wp.CONTROLLER_REVISION_COLUMNS,
            _aged(wp.controller_revision_cells),
        ),
        kinds.SECRETS.key: (np.SECRET_COLUMNS, _aged(np.secret_cells)),
        kinds.SERVICES.key: (np.SERVICE_COLUMNS, _aged(np.service_cells)),
        kinds.ENDPOINTS.key: (np.ENDPOINTS_COLUMNS, _aged(np.endpoints_cells)),
        kinds.ENDPOINT_SLICES.key: (np.ENDPOINT_SLICE_COLUMNS, _aged(np.endpoint_slice_cells)),
    }
)
_DEFAULT: tuple[list[Column], RowFn] = ([_NAME, _AGE], _with_age(lambda o: [_name(o)]))


def _name(obj: Obj) -> str:
    return printers.field(obj, "metadata", "name")


def _printer(rt: ResourceType) -> tuple[list[Column], RowFn]:
    if rt.custom is not None:
        return crtables.columns(rt, _NAME, _AGE), lambda o, now: crtables.cells(rt, o, now, age)
    return _PRINTERS.get(rt.key, _DEFAULT)


def column_definitions(rt: ResourceType) -> list[Obj]:
    columns, _ = _printer(rt)
    return [
        {
            "name": name,
            "type": type_,
            "format": "name" if name == "Name" else "",
            "description": description,
            "priority": priority,
        }
        for name, type_, priority, description in columns
    ]


def row_object(obj: Obj, include_object: str, table_version: str) -> Obj | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {},
    }


def to_table(
    rt: ResourceType,
    objs: list[Obj],
    *,
    now: datetime,
    include_object: str = "Metadata",
    table_version: str = "v1",
    list_metadata: Obj | None = None,
    headers: bool = True,
) -> Obj:
    _, row_fn = _printer(rt)
    rows = [
        {"cells": row_fn(obj, now), "object": row_object(obj, include_object, table_version)}
        for obj in objs
    ]
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": dict(list_metadata or {}),
        "columnDefinitions": column_definitions(rt) if headers else [],
        "rows": rows,
    }
