"""Query parameters of REST requests, decoded as kube-apiserver does (400 on bad values).

Booleans follow Go's strconv.ParseBool (`watch=True` from the Python client, `watch=1`, ...).
"""

from __future__ import annotations

from typing import Any

from multidict import MultiMapping

from draplane.api import errors
from draplane.api.meta import Obj

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_FIELD_VALIDATION = frozenset({"", "Ignore", "Warn", "Strict"})
_INCLUDE_OBJECT = frozenset({"None", "Metadata", "Object"})


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
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f"invalid integer value for {name}: {value!r}") from None


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
