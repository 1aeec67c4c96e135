"""Conversion between events.k8s.io/v1 Events and core/v1 Events, the one resource
kube-apiserver stores both as (kubernetes/kubernetes pkg/apis/events/v1/conversion.go).

The two shapes carry the same fields under other names: `regarding` is core's
`involvedObject`, `note` its `message`, `reportingController` its `reportingComponent`,
`deprecatedSource` its `source`, `deprecatedFirstTimestamp`, `deprecatedLastTimestamp` and
`deprecatedCount` its `firstTimestamp`, `lastTimestamp` and `count`; `eventTime`, `series`,
`related`, `action`, `reason`, `type` and `reportingInstance` keep their names. Nothing else
changes (no field is filled in from another: an old event's `source.component` stays in
`deprecatedSource`), so either direction and back is lossless. events.k8s.io/v1 omits an empty
`reportingController` and `reportingInstance` (omitempty), which core/v1 always serializes.
"""

from __future__ import annotations

from typing import Any

from draplane.api import kinds
from draplane.api.meta import Obj

V1 = kinds.EVENTS_V1.api_version
CORE = kinds.EVENTS.api_version
RENAMED = {
    "involvedObject": "regarding",
    "message": "note",
    "reportingComponent": "reportingController",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
}
"""core/v1 field -> its events.k8s.io/v1 name."""
_TO_CORE = {v1: core for core, v1 in RENAMED.items()}
_OMITTED_EMPTY = ("reportingController", "reportingInstance")
"""events.k8s.io/v1 fields with omitempty whose core/v1 field has none."""


def converts(rt: kinds.ResourceType) -> bool:
    return rt == kinds.EVENTS_V1


def convert(obj: Any, api_version: str) -> Any:
    """`obj` (an Event or an EventList, at either version) at `api_version` (`v1` or
    `events.k8s.io/v1`); anything else is returned as is."""
    if not isinstance(obj, dict) or api_version not in (V1, CORE):
        return obj
    kind = obj.get("kind")
    if kind == "EventList" and isinstance(obj.get("items"), list):
        return {
            **obj,
            "apiVersion": api_version,
            "items": [convert(i, api_version) for i in obj["items"]],
        }
    current = obj.get("apiVersion")
    if kind != "Event" or current == api_version or current not in (V1, CORE):
        return obj
    return to_v1(obj) if api_version == V1 else to_core(obj)


def to_v1(event: Obj) -> Obj:
    """A core/v1 Event as events.k8s.io/v1 serves it."""
    out: Obj = {}
    for key, value in event.items():
        out[RENAMED.get(key, key)] = value
    for key in _OMITTED_EMPTY:
        if out.get(key) == "":
            del out[key]
    out["apiVersion"] = V1
    return out


def to_core(event: Obj) -> Obj:
    """An events.k8s.io/v1 Event as core/v1 stores it."""
    out: Obj = {}
    for key, value in event.items():
        out[_TO_CORE.get(key, key)] = value
    out["apiVersion"] = CORE
    return out
