"""resource.k8s.io/v1alpha2 rules: ResourceClaim, ResourceClaimTemplate, ResourceClass and
PodSchedulingContext (kubernetes/kubernetes pkg/apis/resource/validation, 1.28).
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation import nodeaffinity
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    immutable,
    semantic_equal,
    shown,
    too_long,
    validate_annotations,
    validate_labels,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)

ALLOCATION_MODES = ["Immediate", "WaitForFirstConsumer"]
RESERVED_FOR_MAX = 32
RESOURCE_HANDLES_MAX = 32
RESOURCE_HANDLE_DATA_MAX = 16384
NODE_LIST_MAX = 128
DRIVER_NAME_MAX = 63


def validate_driver_name(value: Any, path: str) -> list[FieldError]:
    """ValidateCSIDriverName: required, at most 63 characters, a subdomain once lowercased."""
    if not isinstance(value, str):
        return [invalid(path, shown(value), "must be a string")]
    errs: list[FieldError] = []
    if not value:
        errs.append(required(path))
    if len(value) > DRIVER_NAME_MAX:
        errs.append(too_long(path, value, DRIVER_NAME_MAX))
    add_invalid(errs, path, value, names.is_dns1123_subdomain(value.lower()))
    return errs


def _claim_spec(spec: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    spec = as_dict(spec, path, errs)
    class_name = spec.get("resourceClassName") or ""
    add_invalid(
        errs, f"{path}.resourceClassName", class_name, names.is_dns1123_subdomain(class_name)
    )
    ref = spec.get("parametersRef")
    if ref is not None:
        ref = as_dict(ref, f"{path}.parametersRef", errs)
        for key in ("kind", "name"):
            if not ref.get(key):
                errs.append(required(f"{path}.parametersRef.{key}"))
    mode = spec.get("allocationMode") or ""
    if mode not in ALLOCATION_MODES:
        errs.append(not_supported(f"{path}.allocationMode", mode, ALLOCATION_MODES))
    return errs


def validate_claim(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    errs.extend(_claim_spec(obj.get("spec"), "spec"))
    return errs


def validate_claim_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(immutable("spec", obj.get("spec"), old.get("spec")))
    errs.extend(validate_claim(obj))
    return errs


def validate_claim_template(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    errs.extend(_template_meta(spec.get("metadata"), "spec.metadata"))
    errs.extend(_claim_spec(spec.get("spec"), "spec.spec"))
    return errs


def _template_meta(md: Any, path: str) -> list[FieldError]:
    """Only labels and annotations may be set (ValidateTemplateObjectMeta)."""
    errs: list[FieldError] = []
    md = as_dict(md, path, errs)
    errs.extend(validate_annotations(md.get("annotations"), f"{path}.annotations"))
    errs.extend(validate_labels(md.get("labels"), f"{path}.labels"))
    for key in sorted(md):
        if key not in ("labels", "annotations") and not semantic_equal(md[key], None):
            errs.append(forbidden(f"{path}.{key}", "cannot be set"))
    return errs


def validate_claim_template_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(immutable("spec", obj.get("spec"), old.get("spec")))
    errs.extend(validate_claim_template(obj))
    return errs


def validate_class(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    errs.extend(validate_driver_name(obj.get("driverName", ""), "driverName"))
    ref = obj.get("parametersRef")
    if ref is not None:
        ref = as_dict(ref, "parametersRef", errs)
        for key in ("kind", "name"):
            if not ref.get(key):
                errs.append(required(f"parametersRef.{key}"))
        namespace = ref.get("namespace")
        if namespace:
            add_invalid(
                errs, "parametersRef.namespace", namespace, names.is_dns1123_label(namespace)
            )
    if obj.get("suitableNodes") is not None:
        errs.extend(nodeaffinity.validate_node_selector(obj["suitableNodes"], "suitableNodes"))
    return errs


def validate_class_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_class(obj))
    return errs


def _node_name_set(values: Any, path: str) -> list[FieldError]:
    """validateSliceIsASet(..., validateNodeName): valid names, no duplicates, at most 128."""
    errs: list[FieldError] = []
    items = as_list(values, path, errs)
    seen: set[str] = set()
    for i, value in enumerate(items):
        p = f"{path}[{i}]"
        add_invalid(errs, p, value, names.is_dns1123_subdomain(value))
        if isinstance(value, str):
            if value in seen:
                errs.append(duplicate(p, value))
            seen.add(value)
    if len(items) > NODE_LIST_MAX:
        errs.append(_too_many(path, len(items), NODE_LIST_MAX))
    return errs


def _too_many(path: str, actual: int, limit: int) -> FieldError:
    return FieldError("FieldValueTooMany", path, f"must have at most {limit} items", actual)


def validate_scheduling_context(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    errs.extend(_node_name_set(spec.get("potentialNodes"), "spec.potentialNodes"))
    selected = spec.get("selectedNode")
    if selected:
        add_invalid(errs, "spec.selectedNode", selected, names.is_dns1123_subdomain(selected))
    return errs


def validate_scheduling_context_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_scheduling_context(obj))
    return errs


def validate_scheduling_context_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta_update(md, old.get("metadata") or {})
    errs.extend(validate_meta_content(md))
    status = as_dict(obj.get("status"), "status", errs)
    # Upstream prints `status.claims` here (a quirk); the real field name is clearer.
    path = "status.resourceClaims"
    seen: set[str] = set()
    for i, entry in enumerate(as_list(status.get("resourceClaims"), path, errs)):
        p = f"{path}[{i}]"
        entry = as_dict(entry, p, errs)
        errs.extend(_node_name_set(entry.get("unsuitableNodes"), f"{p}.unsuitableNodes"))
        name = entry.get("name")
        if name in seen:
            errs.append(duplicate(p, name))
        elif isinstance(name, str):
            seen.add(name)
    return errs
