"""ResourceClaim status subresource rules (ValidateClaimStatusUpdate of kubernetes/kubernetes
pkg/apis/resource/validation, 1.28): allocation, reservedFor and deallocationRequested invariants.
"""

from __future__ import annotations

from typing import Any

from draplane.api.errors import FieldError, duplicate, forbidden, required
from draplane.api.meta import Obj
from draplane.api.validation import nodeaffinity
from draplane.api.validation.objectmeta import (
    as_dict,
    as_list,
    field_dict,
    immutable,
    validate_meta_content,
    validate_object_meta_update,
)
from draplane.api.validation.resource import (
    RESERVED_FOR_MAX,
    RESOURCE_HANDLE_DATA_MAX,
    RESOURCE_HANDLES_MAX,
    validate_driver_name,
)


def validate_claim_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta_update(md, old.get("metadata") or {})
    errs.extend(validate_meta_content(md))
    status = as_dict(obj.get("status"), "status", errs)
    old_status = field_dict(old, "status")
    allocation = status.get("allocation")
    driver = status.get("driverName")
    if driver:
        errs.extend(validate_driver_name(driver, "status.driverName"))
    elif allocation is not None:
        errs.append(required("status.driverName", "must be specified when `allocation` is set"))
    if allocation is not None:
        errs.extend(_allocation(allocation, "status.allocation"))
    reserved = as_list(status.get("reservedFor"), "status.reservedFor", errs)
    errs.extend(_consumers(reserved, "status.reservedFor"))
    errs.extend(
        _invariants(
            status, old_status, reserved=reserved, deleting=bool(md.get("deletionTimestamp"))
        )
    )
    return errs


def _allocation(allocation: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    allocation = as_dict(allocation, path, errs)
    handles = as_list(allocation.get("resourceHandles"), f"{path}.resourceHandles", errs)
    for i, handle in enumerate(handles):
        p = f"{path}.resourceHandles[{i}]"
        handle = as_dict(handle, p, errs)
        errs.extend(validate_driver_name(handle.get("driverName", ""), f"{p}.driverName"))
        data = handle.get("data") or ""
        if isinstance(data, str) and len(data) > RESOURCE_HANDLE_DATA_MAX:
            errs.append(
                FieldError(
                    "FieldValueTooLong",
                    f"{p}.data",
                    f"may not be longer than {RESOURCE_HANDLE_DATA_MAX}",
                    len(data),
                )
            )
    if len(handles) > RESOURCE_HANDLES_MAX:
        errs.append(_too_many(f"{path}.resourceHandles", len(handles), RESOURCE_HANDLES_MAX))
    if allocation.get("availableOnNodes") is not None:
        errs.extend(
            nodeaffinity.validate_node_selector(
                allocation["availableOnNodes"], f"{path}.availableOnNodes"
            )
        )
    return errs


def _too_many(path: str, actual: int, limit: int) -> FieldError:
    return FieldError("FieldValueTooMany", path, f"must have at most {limit} items", actual)


def _consumers(reserved: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    uids: set[Any] = set()
    for i, ref in enumerate(reserved):
        p = f"{path}[{i}]"
        ref = as_dict(ref, p, errs)
        for key in ("resource", "name", "uid"):
            if not ref.get(key):
                errs.append(required(f"{p}.{key}"))
        uid = ref.get("uid")
        if isinstance(uid, str):
            if uid in uids:
                errs.append(duplicate(f"{p}.uid", uid))
            uids.add(uid)
    if len(reserved) > RESERVED_FOR_MAX:
        errs.append(_too_many(path, len(reserved), RESERVED_FOR_MAX))
    return errs


def _ref_key(ref: Any) -> tuple[str, ...]:
    if not isinstance(ref, dict):
        return ()
    return tuple(str(ref.get(k) or "") for k in ("apiGroup", "resource", "name", "uid"))


def _invariants(
    status: Obj, old_status: Obj, *, reserved: list[Any], deleting: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")
    dealloc = status.get("deallocationRequested") is True
    old_dealloc = old_status.get("deallocationRequested") is True
    if reserved:
        if allocation is None:
            errs.append(
                forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
            )
        else:
            shareable = isinstance(allocation, dict) and allocation.get("shareable") is True
            if not shareable and len(reserved) > 1:
                errs.append(forbidden("status.reservedFor", "may not be reserved more than once"))
            if deleting or dealloc:
                old_keys = {_ref_key(r) for r in old_status.get("reservedFor") or []}
                if any(_ref_key(r) not in old_keys for r in reserved):
                    errs.append(
                        forbidden(
                            "status.reservedFor",
                            "new entries may not be added while `deallocationRequested` or "
                            "`deletionTimestamp` are set",
                        )
                    )
    if old_allocation is not None and allocation is not None:
        errs.extend(immutable("status.allocation", allocation, old_allocation))
    if not old_dealloc and dealloc and reserved:
        errs.append(
            forbidden(
                "status.deallocationRequested",
                "deallocation cannot be requested while `reservedFor` is set",
            )
        )
    if allocation is None and dealloc:
        errs.append(
            forbidden("status", "`allocation` must be set when `deallocationRequested` is set")
        )
    if old_dealloc and not dealloc and allocation is not None:
        errs.append(
            forbidden("status.deallocationRequested", "may not be cleared when `allocation` is set")
        )
    return errs
