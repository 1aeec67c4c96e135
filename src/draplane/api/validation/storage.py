"""storage.k8s.io/v1 StorageClass and VolumeAttachment rules and defaults
(pkg/apis/storage/validation, pkg/apis/storage/v1 defaults.go); the CSI kinds' are in `csi`.

StorageClasses default `reclaimPolicy: Delete` and `volumeBindingMode: Immediate`, and their
provisioner, parameters, reclaim policy and binding mode cannot change. A VolumeAttachment's
spec is immutable; its status is written through `status`. The helpers the CSI and core volume
kinds share (`csi_driver_name`, `quantity_errors`) live here too.
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    immutable,
    semantic_equal,
    shown,
    too_long,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import is_int

RECLAIM_POLICIES = ["Delete", "Retain"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
MAX_ATTACHED_VOLUME_METADATA = 256 * 1024
MAX_VOLUME_ERROR_MESSAGE = 1024


def cluster_meta(obj: Obj) -> list[FieldError]:
    return validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )


def update_meta(obj: Obj, old: Obj) -> list[FieldError]:
    return validate_object_meta_update(obj["metadata"], old.get("metadata") or {})


def csi_driver_name(value: Any, path: str) -> list[FieldError]:
    """ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain (any case)."""
    text = str(value or "")
    errs: list[FieldError] = [] if text else [required(path, "")]
    if len(text) > 63:
        errs.append(too_long(path, text, 63))
    add_invalid(errs, path, text, names.is_dns1123_subdomain(text.lower()))
    return errs


def quantity_errors(value: Any, path: str, *, positive: bool = False) -> list[FieldError]:
    """A quantity that parses and is not negative (`positive`: greater than zero)."""
    try:
        q = parse_quantity(str(value))
    except ValueError as exc:
        return [invalid(path, value, str(exc))]
    if positive and q <= 0:
        return [invalid(path, str(value), "must be greater than zero")]
    if q < 0:
        return [invalid(path, str(value), "must be greater than or equal to 0")]
    return []


def _parameters(params: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    params = as_dict(params, path, errs)
    if len(params) > MAX_PARAMETERS:
        return [too_long(path, "Provisioner Parameters exceeded max allowed", MAX_PARAMETERS)]
    size = 0
    for key, value in params.items():
        if not key:
            errs.append(invalid(path, key, "field can not be empty."))
        size += len(key) + len(str(value))
    if size > MAX_PARAMETERS_SIZE:
        errs.append(too_long(path, "", MAX_PARAMETERS_SIZE))
    return errs


def topology_selector_term(term: Any, path: str) -> list[FieldError]:
    """ValidateTopologySelectorTerm: each requirement a qualified key with unique values."""
    errs: list[FieldError] = []
    exprs = as_list(
        as_dict(term, path, errs).get("matchLabelExpressions"),
        f"{path}.matchLabelExpressions",
        errs,
    )
    keys: set[str] = set()
    for i, req in enumerate(exprs):
        p = f"{path}.matchLabelExpressions[{i}]"
        req = as_dict(req, p, errs)
        key = req.get("key") or ""
        add_invalid(errs, f"{p}.key", key, names.is_qualified_name(key))
        if key in keys:
            errs.append(duplicate(f"{p}.key", key))
        keys.add(key)
        values = as_list(req.get("values"), f"{p}.values", errs)
        if not values:
            errs.append(required(f"{p}.values", "must specify as least one value"))
        seen: set[Any] = set()
        for j, value in enumerate(values):
            add_invalid(errs, f"{p}.values[{j}]", value, names.is_valid_label_value(value))
            if value in seen:
                errs.append(duplicate(f"{p}.values[{j}]", value))
            seen.add(value)
    return errs


# StorageClass -----------------------------------------------------------------------------------


def default_storage_class(obj: Obj) -> None:
    if not obj.get("reclaimPolicy"):
        obj["reclaimPolicy"] = "Delete"
    if not obj.get("volumeBindingMode"):
        obj["volumeBindingMode"] = "Immediate"


def validate_storage_class(obj: Obj) -> list[FieldError]:
    errs = cluster_meta(obj)
    provisioner = obj.get("provisioner") or ""
    if not provisioner:
        errs.append(required("provisioner", ""))
    else:
        add_invalid(errs, "provisioner", provisioner, names.is_qualified_name(provisioner.lower()))
    errs.extend(_parameters(obj.get("parameters"), "parameters"))
    policy = obj.get("reclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", policy, RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if not mode:
        errs.append(required("volumeBindingMode", ""))
    elif mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    for i, term in enumerate(as_list(obj.get("allowedTopologies"), "allowedTopologies", errs)):
        errs.extend(topology_selector_term(term, f"allowedTopologies[{i}]"))
    return errs


def validate_storage_class_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_storage_class(obj)
    errs.extend(update_meta(obj, old))
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if not semantic_equal(obj.get(key), old.get(key)):
            errs.append(forbidden(key, f"updates to {key} are forbidden."))
    errs.extend(
        immutable("volumeBindingMode", obj.get("volumeBindingMode"), old.get("volumeBindingMode"))
    )
    return errs


# VolumeAttachment -------------------------------------------------------------------------------


def _source(source: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    source = as_dict(source, path, errs)
    name, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
    both = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if name is None and inline is None:
        errs.append(required(path, both))
    elif name is not None and inline is not None:
        errs.append(forbidden(path, both))
    elif name is not None and not name:
        errs.append(
            required(f"{path}.persistentVolumeName", "must specify non empty persistentVolumeName")
        )
    return errs


def _volume_error(error: Any, path: str) -> list[FieldError]:
    error = error if isinstance(error, dict) else {}
    message, code = error.get("message"), error.get("errorCode")
    errs: list[FieldError] = []
    if isinstance(message, str) and len(message) > MAX_VOLUME_ERROR_MESSAGE:
        errs.append(too_long(f"{path}.message", "", MAX_ATTACHED_VOLUME_METADATA))
    if is_int(code) and code < 0:
        errs.append(
            invalid(f"{path}.errorCode", code, "must be between 0 and 2147483647, inclusive")
        )
    return errs


def _attachment_status(status: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    status = as_dict(status, "status", errs)
    metadata = as_dict(status.get("attachmentMetadata"), "status.attachmentMetadata", errs)
    size = sum(len(k) + len(str(v)) for k, v in metadata.items())
    if size > MAX_ATTACHED_VOLUME_METADATA:
        errs.append(too_long("status.attachmentMetadata", "", MAX_ATTACHED_VOLUME_METADATA))
    for key in ("attachError", "detachError"):
        errs.extend(_volume_error(status.get(key), f"status.{key}"))
    return errs


def validate_volume_attachment(obj: Obj) -> list[FieldError]:
    """ValidateVolumeAttachment, then ValidateVolumeAttachmentV1's extra checks."""
    errs = cluster_meta(obj)
    spec = as_dict(obj.get("spec"), "spec", errs)
    attacher = spec.get("attacher") or ""
    if not attacher:
        errs.append(required("spec.attacher", ""))
    errs.extend(_source(spec.get("source"), "spec.source"))
    node = spec.get("nodeName") or ""
    add_invalid(errs, "spec.nodeName", node, names.name_is_dns_subdomain(node))
    errs.extend(_attachment_status(obj.get("status")))
    errs.extend(csi_driver_name(attacher, "spec.attacher"))
    volume = as_dict(spec.get("source"), "spec.source", errs).get("persistentVolumeName")
    if volume:
        add_invalid(
            errs, "spec.source.persistentVolumeName", volume, names.name_is_dns_subdomain(volume)
        )
    return errs


def validate_volume_attachment_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = update_meta(obj, old)
    errs.extend(validate_volume_attachment(obj))
    if not semantic_equal(obj.get("spec"), old.get("spec")):
        errs.append(invalid("spec", shown(obj.get("spec")), "field is immutable"))
    return errs


def validate_volume_attachment_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = update_meta(obj, old)
    errs.extend(validate_meta_content(obj["metadata"]))
    errs.extend(_attachment_status(obj.get("status")))
    return errs
