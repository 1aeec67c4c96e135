"""events.k8s.io/v1 Event rules (kubernetes/kubernetes pkg/apis/core/validation/events.go,
ValidateEventCreate and ValidateEventUpdate for a request at events.k8s.io/v1).

An events.k8s.io/v1 Event is stored as a core/v1 Event (`draplane.api.eventconversion`), so
these functions read the core/v1 shape; the paths are the internal type's, as upstream
reports them (`message`, not `note`; `reportingController`; `firstTimestamp`). Every Event
passes the legacy rules (`core.legacy_event_errors`); one written at events.k8s.io/v1 must
also have an eventTime, a Normal or Warning type, a valid series, and none of the deprecated
fields, and an update may change only its series (and metadata).
"""

from __future__ import annotations

from draplane.api import names
from draplane.api.errors import FieldError, invalid, required
from draplane.api.meta import Obj
from draplane.api.validation.core import legacy_event_errors
from draplane.api.validation.objectmeta import (
    immutable,
    validate_object_meta,
    validate_object_meta_update,
)

EVENT_TYPES = ("Normal", "Warning")
_UNSET = ("firstTimestamp", "lastTimestamp", "count")
_IMMUTABLE = (
    ("involvedObject", "involvedObject"),
    ("reason", "reason"),
    ("message", "message"),
    ("source", "source"),
    ("firstTimestamp", "firstTimestamp"),
    ("lastTimestamp", "lastTimestamp"),
    ("count", "count"),
    ("reason", "reason"),
    ("type", "type"),
    ("eventTime", "eventTime"),
    ("action", "action"),
    ("related", "related"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
)
"""(core/v1 field, reported path) in ValidateEventUpdate's order (reason is checked twice
there, and reported twice)."""


def validate_event_v1(obj: Obj) -> list[FieldError]:
    errs = legacy_event_errors(obj)
    errs += validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    errs += _series_errors(obj)
    if not obj.get("eventTime"):
        errs.append(required("eventTime"))
    event_type = obj.get("type") or ""
    if event_type not in EVENT_TYPES:
        errs.append(invalid("type", "", f"has invalid value: {event_type}"))
    for key in _UNSET:
        if obj.get(key):
            errs.append(invalid(key, "", "needs to be unset"))
    source = obj.get("source")
    if isinstance(source, dict) and (source.get("component") or source.get("host")):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


def validate_event_v1_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = legacy_event_errors(obj)
    errs += validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    if obj.get("series") != old.get("series"):
        errs += _series_errors(obj)
    for key, path in _IMMUTABLE:
        errs += immutable(path, obj.get(key), old.get(key))
    return errs


def _series_errors(obj: Obj) -> list[FieldError]:
    series = obj.get("series")
    if not isinstance(series, dict):
        return []
    errs: list[FieldError] = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs
