"""core/v1 PersistentVolume and PersistentVolumeClaim rules and defaults
(pkg/apis/core/validation ValidatePersistentVolume*, ValidatePersistentVolumeClaim*;
pkg/apis/core/v1 defaults.go).

Volumes: access modes, a storage capacity, exactly one source (hostPath, local with node
affinity, csi, nfs, ... checked where modelled), reclaim policy, class and volume mode; the
source and volume mode are immutable. Claims: access modes, a positive storage request, class,
volume mode; the spec is immutable but for a growing storage request and naming the volume of
an unbound claim. Defaults: `persistentVolumeReclaimPolicy: Retain`, `volumeMode: Filesystem`
for both, and both start `Pending` (set by the strategies' prepare for create).
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj, deep_copy
from draplane.api.quantity import parse_quantity
from draplane.api.schema.persistentvolume import SOURCE_NAMES
from draplane.api.validation.nodeaffinity import validate_node_selector
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    immutable,
    semantic_equal,
    shown,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.rbac import _label_selector
from draplane.api.validation.storage import csi_driver_name, quantity_errors

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
VOLUME_MODES = ["Block", "Filesystem"]


def default_volume_mode(spec: Obj) -> None:
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"


def default_persistent_volume(obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if isinstance(spec, dict):
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        default_volume_mode(spec)


def default_persistent_volume_claim(obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if isinstance(spec, dict):
        default_volume_mode(spec)


def _access_modes(modes: Any, path: str, errs: list[FieldError], empty: str | None) -> None:
    """Supported modes, ReadWriteOncePod alone; none at all is Required (`empty` its detail;
    None: checked by the caller)."""
    modes = as_list(modes, path, errs)
    if not modes and empty is not None:
        errs.append(required(path, empty))
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(path, mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))


def _class_and_mode(spec: Obj, errs: list[FieldError]) -> None:
    class_name = spec.get("storageClassName")
    if class_name:
        add_invalid(
            errs, "spec.storageClassName", class_name, names.is_dns1123_subdomain(class_name)
        )
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported("spec.volumeMode", mode, VOLUME_MODES))


_SOURCE_ORDER = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
"""The order ValidatePersistentVolumeSpec checks the sources in (the first one set counts)."""
_FORBIDDEN_PATHS = {"cephfs": "cephFS"}


def _no_backsteps(value: str, path: str) -> list[FieldError]:
    if ".." in value.replace("\\", "/").split("/"):
        return [invalid(path, value, "must not contain '..'")]
    return []


def _source(name: str, source: Any, *, affinity: bool) -> list[FieldError]:
    """The checks of the modelled sources (validateHostPathVolumeSource, ...)."""
    path = f"spec.{name}"
    source = source if isinstance(source, dict) else {}
    if name in ("hostPath", "local"):
        value = source.get("path") or ""
        errs = _no_backsteps(value, f"{path}.path") if value else [required(f"{path}.path", "")]
        if name == "local" and not affinity:
            errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
        return errs
    if name == "nfs":
        errs = [] if source.get("server") else [required(f"{path}.server", "")]
        value = source.get("path") or ""
        if not value:
            errs.append(required(f"{path}.path", ""))
        elif not value.startswith("/"):
            errs.append(invalid(f"{path}.path", value, "must be an absolute path"))
        return errs
    if name == "csi":
        errs = csi_driver_name(source.get("driver"), f"{path}.driver")
        if not source.get("volumeHandle"):
            errs.append(required(f"{path}.volumeHandle", ""))
        return errs
    return []


def _capacity(capacity: Any, errs: list[FieldError]) -> None:
    capacity = as_dict(capacity, "spec.capacity", errs)
    if not capacity:
        errs.append(required("spec.capacity", ""))
        return
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported("spec.capacity", shown(capacity), ["storage"]))
    for key, value in capacity.items():
        errs.extend(quantity_errors(value, f"spec.capacity[{key}]", positive=True))


def validate_persistent_volume(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=False, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    _access_modes(spec.get("accessModes"), "spec.accessModes", errs, "")
    _capacity(spec.get("capacity"), errs)
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    has_affinity = False
    if affinity is not None:
        affinity = as_dict(affinity, "spec.nodeAffinity", errs)
        if affinity.get("required") is None:
            errs.append(
                required("spec.nodeAffinity.required", "must specify required node constraints")
            )
        else:
            has_affinity = True
            errs.extend(validate_node_selector(affinity["required"], "spec.nodeAffinity.required"))
    found = 0
    for name in _SOURCE_ORDER:
        if spec.get(name) is None:
            continue
        if found and name != "flexVolume":
            path = _FORBIDDEN_PATHS.get(name, name)
            errs.append(forbidden(f"spec.{path}", "may not specify more than 1 volume type"))
            continue
        found += 1
        errs.extend(_source(name, spec[name], affinity=has_affinity))
    if not found:
        errs.append(required("spec", "must specify a volume type"))
    host_path = spec.get("hostPath")
    if (
        isinstance(host_path, dict)
        and str(host_path.get("path") or "").rstrip("/") == ""
        and host_path.get("path")
        and policy == "Recycle"
    ):
        errs.append(
            forbidden(
                "spec.persistentVolumeReclaimPolicy",
                "may not be 'recycle' for a hostPath mount of '/'",
            )
        )
    _class_and_mode(spec, errs)
    return errs


def validate_persistent_volume_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_persistent_volume(obj)
    errs.extend(validate_object_meta_update(obj["metadata"], old.get("metadata") or {}))
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if any(not semantic_equal(spec.get(n), old_spec.get(n)) for n in SOURCE_NAMES):
        errs.append(
            forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            )
        )
    # Upstream's paths of these two leave out `spec`.
    errs.extend(immutable("volumeMode", spec.get("volumeMode"), old_spec.get("volumeMode")))
    if old_spec.get("nodeAffinity"):
        errs.extend(
            immutable("nodeAffinity", spec.get("nodeAffinity"), old_spec.get("nodeAffinity"))
        )
    return errs


def validate_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    """A PersistentVolume's or claim's `status` update: its metadata only."""
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    return errs


# PersistentVolumeClaim --------------------------------------------------------------------------


def _requested_storage(spec: Obj) -> Any:
    return ((spec.get("resources") or {}).get("requests") or {}).get("storage")


def _data_source(source: Any, path: str) -> list[FieldError]:
    """validateDataSource / validateDataSourceRef."""
    errs: list[FieldError] = []
    source = as_dict(source, path, errs)
    for key in ("name", "kind"):
        if not source.get(key):
            errs.append(required(f"{path}.{key}", ""))
    group = source.get("apiGroup") or ""
    if not group and source.get("kind") != "PersistentVolumeClaim":
        errs.append(
            invalid(
                path,
                source.get("kind") or "",
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            )
        )
    elif group:
        add_invalid(errs, f"{path}.apiGroup", group, names.is_dns1123_subdomain(group))
    return errs


def validate_persistent_volume_claim(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    modes = as_list(spec.get("accessModes"), "spec.accessModes", errs)
    if not modes:
        errs.append(required("spec.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs.extend(_label_selector(spec["selector"], "spec.selector"))
    _access_modes(modes, "spec.accessModes", errs, None)
    storage = _requested_storage(spec)
    if storage is None:
        errs.append(required("spec.resources[storage]", ""))
    else:
        errs.extend(quantity_errors(storage, "spec.resources[storage]", positive=True))
    _class_and_mode(spec, errs)
    for key in ("dataSource", "dataSourceRef"):
        if spec.get(key) is not None:
            errs.extend(_data_source(spec[key], f"spec.{key}"))
    return errs


def _storage_value(value: Any) -> Any:
    try:
        return parse_quantity(str(value))
    except ValueError:
        return None


def validate_persistent_volume_claim_update(obj: Obj, old: Obj) -> list[FieldError]:
    """The spec is immutable except the storage request of a bound claim (never shrinking)
    and the volumeName of a claim that had none."""
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_persistent_volume_claim(obj))
    spec = deep_copy(obj.get("spec") or {})
    old_spec = deep_copy(old.get("spec") or {})
    new_storage, old_storage = _requested_storage(spec), _requested_storage(old_spec)
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = spec.get("volumeName")
    bound = (obj.get("status") or {}).get("phase") == "Bound"
    requests = (spec.get("resources") or {}).get("requests")
    if bound and isinstance(requests, dict):
        requests["storage"] = old_storage
    spec["volumeAttributesClassName"] = old_spec.get("volumeAttributesClassName")
    if not semantic_equal(spec, old_spec):
        errs.append(
            forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and "
                "volumeAttributesClassName for bound claims",
            )
        )
    new_value, old_value = _storage_value(new_storage), _storage_value(old_storage)
    if new_value is not None and old_value is not None and new_value < old_value:
        errs.append(
            forbidden(
                "spec.resources.requests.storage", "field can not be less than previous value"
            )
        )
    errs.extend(
        immutable(
            "volumeMode", (obj.get("spec") or {}).get("volumeMode"), old_spec.get("volumeMode")
        )
    )
    return errs
