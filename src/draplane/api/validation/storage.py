"""storage.k8s.io/v1 rules and defaults (pkg/apis/storage/validation, pkg/apis/storage/v1
defaults.go): StorageClass, CSIDriver, CSINode, CSIStorageCapacity and VolumeAttachment.

StorageClasses default `reclaimPolicy: Delete` and `volumeBindingMode: Immediate`, and their
provisioner, parameters, reclaim policy and binding mode cannot change. CSIDrivers default every
optional behaviour (attach required, no pod info, no storage capacity, ReadWriteOnceWithFSType,
Persistent volumes only, no republish, no SELinux mount); attachRequired and the lifecycle
modes are immutable. A VolumeAttachment's spec is immutable; its status is written through
`status`. The helpers shared with the core volume kinds (`csi_driver_name`, `quantity_errors`,
`access_modes`) live here too.
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
from draplane.api.validation.rbac import _label_selector

RECLAIM_POLICIES = ["Delete", "Retain"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Ephemeral", "Persistent"]
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
CSI_NODE_ID_MAX = 192
MAX_ATTACHED_VOLUME_METADATA = 256 * 1024
MAX_VOLUME_ERROR_MESSAGE = 1024
MIN_TOKEN_EXPIRATION = 600
MAX_TOKEN_EXPIRATION = 1 << 32


def _cluster_meta(obj: Obj) -> list[FieldError]:
    return validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )


def _update_meta(obj: Obj, old: Obj) -> list[FieldError]:
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
    errs = _cluster_meta(obj)
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
    errs.extend(_update_meta(obj, old))
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if not semantic_equal(obj.get(key), old.get(key)):
            errs.append(forbidden(key, f"updates to {key} are forbidden."))
    errs.extend(
        immutable("volumeBindingMode", obj.get("volumeBindingMode"), old.get("volumeBindingMode"))
    )
    return errs


# CSIDriver --------------------------------------------------------------------------------------

_CSI_DRIVER_DEFAULTS: dict[str, Any] = {
    "attachRequired": True,
    "podInfoOnMount": False,
    "storageCapacity": False,
    "fsGroupPolicy": "ReadWriteOnceWithFSType",
    "requiresRepublish": False,
    "seLinuxMount": False,
}


def default_csi_driver(obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    for key, value in _CSI_DRIVER_DEFAULTS.items():
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def _token_requests(requests: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    audiences: set[str] = set()
    for i, request in enumerate(as_list(requests, path, errs)):
        p = f"{path}[{i}]"
        request = as_dict(request, p, errs)
        audience = request.get("audience") or ""
        if audience in audiences:
            errs.append(duplicate(f"{p}.audience", audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if is_int(seconds):
            if seconds < MIN_TOKEN_EXPIRATION:
                errs.append(
                    invalid(
                        f"{p}.expirationSeconds",
                        seconds,
                        "may not specify a duration less than 10 minutes",
                    )
                )
            elif seconds > MAX_TOKEN_EXPIRATION:
                errs.append(
                    invalid(
                        f"{p}.expirationSeconds",
                        seconds,
                        "may not specify a duration larger than 2^32 seconds",
                    )
                )
    return errs


def validate_csi_driver(obj: Obj) -> list[FieldError]:
    errs = _cluster_meta(obj)
    errs.extend(_csi_driver_spec(as_dict(obj.get("spec"), "spec", errs)))
    return errs


def _csi_driver_spec(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    # Upstream's path spells it attachedRequired.
    for key, path in (
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ):
        if spec.get(key) is None:
            errs.append(required(path, ""))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    errs.extend(_token_requests(spec.get("tokenRequests"), "spec.tokenRequests"))
    modes = as_list(spec.get("volumeLifecycleModes"), "spec.volumeLifecycleModes", errs)
    for mode in modes:
        if mode not in LIFECYCLE_MODES:
            errs.append(
                not_supported("spec.volumeLifecycleModes", mode, ["Persistent", "Ephemeral"])
            )
    if spec.get("seLinuxMount") is None:
        errs.append(required("spec.seLinuxMount", ""))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if is_int(period) and period < 10:
        errs.append(
            invalid(
                "spec.nodeAllocatableUpdatePeriodSeconds",
                period,
                "must be greater than or equal to 10 seconds",
            )
        )
    return errs


def validate_csi_driver_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    errs.extend(_csi_driver_spec(as_dict(obj.get("spec"), "spec", errs)))
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    errs.extend(
        immutable(
            "spec.attachedRequired", spec.get("attachRequired"), old_spec.get("attachRequired")
        )
    )
    errs.extend(
        immutable(
            "spec.volumeLifecycleModes",
            spec.get("volumeLifecycleModes"),
            old_spec.get("volumeLifecycleModes"),
        )
    )
    return errs


# CSINode ----------------------------------------------------------------------------------------


def validate_csi_node(obj: Obj) -> list[FieldError]:
    errs = _cluster_meta(obj)
    spec = as_dict(obj.get("spec"), "spec", errs)
    seen: set[str] = set()
    for i, driver in enumerate(as_list(spec.get("drivers"), "spec.drivers", errs)):
        p = f"spec.drivers[{i}]"
        driver = as_dict(driver, p, errs)
        name = driver.get("name") or ""
        errs.extend(csi_driver_name(name, f"{p}.name"))
        node_id = driver.get("nodeID") or ""
        if not node_id:
            errs.append(required(f"{p}.nodeID", ""))
        elif len(node_id) > CSI_NODE_ID_MAX:
            errs.append(
                invalid(f"{p}.nodeID", node_id, f"must be {CSI_NODE_ID_MAX} characters or less")
            )
        count = as_dict(driver.get("allocatable"), f"{p}.allocatable", errs).get("count")
        if is_int(count) and count < 0:
            errs.append(
                invalid(f"{p}.allocatable.count", count, "must be greater than or equal to 0")
            )
        if name in seen:
            errs.append(duplicate(f"{p}.name", name))
        seen.add(name)
        keys: set[str] = set()
        for key in as_list(driver.get("topologyKeys"), f"{p}.topologyKeys", errs):
            if not key:
                errs.append(required(p, ""))
            if key in keys:
                errs.append(duplicate(p, key))
            keys.add(key)
            add_invalid(errs, p, key, names.is_qualified_name(key))
    return errs


def validate_csi_node_update(obj: Obj, old: Obj) -> list[FieldError]:
    """A driver still installed is immutable but for its allocatable count
    (MutableCSINodeAllocatableCount)."""
    errs = validate_csi_node(obj)
    errs.extend(_update_meta(obj, old))

    def fixed(driver: Any) -> Any:
        return {k: v for k, v in driver.items() if k != "allocatable"}

    new_drivers = [d for d in (obj.get("spec") or {}).get("drivers") or [] if isinstance(d, dict)]
    for previous in (old.get("spec") or {}).get("drivers") or []:
        for driver in new_drivers:
            if isinstance(previous, dict) and driver.get("name") == previous.get("name"):
                errs.extend(immutable("spec.drivers", fixed(driver), fixed(previous)))
    return errs


# CSIStorageCapacity -----------------------------------------------------------------------------


def validate_csi_storage_capacity(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    if obj.get("nodeTopology") is not None:
        errs.extend(_label_selector(obj["nodeTopology"], "nodeTopology"))
    class_name = obj.get("storageClassName") or ""
    add_invalid(errs, "storageClassName", class_name, names.name_is_dns_subdomain(class_name))
    if obj.get("capacity") is not None:
        errs.extend(quantity_errors(obj["capacity"], "capacity"))
    return errs


def validate_csi_storage_capacity_update(obj: Obj, old: Obj) -> list[FieldError]:
    """The inputs of the CSI GetCapacity call (topology, class) are immutable."""
    errs = _update_meta(obj, old)
    for key in ("nodeTopology", "storageClassName"):
        errs.extend(immutable(key, obj.get(key), old.get(key)))
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
    errs = _cluster_meta(obj)
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
    errs = _update_meta(obj, old)
    errs.extend(validate_volume_attachment(obj))
    if not semantic_equal(obj.get("spec"), old.get("spec")):
        errs.append(invalid("spec", shown(obj.get("spec")), "field is immutable"))
    return errs


def validate_volume_attachment_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = _update_meta(obj, old)
    errs.extend(validate_meta_content(obj["metadata"]))
    errs.extend(_attachment_status(obj.get("status")))
    return errs
