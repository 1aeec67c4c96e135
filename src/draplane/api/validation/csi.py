"""storage.k8s.io/v1 CSIDriver, CSINode and CSIStorageCapacity rules and defaults
(pkg/apis/storage/validation, pkg/apis/storage/v1 defaults.go).

CSIDrivers default every optional behaviour (attach required, no pod info, no storage capacity,
ReadWriteOnceWithFSType, Persistent volumes only, no republish, no SELinux mount); attachRequired
and the lifecycle modes are immutable. A CSINode's drivers keep everything but their allocatable
count; a CSIStorageCapacity its topology and class.
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    immutable,
    validate_object_meta,
)
from draplane.api.validation.podtemplate import is_int
from draplane.api.validation.rbac import _label_selector
from draplane.api.validation.storage import (
    cluster_meta,
    csi_driver_name,
    quantity_errors,
    update_meta,
)

FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Ephemeral", "Persistent"]
CSI_NODE_ID_MAX = 192
MIN_TOKEN_EXPIRATION = 600
MAX_TOKEN_EXPIRATION = 1 << 32


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
    errs = cluster_meta(obj)
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
    errs = update_meta(obj, old)
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
    errs = cluster_meta(obj)
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
    errs.extend(update_meta(obj, old))

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
    errs = update_meta(obj, old)
    for key in ("nodeTopology", "storageClassName"):
        errs.extend(immutable(key, obj.get(key), old.get(key)))
    return errs
