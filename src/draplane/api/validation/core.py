"""core/v1 and coordination rules for Node, Namespace, Event, ConfigMap and Lease, plus the
metadata-only rules used for any kind without its own function.
"""

from __future__ import annotations

import re
from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, required
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.api.validation import nodeaffinity
from draplane.api.validation.objectmeta import (
    STANDARD_FINALIZERS,
    add_invalid,
    as_dict,
    as_list,
    field_dict,
    shown,
    too_long,
    type_invalid,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)

MAX_CONFIG_MAP_SIZE = 1024 * 1024
_RFC3339_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", re.IGNORECASE
)


def validate_generic(rt: ResourceType, obj: Obj) -> list[FieldError]:
    name_fn = (
        names.name_is_dns_subdomain if rt.resource != "namespaces" else names.name_is_dns_label
    )
    return validate_object_meta(obj["metadata"], namespaced=rt.namespaced, name_fn=name_fn)


def validate_generic_update(rt: ResourceType, obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_generic(rt, obj))
    return errs


def validate_generic_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    return errs


# Node -------------------------------------------------------------------------------------------


def validate_node(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    errs.extend(_node_body(obj))
    return errs


def _node_body(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    spec = as_dict(obj.get("spec"), "spec", errs)
    if spec.get("taints"):
        errs.extend(_taints(spec["taints"], "spec.taints"))
    status = as_dict(obj.get("status"), "status", errs)
    for key in ("capacity", "allocatable"):
        for name, value in as_dict(status.get(key), f"status.{key}", errs).items():
            errs.extend(_quantity(value, f"status.{key}.{name}", integer="/" in name))
    seen: set[tuple[Any, Any]] = set()
    for i, addr in enumerate(as_list(status.get("addresses"), "status.addresses", errs)):
        addr = as_dict(addr, f"status.addresses[{i}]", errs)
        pair = (addr.get("type"), addr.get("address"))
        if pair in seen:
            errs.append(duplicate(f"status.addresses[{i}]", shown(addr)))
        seen.add(pair)
    return errs


def _quantity(value: Any, path: str, *, integer: bool) -> list[FieldError]:
    try:
        q = parse_quantity(value)
    except ValueError as exc:
        return [invalid(path, value, str(exc))]
    if q < 0:
        return [invalid(path, str(value), "must be greater than or equal to 0")]
    if integer and q.denominator != 1:
        return [invalid(path, str(value), "must be an integer")]
    return []


def _taints(taints: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple[Any, Any]] = set()
    for i, taint in enumerate(as_list(taints, path, errs)):
        p = f"{path}[{i}]"
        taint = as_dict(taint, p, errs)
        key, value, effect = taint.get("key"), taint.get("value") or "", taint.get("effect")
        add_invalid(errs, f"{p}.key", key, names.is_qualified_name(key))
        msgs = names.is_valid_label_value(value)
        if msgs:
            errs.append(invalid(f"{p}.value", value, ";".join(msgs)))
        if not effect:
            errs.append(required(f"{p}.effect"))
        else:
            errs.extend(nodeaffinity.validate_taint_effect(effect, f"{p}.effect"))
        if (key, effect) in seen:
            err = duplicate(p, shown(taint))
            errs.append(
                FieldError(
                    err.type, err.field, "taints must be unique by key and effect pair", err.value
                )
            )
        seen.add((key, effect))
    return errs


def validate_node_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_node(obj))
    old_spec = field_dict(old, "spec")
    spec = field_dict(obj, "spec")
    if old_spec.get("podCIDRs") and spec.get("podCIDRs") != old_spec.get("podCIDRs"):
        errs.append(
            forbidden(
                "spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid'
            )
        )
    if old_spec.get("providerID") and spec.get("providerID") != old_spec.get("providerID"):
        errs.append(
            forbidden(
                "spec.providerID", 'node updates may not change providerID except from "" to valid'
            )
        )
    return errs


def validate_node_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    errs.extend(_node_body(obj))
    return errs


# Namespace ----------------------------------------------------------------------------------------


def validate_namespace(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(obj["metadata"], namespaced=False, name_fn=names.name_is_dns_label)
    spec = as_dict(obj.get("spec"), "spec", errs)
    for f in as_list(spec.get("finalizers"), "spec.finalizers", errs):
        add_invalid(errs, "spec.finalizers", f, names.is_qualified_name(f))
        if isinstance(f, str) and "/" not in f and f not in STANDARD_FINALIZERS:
            errs.append(
                invalid(
                    "spec.finalizers",
                    f,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errs


def validate_namespace_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_namespace(obj))
    return errs


def validate_namespace_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta_update(md, old.get("metadata") or {})
    errs.extend(validate_meta_content(md))
    phase = field_dict(obj, "status").get("phase")
    if not md.get("deletionTimestamp"):
        if phase != "Active":
            errs.append(
                forbidden("status.phase", "may only be 'Active' if `deletionTimestamp` is empty")
            )
    elif phase != "Terminating":
        errs.append(
            forbidden(
                "status.phase", "may only be 'Terminating' if `deletionTimestamp` is not empty"
            )
        )
    return errs


# Event --------------------------------------------------------------------------------------------


def validate_event(obj: Obj) -> list[FieldError]:
    """A core/v1 Event (legacyValidateEvent, plus ObjectMeta and a required involvedObject)."""
    md = obj["metadata"]
    errs = validate_object_meta(md, namespaced=True, name_fn=names.name_is_dns_subdomain)
    involved = obj.get("involvedObject")
    if not isinstance(involved, dict) or not involved:
        errs.append(required("involvedObject"))
    return errs + legacy_event_errors(obj)


def legacy_event_errors(obj: Obj) -> list[FieldError]:
    """legacyValidateEvent: what every Event passes, whatever version wrote it (core/v1
    field names; the paths are the internal type's, as upstream reports them)."""
    errs: list[FieldError] = []
    md = obj["metadata"]
    involved = obj.get("involvedObject")
    if not isinstance(involved, dict):
        involved = {}
    namespace = md.get("namespace") or ""
    involved_ns = involved.get("namespace") or ""
    if not obj.get("eventTime"):
        if (not involved_ns and namespace not in ("", "default")) or (
            involved_ns and involved_ns != namespace
        ):
            errs.append(
                invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
            )
        return errs
    if not involved_ns and namespace not in ("default", "kube-system"):
        errs.append(
            invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
        )
    component = obj.get("reportingComponent") or ""
    if not component:
        errs.append(required("reportingController"))
    add_invalid(errs, "reportingController", component, names.is_qualified_name(component))
    for key, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
        value = obj.get(key) or ""
        if not value:
            errs.append(required(key))
        elif len(value) > limit:
            errs.append(invalid(key, "", f"can have at most {limit} characters"))
    message = obj.get("message") or ""
    if len(message) > 1024:
        errs.append(invalid("message", "", "can have at most 1024 characters"))
    return errs


def validate_event_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_event(obj))
    return errs


# ConfigMap ----------------------------------------------------------------------------------------


def validate_config_map(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    data = as_dict(obj.get("data"), "data", errs)
    binary = as_dict(obj.get("binaryData"), "binaryData", errs)
    total = 0
    for field, bag, other, other_name in (
        ("data", data, binary, "binaryData"),
        ("binaryData", binary, data, "data"),
    ):
        for key, value in bag.items():
            p = f"{field}[{key}]"
            add_invalid(errs, p, key, names.is_config_map_key(key))
            if key in other:
                errs.append(invalid(p, key, f"duplicate of key present in {other_name}"))
            if not isinstance(value, str):
                errs.append(type_invalid(p, value, "must be a string"))
                continue
            total += len(value.encode()) if field == "data" else len(value) * 3 // 4
    if total > MAX_CONFIG_MAP_SIZE:
        errs.append(too_long("", "", MAX_CONFIG_MAP_SIZE))
    return errs


def validate_config_map_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    if old.get("immutable") is True:
        if obj.get("immutable") is not True:
            errs.append(forbidden("immutable", "field is immutable when `immutable` is set"))
        for key in ("data", "binaryData"):
            if (obj.get(key) or {}) != (old.get(key) or {}):
                errs.append(forbidden(key, "field is immutable when `immutable` is set"))
    errs.extend(validate_config_map(obj))
    return errs


# Lease --------------------------------------------------------------------------------------------


def validate_lease(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    for key in ("holderIdentity",):
        if spec.get(key) is not None and not isinstance(spec[key], str):
            errs.append(type_invalid(f"spec.{key}", spec[key], "must be a string"))
    for key in ("acquireTime", "renewTime"):
        value = spec.get(key)
        if value is not None and (not isinstance(value, str) or not _RFC3339_RE.fullmatch(value)):
            errs.append(type_invalid(f"spec.{key}", value, "must be an RFC 3339 timestamp"))
    for key, minimum, detail in (
        ("leaseDurationSeconds", 1, "must be greater than 0"),
        ("leaseTransitions", 0, "must be greater than or equal to 0"),
    ):
        value = spec.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            errs.append(type_invalid(f"spec.{key}", value, "must be an integer"))
        elif value < minimum:
            errs.append(invalid(f"spec.{key}", value, detail))
    return errs


def validate_lease_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_lease(obj))
    return errs
