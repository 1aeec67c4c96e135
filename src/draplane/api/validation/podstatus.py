"""Pod status subresource rules (core ValidatePodStatusUpdate, 1.28).

`status.resourceClaimStatuses` follows validatePodResourceClaimStatuses, and
`status.extendedResourceClaimStatus` (1.36, DRAExtendedResource)
validatePodExtendedResourceClaimStatus; the spec compared against is the stored one, since a
status write cannot change the spec.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, required
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    field_dict,
    validate_meta_content,
    validate_object_meta_update,
)
from draplane.api.validation.pod import pod_claim_names

_SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})


def validate_pod_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta_update(md, old.get("metadata") or {})
    errs.extend(validate_meta_content(md))
    status = as_dict(obj.get("status"), "status", errs)
    old_spec = field_dict(old, "spec")
    new_spec = field_dict(obj, "spec") if "spec" in obj else old_spec
    if "nodeName" in new_spec and (new_spec.get("nodeName") or "") != (
        old_spec.get("nodeName") or ""
    ):
        errs.append(forbidden("status.nodeName", "may not be changed directly"))
    errs.extend(_conditions(status.get("conditions"), "status.conditions"))
    nominated = status.get("nominatedNodeName")
    old_nominated = field_dict(old, "status").get("nominatedNodeName")
    if nominated and nominated != old_nominated:
        add_invalid(
            errs, "status.nominatedNodeName", nominated, names.is_dns1123_subdomain(nominated)
        )
    errs.extend(_pod_ips(status))
    errs.extend(
        _claim_statuses(
            status.get("resourceClaimStatuses"),
            pod_claim_names(old_spec),
            "status.resourceClaimStatuses",
        )
    )
    extended = status.get("extendedResourceClaimStatus")
    if extended is not None:
        old_extended = field_dict(old, "status").get("extendedResourceClaimStatus")
        errs.extend(_extended_claim_status(extended, old_extended, old_spec))
    return errs


_EXTENDED = "status.extendedResourceClaimStatus"


def _extended_claim_status(status: Any, old: Any, spec: Obj) -> list[FieldError]:
    """The claim the scheduler made for the pod's extended resources: a claim name, at least
    one mapping of a container's resource to a request name, and set once."""
    errs: list[FieldError] = []
    if old is not None and status != old:
        return [invalid(_EXTENDED, status, "field is immutable")]
    status = as_dict(status, _EXTENDED, errs)
    containers = {
        c.get("name")
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    }
    mappings = as_list(status.get("requestMappings"), f"{_EXTENDED}.requestMappings", errs)
    if not mappings:
        errs.append(
            required(f"{_EXTENDED}.requestMappings", "at least one request mapping is required")
        )
    seen: set[tuple[Any, Any]] = set()
    for i, entry in enumerate(mappings):
        p = f"{_EXTENDED}.requestMappings[{i}]"
        entry = as_dict(entry, p, errs)
        container, resource = entry.get("containerName"), entry.get("resourceName")
        if container not in containers:
            errs.append(
                invalid(
                    f"{p}.containerName",
                    container,
                    "must match the name of an entry in `spec.initContainers.name` or "
                    "`spec.containers.name`",
                )
            )
        add_invalid(errs, f"{p}.resourceName", resource, names.is_qualified_name(resource))
        request = entry.get("requestName")
        add_invalid(errs, f"{p}.requestName", request, names.is_dns1123_label(request))
        if (container, resource) in seen:
            errs.append(duplicate(p, f"{container}/{resource}"))
        seen.add((container, resource))
    claim = status.get("resourceClaimName")
    add_invalid(errs, f"{_EXTENDED}.resourceClaimName", claim, names.is_dns1123_subdomain(claim))
    return errs


def _conditions(conditions: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, cond in enumerate(as_list(conditions, path, errs)):
        kind = as_dict(cond, f"{path}[{i}]", errs).get("type")
        if kind in _SYSTEM_CONDITIONS:
            continue
        add_invalid(errs, f"{path}[{i}].type", kind, names.is_qualified_name(kind))
    return errs


def _pod_ips(status: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("podIP", "hostIP"):
        value = status.get(key)
        if value and not _is_ip(value):
            errs.append(invalid(f"status.{key}", value, "must be a valid IP address"))
    for key in ("podIPs", "hostIPs"):
        seen: set[Any] = set()
        for i, entry in enumerate(as_list(status.get(key), f"status.{key}", errs)):
            ip = as_dict(entry, f"status.{key}[{i}]", errs).get("ip")
            if not _is_ip(ip):
                errs.append(invalid(f"status.{key}[{i}].ip", ip, "must be a valid IP address"))
            elif ip in seen:
                errs.append(duplicate(f"status.{key}[{i}].ip", ip))
            else:
                seen.add(ip)
    return errs


def _is_ip(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _claim_statuses(statuses: Any, claim_names: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, entry in enumerate(as_list(statuses, path, errs)):
        p = f"{path}[{i}]"
        entry = as_dict(entry, p, errs)
        name = entry.get("name")
        if name not in claim_names:
            errs.append(
                invalid(
                    f"{p}.name", name, "must match the name of an entry in `spec.resourceClaims`"
                )
            )
        if isinstance(name, str):
            if name in seen:
                errs.append(duplicate(f"{p}.name", name))
            seen.add(name)
        claim = entry.get("resourceClaimName")
        if claim is not None:
            # Upstream reports this at `.name` (a quirk); the field at fault is clearer.
            add_invalid(errs, f"{p}.resourceClaimName", claim, names.is_dns1123_subdomain(claim))
    return errs
