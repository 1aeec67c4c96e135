"""resource.k8s.io/v1 ResourceClaim status rules (validateResourceClaimStatusUpdate of
kubernetes/kubernetes pkg/apis/resource/validation, 1.36): a new allocation names the claim's
requests, valid drivers, pools, devices and a valid nodeSelector; its config names only the
claim's requests; an allocation is immutable once set; reservedFor holds at most 256 unique
consumers; status.devices entries are allocated devices with metav1 conditions.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from typing import Any

import orjson

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation import devicecommon as c, nodeaffinity
from draplane.api.validation.objectmeta import (
    as_dict,
    as_str,
    field_dict,
    semantic_equal,
    shown,
    validate_object_meta_update,
)

RESULTS_MAX = 32
ALLOCATION_CONFIG_MAX = 64  # a class's and the claim's config
REQUEST_REFS_MAX = 32
RESERVED_FOR_MAX = 256
DEVICE_CONDITIONS_MAX = 8
DEVICE_DATA_MAX = 10 * 1024
INTERFACE_NAME_MAX = 256
HW_ADDRESS_MAX = 128
IPS_MAX = 16
CONFIG_SOURCES = ["FromClaim", "FromClass"]
CONDITION_STATUSES = ["False", "True", "Unknown"]
REASON_MAX = 1024
MESSAGE_MAX = 32 * 1024
_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
REASON_ERROR = (
    "a condition reason must start with alphabetic character, optionally followed by a string "
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
)

DeviceKey = tuple[str, str, str, str]
"""A SharedDeviceID: driver, pool, device and shareID ("" when unshared)."""


def request_names(spec: Any) -> set[str]:
    """The names a result or a config entry may reference: each request, and `request/sub`
    for each of a request's `firstAvailable` subrequests."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    known: set[str] = set()
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict) or not isinstance(request.get("name"), str):
            continue
        known.add(request["name"])
        for sub in request.get("firstAvailable") or []:
            if isinstance(sub, dict) and isinstance(sub.get("name"), str):
                known.add(f"{request['name']}/{sub['name']}")
    return known


def _key(entry: Obj) -> DeviceKey:
    return (
        str(entry.get("driver", "")),
        str(entry.get("pool", "")),
        str(entry.get("device", "")),
        str(entry.get("shareID") or ""),
    )


def _device_id(entry: Obj, at: str, errs: list[FieldError]) -> None:
    """driver, pool, device and shareID of a result or a status entry."""
    errs.extend(c.validate_driver_name(entry.get("driver", ""), f"{at}.driver"))
    c.pool_name(entry.get("pool"), f"{at}.pool", errs)
    device = as_str(entry.get("device"), f"{at}.device", errs)
    if not device:
        errs.append(required(f"{at}.device"))
    else:
        c.add_invalid(errs, f"{at}.device", device, names.is_dns1123_label(device))
    if entry.get("shareID") is not None:
        _uid(as_str(entry["shareID"], f"{at}.shareID", errs), f"{at}.shareID", errs)


def _uid(text: str, path: str, errs: list[FieldError]) -> None:
    try:
        uuid.UUID(text)
    except ValueError:
        errs.append(invalid(path, text, f"error validating uid: invalid UUID length: {len(text)}"))
        return
    if len(text) != 36 or text != text.lower():
        errs.append(
            invalid(
                path,
                text,
                "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                "with lowercase hexadecimal characters",
            )
        )


def _references(value: Any, path: str, known: set[str], errs: list[FieldError]) -> None:
    seen: list[str] = []
    for _, ref, at in c.items(value, path, errs, REQUEST_REFS_MAX):
        ref = as_str(ref, at, errs)
        c.request_ref(ref, at, known, errs)
        if ref in seen:
            errs.append(duplicate(at, ref))
        seen.append(ref)


def _allocation(allocation: Obj, path: str, known: set[str], errs: list[FieldError]) -> None:
    """A new allocation (validateAllocationResult)."""
    devices = as_dict(allocation.get("devices"), f"{path}.devices", errs)
    results = c.items(devices.get("results"), f"{path}.devices.results", errs, RESULTS_MAX)
    for _, result, at in results:
        result = as_dict(result, at, errs)
        request = as_str(result.get("request"), f"{at}.request", errs)
        c.request_ref(request, f"{at}.request", known, errs)
        _device_id(result, at, errs)
        c.binding_parameters(result, at, errs)
        c.tolerations(result.get("tolerations"), f"{at}.tolerations", errs)
    for _, config, at in c.items(
        devices.get("config"), f"{path}.devices.config", errs, ALLOCATION_CONFIG_MAX
    ):
        config = as_dict(config, at, errs)
        source = as_str(config.get("source"), f"{at}.source", errs)
        if not source:
            errs.append(required(f"{at}.source"))
        elif source not in CONFIG_SOURCES:
            errs.append(not_supported(f"{at}.source", source, CONFIG_SOURCES))
        _references(config.get("requests"), f"{at}.requests", known, errs)
        c.device_config(config, at, errs)
    if allocation.get("nodeSelector") is not None:
        errs.extend(
            nodeaffinity.validate_node_selector(allocation["nodeSelector"], f"{path}.nodeSelector")
        )


def allocated_devices(allocation: Any) -> set[DeviceKey]:
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    return {_key(r) for r in results or [] if isinstance(r, dict)}


def validate_claim_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    status = as_dict(obj.get("status"), "status", errs)
    old_status = field_dict(old, "status")
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    uids = _reserved_for(status.get("reservedFor"), errs)
    if uids and allocation is None:
        errs.append(
            forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
        )
    old_uids = {
        str(r.get("uid")) for r in old_status.get("reservedFor") or [] if isinstance(r, dict)
    }
    if allocation is not None and obj["metadata"].get("deletionTimestamp") and uids - old_uids:
        errs.append(
            forbidden(
                "status.reservedFor",
                "new entries may not be added while `deallocationRequested` or "
                "`deletionTimestamp` are set",
            )
        )
    if old_allocation is not None and allocation is not None:
        # A stored allocation is not validated again: the rules for new ones are tighter.
        if not semantic_equal(allocation, old_allocation):
            errs.append(invalid("status.allocation", shown(allocation), "field is immutable"))
    elif allocation is not None:
        known = request_names(field_dict(obj, "spec"))
        _allocation(
            as_dict(allocation, "status.allocation", errs), "status.allocation", known, errs
        )
    _device_status(status.get("devices"), allocated_devices(allocation), errs)
    return errs


def _reserved_for(value: Any, errs: list[FieldError]) -> set[str]:
    """ResourceClaimConsumerReferences: resource, name and uid required; unique by uid."""
    uids: list[str] = []
    for _, ref, at in c.items(value, "status.reservedFor", errs, RESERVED_FOR_MAX):
        ref = as_dict(ref, at, errs)
        for key in ("resource", "name", "uid"):
            if not as_str(ref.get(key), f"{at}.{key}", errs):
                errs.append(required(f"{at}.{key}"))
        uid = str(ref.get("uid") or "")
        if uid in uids:
            errs.append(duplicate(at, uid))
        uids.append(uid)
    return set(uids)


def _device_status(value: Any, allocated: set[DeviceKey], errs: list[FieldError]) -> None:
    seen: list[DeviceKey] = []
    for _, entry, at in c.items(value, "status.devices", errs, -1):
        entry = as_dict(entry, at, errs)
        _device_id(entry, at, errs)
        key = _key(entry)
        if key in seen:
            errs.append(duplicate(at, shown(entry)))
        seen.append(key)
        if key not in allocated:
            errs.append(invalid(at, "/".join(key[:3]), "must be an allocated device in the claim"))
        _conditions(entry.get("conditions"), f"{at}.conditions", errs)
        data = entry.get("data")
        if data is not None and not isinstance(data, dict):
            errs.append(invalid(f"{at}.data", "<value omitted>", "must be a valid JSON object"))
        elif data is not None and len(orjson.dumps(data)) > DEVICE_DATA_MAX:
            errs.append(c.too_long(f"{at}.data", "", DEVICE_DATA_MAX))
        network = entry.get("networkData")
        if network is not None:
            _network_data(as_dict(network, f"{at}.networkData", errs), f"{at}.networkData", errs)


def _conditions(value: Any, path: str, errs: list[FieldError]) -> None:
    """metav1 Conditions (ValidateConditions), at most 8."""
    types: list[str] = []
    for _, condition, at in c.items(value, path, errs, DEVICE_CONDITIONS_MAX):
        condition = as_dict(condition, at, errs)
        type_ = as_str(condition.get("type"), f"{at}.type", errs)
        c.add_invalid(errs, f"{at}.type", type_, names.is_qualified_name(type_))
        if type_ in types:
            errs.append(duplicate(f"{at}.type", type_))
        types.append(type_)
        status = as_str(condition.get("status"), f"{at}.status", errs)
        if status not in CONDITION_STATUSES:
            errs.append(not_supported(f"{at}.status", status, CONDITION_STATUSES))
        generation = condition.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            errs.append(
                invalid(
                    f"{at}.observedGeneration", generation, "must be greater than or equal to zero"
                )
            )
        if not condition.get("lastTransitionTime"):
            errs.append(required(f"{at}.lastTransitionTime", "must be set"))
        reason = as_str(condition.get("reason"), f"{at}.reason", errs)
        if not reason:
            errs.append(required(f"{at}.reason", "must be set"))
        else:
            if not _REASON.match(reason):
                errs.append(invalid(f"{at}.reason", reason, REASON_ERROR))
            if len(reason) > REASON_MAX:
                errs.append(c.too_long(f"{at}.reason", reason, REASON_MAX))
        message = as_str(condition.get("message"), f"{at}.message", errs)
        if len(message) > MESSAGE_MAX:
            errs.append(c.too_long(f"{at}.message", message, MESSAGE_MAX))


def _network_data(network: Obj, path: str, errs: list[FieldError]) -> None:
    """NetworkDeviceData: interfaceName <= 256, hardwareAddress <= 128, at most 16 unique ips,
    each an address in CIDR form spelled canonically (host bits allowed)."""
    for key, limit in (("interfaceName", INTERFACE_NAME_MAX), ("hardwareAddress", HW_ADDRESS_MAX)):
        text = as_str(network.get(key), f"{path}.{key}", errs)
        if len(text) > limit:
            errs.append(c.too_long(f"{path}.{key}", "", limit))
    seen: list[str] = []
    for _, ip, at in c.items(network.get("ips"), f"{path}.ips", errs, IPS_MAX):
        text = as_str(ip, at, errs)
        try:
            parsed = ipaddress.ip_interface(text) if "/" in text else None
        except ValueError:
            parsed = None
        if parsed is None:
            errs.append(
                invalid(
                    at,
                    text,
                    "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)",
                )
            )
        elif str(parsed) != text:
            errs.append(invalid(at, text, f'must be in canonical form ("{parsed}")'))
        if text in seen:
            errs.append(duplicate(at, text))
        seen.append(text)
