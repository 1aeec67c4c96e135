"""resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate rules (kubernetes/kubernetes
pkg/apis/resource/validation, 1.36): requests (`exactly` or `firstAvailable`), constraints,
configuration and the immutable spec (the status rules are in `deviceclaimstatus`).
"""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, not_supported, required
from draplane.api.meta import Obj
from draplane.api.validation import devicecommon as c
from draplane.api.validation.objectmeta import (
    as_dict,
    as_str,
    immutable,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.resource import _template_meta

REQUESTS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
SUBREQUESTS_MAX = 8
ALLOCATION_MODES = ["All", "ExactCount"]
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
        c.request_ref(ref, at, known, errs)
        if ref in seen:
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
