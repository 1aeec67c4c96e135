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


def _access_modes(modes: Any, path: str, errs: list[FieldError], empty: str) -> None:
    modes = as_list(modes, path, errs)
    if not modes:
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


def _absolute(value: Any, path: str) -> list[FieldError]:
    if not value:
        return [required(path, "")]
    if not str(value).startswith("/"):
        return [invalid(path, value, "must be an absolute path")]
    return []


def _source(spec: Obj, name: str, source: Any) -> list[FieldError]:
    """The checks of the modelled sources (validateHostPathVolumeSource, ...)."""
    path = f"spec.{name}"
    source = source if isinstance(source, dict) else {}
    if name == "hostPath":
        return [] if source.get("path") else [required(f"{path}.path", "")]
    if name == "local":
        errs = _absolute(source.get("path"), f"{path}.path")
        if not spec.get("nodeAffinity"):
            errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
        return errs
    if name == "nfs":
        errs = [] if source.get("server") else [required(f"{path}.server", "")]
        return errs + _absolute(source.get("path"), f"{path}.path")
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
    _class_and_mode(spec, errs)
    sources = [name for name in SOURCE_NAMES if spec.get(name) is not None]
    if not sources:
        errs.append(required("spec", "must specify a volume type"))
    for name in sources[1:]:
        errs.append(forbidden(f"spec.{name}", "may not specify more than 1 volume type"))
    if sources:
        errs.extend(_source(spec, sources[0], spec[sources[0]]))
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        affinity = as_dict(affinity, "spec.nodeAffinity", errs)
        if affinity.get("required") is None:
            errs.append(
                required("spec.nodeAffinity.required", "must specify required node constraints")
            )
        else:
            errs.extend(validate_node_selector(affinity["required"], "spec.nodeAffinity.required"))
    return errs


def validate_persistent_volume_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_persistent_volume(obj))
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if any(not semantic_equal(spec.get(n), old_spec.get(n)) for n in SOURCE_NAMES):
        errs.append(
            forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            )
        )
    errs.extend(immutable("spec.volumeMode", spec.get("volumeMode"), old_spec.get("volumeMode")))
    if old_spec.get("nodeAffinity"):
        errs.extend(
            immutable("spec.nodeAffinity", spec.get("nodeAffinity"), old_spec.get("nodeAffinity"))
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


def validate_persistent_volume_claim(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    _access_modes(
        spec.get("accessModes"), "spec.accessModes", errs, "at least 1 access mode is required"
    )
    if spec.get("selector") is not None:
        errs.extend(_label_selector(spec["selector"], "spec.selector"))
    storage = _requested_storage(spec)
    if storage is None:
        errs.append(required("spec.resources[storage]", ""))
    else:
        errs.extend(quantity_errors(storage, "spec.resources[storage]", positive=True))
    _class_and_mode(spec, errs)
    for key in ("dataSource", "dataSourceRef"):
        source = spec.get(key)
        if isinstance(source, dict):
            for field in ("kind", "name"):
                if not source.get(field):
                    errs.append(required(f"spec.{key}.{field}", ""))
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
    return errs
