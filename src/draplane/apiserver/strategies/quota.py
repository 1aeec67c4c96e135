"""Declarations of core/v1 ResourceQuota and LimitRange (pkg/registry/core/resourcequota,
limitrange) and their Tables: a quota's REQUEST and LIMIT columns list `name: used/hard` of
`status.hard` (the `limits.*` names under LIMIT), as printResourceQuota does; a LimitRange
prints its creation time.

A quota is created with an empty status; its `status` subresource writes only the status
(the resource quota controller and quota admission write it). A LimitRange's `Container`
items are defaulted as SetDefaults_LimitRangeItem does; the LimitRanger admission plugin
applies them to pods.
"""

from __future__ import annotations

from typing import Any

from draplane.api import kinds
from draplane.api.meta import Obj
from draplane.api.validation import quota
from draplane.apiserver.printing import AGE, NAME, AgeFn, Column, Printer, aged
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.workloadprinters import _at, _name

QUOTA_COLUMNS: list[Column] = [
    NAME,
    AGE,
    (
        "Request",
        "string",
        0,
        "Request represents a minimum amount of cpu/memory that a container may consume.",
    ),
    (
        "Limit",
        "string",
        0,
        "Limits control the maximum amount of cpu/memory that a container may use independent "
        "of contention on the node.",
    ),
]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def quota_cells(obj: Obj, age: AgeFn) -> list[Any]:
    status = _dict(obj.get("status"))
    hard, used = _dict(status.get("hard")), _dict(status.get("used"))
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        pieces = str(name).split(".")
        column = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
        column.append(f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [
        _name(obj),
        age(_at(obj, "metadata", "creationTimestamp")),
        ", ".join(requests),
        ", ".join(limits),
    ]


LIMIT_RANGE_COLUMNS: list[Column] = [
    NAME,
    (
        "Created At",
        "date",
        0,
        "CreationTimestamp is a timestamp representing the server time when this object was "
        "created.",
    ),
]


def _limit_range_cells(obj: Obj, age: AgeFn) -> list[Any]:
    return [_name(obj), str(_at(obj, "metadata", "creationTimestamp") or "")]


def _reset_status(obj: Obj) -> None:
    obj["status"] = {}


STRATEGIES = (
    ResourceStrategy(
        kinds.RESOURCE_QUOTAS,
        validate=quota.validate_resource_quota,
        validate_update=quota.validate_resource_quota_update,
        validate_status=quota.validate_resource_quota_status_update,
        printer=Printer(QUOTA_COLUMNS, aged(quota_cells)),
        prepare_for_create=_reset_status,
    ),
    ResourceStrategy(
        kinds.LIMIT_RANGES,
        validate=quota.validate_limit_range,
        validate_update=quota.validate_limit_range_update,
        defaults=quota.default_limit_range,
        printer=Printer(LIMIT_RANGE_COLUMNS, aged(_limit_range_cells)),
    ),
)
