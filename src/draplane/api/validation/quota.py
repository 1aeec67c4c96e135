"""core/v1 ResourceQuota rules (pkg/apis/core/validation ValidateResourceQuota): quota resource
names (qualified, and a bare name must be a standard quota resource), non-negative quantities
(integers for the object counts and extended resources), supported scopes valid for the
resources limited and not conflicting, scope selectors' operators and values; `spec.scopes`
are immutable; a `status` update checks `status.hard` and `status.used` the same way."""

from __future__ import annotations

from typing import Any

from draplane.api import names
from draplane.api.errors import FieldError, duplicate, forbidden, invalid, required
from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.api.validation.objectmeta import (
    as_dict,
    as_list,
    shown,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)

_COMPUTE = frozenset(
    {"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory"}
    | {"requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage"}
)
_COUNTS = frozenset(
    {"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps"}
    | {"persistentvolumeclaims", "services.nodeports", "services.loadbalancers"}
)
STANDARD_QUOTA_RESOURCES = _COMPUTE | _COUNTS | {"requests.storage"}
_STANDARD_RESOURCES = STANDARD_QUOTA_RESOURCES | {"storage"}
SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)
_POD_SCOPED = frozenset({"pods", "cpu", "memory", "limits.cpu", "limits.memory"}) | {
    "requests.cpu",
    "requests.memory",
}
_EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating")
_EXISTS_ONLY_MESSAGE = (
    "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
_CONFLICTING = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


def _is_hugepages(name: str) -> bool:
    return name.startswith(("hugepages-", "requests.hugepages-"))


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """helper.IsExtendedResourceName: not native, not `requests.`, qualified as a request."""
    if is_native(name) or name.startswith("requests."):
        return False
    return not names.is_qualified_name("requests." + name)


def is_integer_resource(name: str) -> bool:
    return name in _COUNTS or is_extended(name)


def scope_valid_for(scope: str, resource: str) -> bool:
    """helper.IsResourceQuotaScopeValidForResource."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass"):
        return resource in _POD_SCOPED
    if scope == "CrossNamespacePodAffinity":
        return resource in _POD_SCOPED
    if scope == "BestEffort":
        return resource == "pods"
    if scope == "VolumeAttributesClass":
        return resource in ("persistentvolumeclaims", "requests.storage")
    return True


def _resource_name(name: Any, path: str) -> list[FieldError]:
    if type(name) is not str:
        return [invalid(path, name, "must be a string")]
    msgs = names.is_qualified_name(name)
    if msgs:
        return [invalid(path, name, m) for m in msgs]
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not _is_hugepages(name):
            return [invalid(path, name, "must be a standard resource type or fully qualified")]
        if name not in STANDARD_QUOTA_RESOURCES and not _is_hugepages(name):
            return [invalid(path, name, "must be a standard resource for quota")]
    return []


def _quantity(name: Any, value: Any, path: str) -> list[FieldError]:
    try:
        q = parse_quantity(value)
    except ValueError as exc:
        return [invalid(path, value, str(exc))]
    errs: list[FieldError] = []
    if q < 0:
        errs.append(invalid(path, str(value), "must be greater than or equal to 0"))
    if isinstance(name, str) and is_integer_resource(name) and (q * 1000) % 1000 != 0:
        errs.append(invalid(path, str(value), "must be an integer"))
    return errs


def _resource_list(value: Any, path: str, errs: list[FieldError]) -> Obj:
    resources = as_dict(value, path, errs)
    for name, quantity in resources.items():
        key = f"{path}[{name}]"
        errs.extend(_resource_name(name, key))
        errs.extend(_quantity(name, quantity, key))
    return resources


def _scopes(spec: Obj, hard: Obj, errs: list[FieldError]) -> None:
    scopes = as_list(spec.get("scopes"), "spec.scopes", errs)
    for scope in scopes:
        if scope not in SCOPES:
            errs.append(invalid("spec.scopes", scopes, "unsupported scope"))
        for name in sorted(hard):
            if name in STANDARD_QUOTA_RESOURCES and not scope_valid_for(str(scope), name):
                errs.append(invalid("spec.scopes", scopes, "unsupported scope applied to resource"))
    for pair in _CONFLICTING:
        if all(s in scopes for s in pair):
            errs.append(invalid("spec.scopes", scopes, "conflicting scopes"))


def _scope_selector(spec: Obj, hard: Obj, errs: list[FieldError]) -> None:
    if spec.get("scopeSelector") is None:
        return
    selector = as_dict(spec["scopeSelector"], "spec.scopeSelector", errs)
    path = "spec.scopeSelector.matchExpressions"
    seen: set[str] = set()
    for i, req in enumerate(as_list(selector.get("matchExpressions"), path, errs)):
        req = as_dict(req, f"{path}[{i}]", errs)
        scope, op, values = req.get("scopeName"), req.get("operator"), req.get("values") or []
        if scope not in SCOPES:
            errs.append(invalid(f"{path}.scopeName", scope, "unsupported scope"))
        for name in sorted(hard):
            if name in STANDARD_QUOTA_RESOURCES and not scope_valid_for(str(scope), name):
                errs.append(invalid(path, shown(selector), "unsupported scope applied to resource"))
        if scope in (*_EXISTS_ONLY, "CrossNamespacePodAffinity") and op != "Exists":
            errs.append(invalid(f"{path}.operator", op, _EXISTS_ONLY_MESSAGE))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(
                    required(
                        f"{path}.values",
                        "must be at least one value when `operator` is 'In' or 'NotIn' for "
                        "scope selector",
                    )
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    invalid(
                        f"{path}.values",
                        values,
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for "
                        "scope selector",
                    )
                )
        else:
            errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
        seen.add(str(scope))
    for pair in _CONFLICTING:
        if all(s in seen for s in pair):
            errs.append(invalid(path, shown(selector), "conflicting scopes"))


def _spec(obj: Obj, errs: list[FieldError]) -> None:
    spec = as_dict(obj.get("spec"), "spec", errs)
    hard = _resource_list(spec.get("hard"), "spec.hard", errs)
    _scopes(spec, hard, errs)
    _scope_selector(spec, hard, errs)


def _status(obj: Obj, errs: list[FieldError]) -> None:
    status = as_dict(obj.get("status"), "status", errs)
    _resource_list(status.get("hard"), "status.hard", errs)
    _resource_list(status.get("used"), "status.used", errs)


def validate_resource_quota(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    _spec(obj, errs)
    _status(obj, errs)
    return errs


def validate_resource_quota_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    _spec(obj, errs)
    new_scopes = (obj.get("spec") or {}).get("scopes") or []
    old_scopes = (old.get("spec") or {}).get("scopes") or []
    if isinstance(new_scopes, list) and set(map(str, new_scopes)) != set(map(str, old_scopes)):
        errs.append(invalid("spec.scopes", new_scopes, "field is immutable"))
    return errs


def validate_resource_quota_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    _status(obj, errs)
    return errs


# --- LimitRange (ValidateLimitRange, in part) ---------------------------------------------------


def _limit_range_spec(obj: Obj, errs: list[FieldError]) -> None:
    spec = as_dict(obj.get("spec"), "spec", errs)
    types: set[str] = set()
    for i, item in enumerate(as_list(spec.get("limits"), "spec.limits", errs)):
        path = f"spec.limits[{i}]"
        item = as_dict(item, path, errs)
        kind = str(item.get("type") or "")
        if kind in types:
            errs.append(duplicate(f"{path}.type", kind))
        types.add(kind)
        parsed: dict[str, dict[str, Any]] = {}
        for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            values = as_dict(item.get(field), f"{path}.{field}", errs)
            parsed[field] = {}
            for name, raw in values.items():
                key = f"{path}.{field}[{name}]"
                found = _quantity(None, raw, key)
                errs.extend(found)
                if not found:
                    parsed[field][name] = parse_quantity(raw)
        if kind == "Pod":
            for field in ("default", "defaultRequest"):
                if parsed[field]:
                    errs.append(
                        forbidden(f"{path}.{field}", "may not be specified when `type` is 'Pod'")
                    )
        for name, low in parsed["min"].items():
            high = parsed["max"].get(name)
            if high is not None and low > high:
                errs.append(
                    invalid(
                        f"{path}.min[{name}]",
                        item["min"][name],
                        f"min value {item['min'][name]} is greater than max value "
                        f"{item['max'][name]}",
                    )
                )
        for name, ratio in parsed["maxLimitRequestRatio"].items():
            if ratio < 1:
                raw = item["maxLimitRequestRatio"][name]
                errs.append(
                    invalid(
                        f"{path}.maxLimitRequestRatio[{name}]", raw, f"ratio {raw} is less than 1"
                    )
                )


def validate_limit_range(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    _limit_range_spec(obj, errs)
    return errs


def validate_limit_range_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    _limit_range_spec(obj, errs)
    return errs


def default_limit_range(obj: Obj) -> None:
    """SetDefaults_LimitRangeItem: a `Container` item's default limit is its max, its default
    request its default limit, else its min."""
    spec = obj.get("spec")
    items = spec.get("limits") if isinstance(spec, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        request = item.setdefault("defaultRequest", {})
        if not isinstance(default, dict) or not isinstance(request, dict):
            continue
        for source, target in ((item.get("max"), default), (default, request)):
            for name, value in (source if isinstance(source, dict) else {}).items():
                target.setdefault(name, value)
        minimum = item.get("min")
        for name, value in (minimum if isinstance(minimum, dict) else {}).items():
            request.setdefault(name, value)
        if not default:
            item.pop("default")
        if not request:
            item.pop("defaultRequest")
