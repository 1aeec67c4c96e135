"""resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate rules (kubernetes/kubernetes
pkg/apis/resource/validation, 1.36): requests (`exactly` or `firstAvailable`), constraints,
configuration, the immutable spec, and the status rules (allocation set once, reservedFor,
device status).
"""

from __future__ import annotations

import ipaddress
from typing import Any

import orjson

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation import devicecommon as c
from draplane.api.validation.objectmeta import (
    as_dict,
    as_str,
    field_dict,
    immutable,
    semantic_equal,
    shown,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.resource import _template_meta

REQUESTS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
SUBREQUESTS_MAX = 8
RESULTS_MAX = 32
ALLOCATION_CONFIG_MAX = 64
RESERVED_FOR_MAX = 256
DEVICE_CONDITIONS_MAX = 8
DEVICE_DATA_MAX = 10 * 1024
INTERFACE_NAME_MAX = 256
HW_ADDRESS_MAX = 128
IPS_MAX = 16
ALLOCATION_MODES = ["All", "ExactCount"]
CONFIG_SOURCES = ["FromClaim", "FromClass"]
UNKNOWN_REQUEST = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)
ONE_OF_REQUEST = "exactly one of `exactly` or `firstAvailable` is required"


def _exact(request: Obj, path: str, errs: list[FieldError], *, admin: bool, stored: bool) -> None:
    c.device_class_name(request.get("deviceClassName"), f"{path}.deviceClassName", errs)
    c.selectors(request.get("selectors"), f"{path}.selectors", errs, stored=stored)
    mode = as_str(request.get("allocationMode"), f"{path}.allocationMode", errs)
    count = request.get("count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
        errs.append(invalid(f"{path}.count", count, "must be an integer"))
        count = None
    if mode == "ExactCount":
        if count is not None and count <= 0:
            errs.append(invalid(f"{path}.count", count, "must be greater than zero"))
    elif mode == "All":
        if count:
            errs.append(
                invalid(
                    f"{path}.count", count, "must not be specified when allocationMode is 'All'"
                )
            )
    elif mode:
        errs.append(not_supported(f"{path}.allocationMode", mode, ALLOCATION_MODES))
    else:
        errs.append(required(f"{path}.allocationMode"))
    if not admin and request.get("adminAccess") is not None:
        errs.append(forbidden(f"{path}.adminAccess", "may not be set in a subrequest"))
    c.tolerations(request.get("tolerations"), f"{path}.tolerations", errs)


def _requests(devices: Obj, path: str, errs: list[FieldError], *, stored: bool) -> set[str]:
    """The requests' checks; the names constraints and configuration may reference."""
    entries = c.items(devices.get("requests"), f"{path}.requests", errs, REQUESTS_MAX)
    known: set[str] = set()
    for name in c.unique_names(entries, errs):
        known.add(name)
    for _, request, at in entries:
        request = request if isinstance(request, dict) else {}
        name = str(request.get("name") or "")
        exactly = request.get("exactly")
        first = request.get("firstAvailable")
        if exactly is not None and first:
            errs.append(invalid(at, None, ONE_OF_REQUEST + ", but multiple fields are set"))
        elif exactly is None and not first:
            errs.append(required(at, ONE_OF_REQUEST))
        if exactly is not None:
            exact = as_dict(exactly, f"{at}.exactly", errs)
            _exact(exact, f"{at}.exactly", errs, admin=True, stored=stored)
        if first is not None:
            subs = c.items(first, f"{at}.firstAvailable", errs, SUBREQUESTS_MAX)
            for sub in c.unique_names(subs, errs):
                known.add(f"{name}/{sub}")
            for _, sub_request, sub_at in subs:
                subrequest = as_dict(sub_request, sub_at, errs)
                _exact(subrequest, sub_at, errs, admin=False, stored=stored)
    return known


def _references(value: Any, path: str, known: set[str], errs: list[FieldError]) -> None:
    seen: list[str] = []
    for _, ref, at in c.items(value, path, errs, REQUESTS_MAX):
        ref = as_str(ref, at, errs)
        if ref not in known:
            errs.append(invalid(at, ref, UNKNOWN_REQUEST))
        elif ref in seen:
            errs.append(duplicate(at, ref))
        seen.append(ref)


def validate_claim_spec(spec: Any, path: str, *, stored: bool = False) -> list[FieldError]:
    """A ResourceClaimSpec; `stored` on update, where the spec is immutable, so its selectors
    were accepted when it was written."""
    errs: list[FieldError] = []
    spec = as_dict(spec, path, errs)
    devices = as_dict(spec.get("devices"), f"{path}.devices", errs)
    at = f"{path}.devices"
    known = _requests(devices, at, errs, stored=stored)
    for _, constraint, cat in c.items(
        devices.get("constraints"), f"{at}.constraints", errs, CONSTRAINTS_MAX
    ):
        constraint = as_dict(constraint, cat, errs)
        _references(constraint.get("requests"), f"{cat}.requests", known, errs)
        match, distinct = constraint.get("matchAttribute"), constraint.get("distinctAttribute")
        if match is None and distinct is None:
            errs.append(required(f"{cat}.matchAttribute"))
        elif match is not None and distinct is not None:
            errs.append(
                invalid(
                    cat,
                    None,
                    "exactly one of `matchAttribute` or `distinctAttribute` is required, "
                    "but multiple fields are set",
                )
            )
        for key, value in (("matchAttribute", match), ("distinctAttribute", distinct)):
            if value is not None:
                c.qualified_name(value, f"{cat}.{key}", errs, domain=True)
    for _, config, cfg in c.items(devices.get("config"), f"{at}.config", errs, CONFIG_MAX):
        config = as_dict(config, cfg, errs)
        _references(config.get("requests"), f"{cfg}.requests", known, errs)
        c.device_config(config, cfg, errs)
    return errs


def validate_claim(obj: Obj, *, stored: bool = False) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    errs.extend(validate_claim_spec(obj.get("spec"), "spec", stored=stored))
    return errs


def validate_claim_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(immutable("spec", obj.get("spec"), old.get("spec")))
    if not errs:
        errs.extend(validate_claim(obj, stored=True))
    return errs


def validate_claim_template(obj: Obj, *, stored: bool = False) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    spec = as_dict(obj.get("spec"), "spec", errs)
    errs.extend(_template_meta(spec.get("metadata"), "spec.metadata"))
    errs.extend(validate_claim_spec(spec.get("spec"), "spec.spec", stored=stored))
    return errs


def validate_claim_template_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(immutable("spec", obj.get("spec"), old.get("spec")))
    if not errs:
        errs.extend(validate_claim_template(obj, stored=True))
    return errs


# --- status -------------------------------------------------------------------------------


def _allocation(allocation: Any, path: str, errs: list[FieldError]) -> set[tuple[str, str, str]]:
    """A new allocation's checks; the (driver, pool, device) it allocates."""
    allocation = as_dict(allocation, path, errs)
    devices = as_dict(allocation.get("devices"), f"{path}.devices", errs)
    allocated: set[tuple[str, str, str]] = set()
    for _, result, at in c.items(
        devices.get("results"), f"{path}.devices.results", errs, RESULTS_MAX
    ):
        result = as_dict(result, at, errs)
        request = as_str(result.get("request"), f"{at}.request", errs)
        if not request:
            errs.append(required(f"{at}.request"))
        driver = result.get("driver", "")
        errs.extend(c.validate_driver_name(driver, f"{at}.driver"))
        c.pool_name(result.get("pool"), f"{at}.pool", errs)
        device = as_str(result.get("device"), f"{at}.device", errs)
        if not device:
            errs.append(required(f"{at}.device"))
        else:
            c.add_invalid(errs, f"{at}.device", device, names.is_dns1123_label(device))
        allocated.add((str(driver), str(result.get("pool")), device))
    for _, config, at in c.items(
        devices.get("config"), f"{path}.devices.config", errs, ALLOCATION_CONFIG_MAX
    ):
        config = as_dict(config, at, errs)
        source = as_str(config.get("source"), f"{at}.source", errs)
        if source not in CONFIG_SOURCES:
            errs.append(
                not_supported(f"{at}.source", source, CONFIG_SOURCES)
                if source
                else required(f"{at}.source")
            )
        c.device_config(config, at, errs)
    return allocated


def validate_claim_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    status = as_dict(obj.get("status"), "status", errs)
    old_status = field_dict(old, "status")
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    allocated: set[tuple[str, str, str]] = set()
    changed = not semantic_equal(allocation, old_allocation)
    if old_allocation is not None and allocation is not None and changed:
        errs.append(invalid("status.allocation", shown(allocation), "field is immutable"))
    if allocation is not None:
        # Only a new allocation is validated (a stored one is tolerated as it is).
        checked: list[FieldError] = []
        allocated = _allocation(allocation, "status.allocation", checked)
        if changed:
            errs.extend(checked)
    reserved = c.items(status.get("reservedFor"), "status.reservedFor", errs, RESERVED_FOR_MAX)
    uids: list[str] = []
    for _, ref, at in reserved:
        ref = as_dict(ref, at, errs)
        for key in ("resource", "name", "uid"):
            if not as_str(ref.get(key), f"{at}.{key}", errs):
                errs.append(required(f"{at}.{key}"))
        uid = str(ref.get("uid") or "")
        if uid and uid in uids:
            errs.append(duplicate(f"{at}.uid", uid))
        uids.append(uid)
    if reserved and allocation is None:
        errs.append(
            forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
        )
    deleting = (obj.get("metadata") or {}).get("deletionTimestamp")
    old_uids = {
        str(r.get("uid")) for r in old_status.get("reservedFor") or [] if isinstance(r, dict)
    }
    if deleting and set(uids) - old_uids:
        errs.append(
            forbidden(
                "status.reservedFor",
                "new entries may not be added while `deletionTimestamp` is set",
            )
        )
    _device_status(status.get("devices"), allocated, errs)
    return errs


def _device_status(
    value: Any, allocated: set[tuple[str, str, str]], errs: list[FieldError]
) -> None:
    seen: list[tuple[str, str, str, str]] = []
    for _, entry, at in c.items(value, "status.devices", errs, RESULTS_MAX):
        entry = as_dict(entry, at, errs)
        key3 = (
            str(entry.get("driver", "")),
            str(entry.get("pool", "")),
            str(entry.get("device", "")),
        )
        key = (*key3, str(entry.get("shareID", "")))
        if key in seen:
            errs.append(duplicate(at, shown(entry)))
        seen.append(key)
        if key3 not in allocated:
            errs.append(invalid(at, shown(entry), "must be an allocated device in the claim"))
        conditions = c.items(
            entry.get("conditions"), f"{at}.conditions", errs, DEVICE_CONDITIONS_MAX
        )
        del conditions
        data = entry.get("data")
        if data is not None and len(orjson.dumps(data)) > DEVICE_DATA_MAX:
            errs.append(c.too_long(f"{at}.data", "<value omitted>", DEVICE_DATA_MAX))
        network = entry.get("networkData")
        if network is not None:
            _network_data(as_dict(network, f"{at}.networkData", errs), f"{at}.networkData", errs)


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
