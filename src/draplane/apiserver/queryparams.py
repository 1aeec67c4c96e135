"""Query parameters of REST requests, decoded as kube-apiserver does (400 on bad values).

Booleans follow Go's strconv.ParseBool (`watch=True` from the Python client, `watch=1`, ...).
"""

from __future__ import annotations

import re
from typing import Any

from multidict import MultiMapping

from draplane.api import errors
from draplane.api.meta import Obj

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_FIELD_VALIDATION = frozenset({"", "Ignore", "Warn", "Strict"})
_INCLUDE_OBJECT = frozenset({"None", "Metadata", "Object"})
_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def query_bool(query: MultiMapping[str], name: str) -> bool:
    """Go's strconv.ParseBool, as kube-apiserver decodes boolean query parameters."""
    value = query.get(name)
    if value is None or value == "":
        return False
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise errors.bad_request(f"invalid boolean value for {name}: {value!r}")


def query_int(query: MultiMapping[str], name: str) -> int | None:
    """Go's strconv.ParseInt(value, 10, 64): ASCII digits with an optional sign, in int64
    (Python's int() would also take "1_000", " 1 " and other scripts' digits)."""
    value = query.get(name)
    if value is None or value == "":
        return None
    if len(value) > 20 or not _INT.fullmatch(value) or not _INT64_MIN <= int(value) <= _INT64_MAX:
        raise errors.bad_request(f"invalid integer value for {name}: {value!r}")
    return int(value)


def write_options(query: MultiMapping[str], *, verb: str) -> dict[str, Any]:
    validation = query.get("fieldValidation", "")
    if validation not in _FIELD_VALIDATION:
        raise errors.bad_request(
            f"fieldValidation parameter unsupported: {validation!r}; "
            "supported values are Ignore, Warn, Strict"
        )
    dry_run = query.getall("dryRun", [])
    if any(v != "All" for v in dry_run):
        raise errors.bad_request(f"dryRun: Unsupported value: {dry_run}: supported values: All")
    options: dict[str, Any] = {
        "field_manager": query.get("fieldManager", ""),
        "field_validation": validation,
        "dry_run": bool(dry_run),
    }
    if verb == "patch":
        options["force"] = query_bool(query, "force")
    return options


def include_object(query: MultiMapping[str]) -> str:
    value = query.get("includeObject", "") or "Metadata"
    if value not in _INCLUDE_OBJECT:
        raise errors.bad_request(f"includeObject: Unsupported value: {value!r}")
    return value


def delete_options(query: MultiMapping[str]) -> Obj:
    options: Obj = {}
    grace = query_int(query, "gracePeriodSeconds")
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    if query.get("propagationPolicy"):
        options["propagationPolicy"] = query["propagationPolicy"]
    if query.get("orphanDependents"):
        options["orphanDependents"] = query_bool(query, "orphanDependents")
    if query.getall("dryRun", []):
        write_options(query, verb="delete")
        options["dryRun"] = ["All"]
    return options
