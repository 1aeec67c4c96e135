"""Container rules of a Pod spec: names, images, ports, env, resources and resource claims, and
what ephemeral containers may not set (core validateEphemeralContainers, 1.28)."""

from __future__ import annotations

import re
from typing import Any

from draplane.api import names
from draplane.api.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_found_field,
    not_supported,
    required,
)
from draplane.api.quantity import parse_quantity
from draplane.api.validation.objectmeta import add_invalid, as_dict, as_list, as_str

_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_PORT_NAME_RE = re.compile(r"[-a-z0-9]+")
_PORT_RANGE = "must be between 1 and 65535, inclusive"
# EphemeralContainerCommon fields outside allowedEphemeralContainerFields, in struct order: an
# ephemeral container does not serve the pod, so no ports, resources (hence no resource
# claims), restart policy, probes or lifecycle.
_EPHEMERAL_FORBIDDEN = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
_EPHEMERAL_DETAIL = "cannot be set for an Ephemeral Container"


def validate_containers(
    containers: Any, *, path: str, claim_names: set[str], seen: set[str], require: bool
) -> list[FieldError]:
    """`seen` collects container names across containers and initContainers (must be unique)."""
    errs: list[FieldError] = []
    items = as_list(containers, path, errs)
    if not items and require and not errs:
        return [required(path)]
    for i, ctr in enumerate(items):
        _container(ctr, f"{path}[{i}]", claim_names, seen, errs)
    return errs


def _container(
    item: Any, path: str, claim_names: set[str], seen: set[str], errs: list[FieldError]
) -> dict[str, Any]:
    ctr = as_dict(item, path, errs)
    name = as_str(ctr.get("name"), f"{path}.name", errs)
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        add_invalid(errs, f"{path}.name", name, names.is_dns1123_label(name))
    if name in seen:
        errs.append(duplicate(f"{path}.name", name))
    seen.add(name)
    errs.extend(_container_body(ctr, path=path, claim_names=claim_names))
    return ctr


def validate_ephemeral_containers(
    containers: Any, *, path: str, claim_names: set[str], seen: set[str], targets: set[str]
) -> list[FieldError]:
    """The common container rules, then what only ephemeral containers must respect; `seen`
    holds the names of the pod's other containers, `targets` those an ephemeral container
    may target (regular and init containers)."""
    errs: list[FieldError] = []
    for i, item in enumerate(as_list(containers, path, errs)):
        p = f"{path}[{i}]"
        ctr = _container(item, p, claim_names, seen, errs)
        target = ctr.get("targetContainerName")
        if target and target not in targets:
            errs.append(not_found_field(f"{p}.targetContainerName", target, ""))
        for key in _EPHEMERAL_FORBIDDEN:
            value = ctr.get(key)
            # Go's zero value: `resources` is a struct ({} is unset), the others are pointers
            # and slices (set as soon as present).
            if value is not None and not (key == "resources" and value == {}):
                errs.append(forbidden(f"{p}.{key}", _EPHEMERAL_DETAIL))
        mounts = ctr.get("volumeMounts")
        for j, mount in enumerate(mounts if isinstance(mounts, list) else []):
            for key in ("subPath", "subPathExpr"):
                if isinstance(mount, dict) and mount.get(key):
                    errs.append(forbidden(f"{p}.volumeMounts[{j}].{key}", _EPHEMERAL_DETAIL))
    return errs


def _container_body(ctr: dict[str, Any], *, path: str, claim_names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    image = as_str(ctr.get("image"), f"{path}.image", errs)
    if not image:
        errs.append(required(f"{path}.image"))
    elif image.strip() != image:
        errs.append(invalid(f"{path}.image", image, "must not have leading or trailing whitespace"))
    if "ports" in ctr:
        errs.extend(_ports(ctr["ports"], f"{path}.ports"))
    if "env" in ctr:
        errs.extend(_env(ctr["env"], f"{path}.env"))
    policy = ctr.get("imagePullPolicy")
    if not policy:
        errs.append(required(f"{path}.imagePullPolicy"))
    elif policy not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", policy, _PULL_POLICIES))
    tmp = ctr.get("terminationMessagePolicy")
    if not tmp:
        errs.append(
            required(
                f"{path}.terminationMessagePolicy", "must be 'File' or 'FallbackToLogsOnError'"
            )
        )
    elif tmp not in ("File", "FallbackToLogsOnError"):
        errs.append(
            invalid(
                f"{path}.terminationMessagePolicy",
                tmp,
                "must be 'File' or 'FallbackToLogsOnError'",
            )
        )
    if "resources" in ctr:
        errs.extend(
            validate_resources(ctr["resources"], path=f"{path}.resources", claim_names=claim_names)
        )
    return errs


def _ports(ports: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    port_names: set[str] = set()
    for i, port in enumerate(as_list(ports, path, errs)):
        p = f"{path}[{i}]"
        port = as_dict(port, p, errs)
        pname = port.get("name")
        if pname:
            msgs = _port_name_errors(pname)
            if msgs:
                add_invalid(errs, f"{p}.name", pname, msgs)
            elif pname in port_names:
                errs.append(duplicate(f"{p}.name", pname))
            port_names.add(pname)
        number = port.get("containerPort")
        if not number:
            errs.append(required(f"{p}.containerPort"))
        elif not isinstance(number, int) or not 1 <= number <= 65535:
            errs.append(invalid(f"{p}.containerPort", number, _PORT_RANGE))
        host = port.get("hostPort")
        if host and (not isinstance(host, int) or not 1 <= host <= 65535):
            errs.append(invalid(f"{p}.hostPort", host, _PORT_RANGE))
        protocol = port.get("protocol")
        if not protocol:
            errs.append(required(f"{p}.protocol"))
        elif protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{p}.protocol", protocol, _PROTOCOLS))
    return errs


def _port_name_errors(name: Any) -> list[str]:
    """IsValidPortName: an IANA_SVC_NAME."""
    if not isinstance(name, str):
        return ["must be a string"]
    errs: list[str] = []
    if len(name) > 15:
        errs.append(names.max_len_error(15))
    if not _PORT_NAME_RE.fullmatch(name):
        errs.append("must contain only alphanumeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if not any("a" <= c <= "z" for c in name):
        errs.append("must contain at least one letter (a-z)")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _env(env: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, var in enumerate(as_list(env, path, errs)):
        # The paths are built only for an error: a pod has many variables, all valid.
        if not isinstance(var, dict):
            var = as_dict(var, f"{path}[{i}]", errs)
        name = var.get("name")
        if not name:
            errs.append(required(f"{path}[{i}].name"))
        elif msgs := names.is_env_var_name(name):
            add_invalid(errs, f"{path}[{i}].name", name, msgs)
    return errs


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


_name_error_cache: dict[str, tuple[str, ...]] = {}


def _name_errors(name: str, path: str) -> list[FieldError]:
    msgs = _name_error_cache.get(name)
    if msgs is None:
        if len(_name_error_cache) > 4096:
            _name_error_cache.clear()
        msgs = _name_error_cache[name] = tuple(_resource_name_messages(name))
    return [invalid(path, name, m) for m in msgs]


def _resource_name_messages(name: str) -> list[str]:
    msgs = names.is_qualified_name(name)
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            msgs.append("must be a standard resource for containers")
    elif not _is_native(name) and (
        name.startswith("requests.") or names.is_qualified_name("requests." + name)
    ):
        msgs.append("doesn't follow extended resource name standard")
    return msgs


def _quantities(values: Any, path: str, errs: list[FieldError]) -> dict[str, Any]:
    """Parsed quantities by resource name; bad names and values become errors."""
    out: dict[str, Any] = {}
    for name, raw in as_dict(values, path, errs).items():
        p = f"{path}[{name}]"
        if type(name) is not str:
            errs.append(invalid(p, name, "must be a string"))
            continue
        errs.extend(_name_errors(name, p))
        try:
            q = parse_quantity(raw)
        except ValueError as exc:
            errs.append(invalid(p, raw, str(exc)))
            continue
        if q.numerator < 0:
            errs.append(invalid(p, str(raw), "must be greater than or equal to 0"))
        elif not _is_native(name) and q.denominator != 1:
            errs.append(invalid(p, str(raw), "must be an integer"))
        out[name] = (q, raw)
    return out


def validate_resources(resources: Any, *, path: str, claim_names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    resources = as_dict(resources, path, errs)
    limits = _quantities(resources.get("limits"), f"{path}.limits", errs)
    requests = _quantities(resources.get("requests"), f"{path}.requests", errs)
    for name, (q, raw) in requests.items():
        if name in limits:
            limit_q, limit_raw = limits[name]
            if not _is_native(name) and q != limit_q:
                errs.append(
                    invalid(
                        f"{path}.requests",
                        str(raw),
                        f"must be equal to {name} limit of {limit_raw}",
                    )
                )
            elif q > limit_q:
                errs.append(
                    invalid(
                        f"{path}.requests",
                        str(raw),
                        f"must be less than or equal to {name} limit of {limit_raw}",
                    )
                )
        elif not _is_native(name):
            errs.append(
                required(f"{path}.limits", "Limit must be set for non overcommitable resources")
            )
    if "claims" in resources:
        errs.extend(_claims(resources["claims"], f"{path}.claims", claim_names))
    return errs


def _claims(claims: Any, path: str, claim_names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, claim in enumerate(as_list(claims, path, errs)):
        p = f"{path}[{i}]"
        ref = as_dict(claim, p, errs)
        name = as_str(ref.get("name"), f"{p}.name", errs)
        if not name:
            errs.append(required(p))
            continue
        # `request` (1.32) picks one request of the claim: a DNS label, and name/request is
        # what must be unique (kube-apiserver's validateResourceClaimNames).
        key = name
        if request := as_str(ref.get("request"), f"{p}.request", errs):
            add_invalid(errs, f"{p}.request", request, names.is_dns1123_label(request))
            key += "/" + request
        if key in seen:
            errs.append(duplicate(p, key))
        seen.add(key)
        if name not in claim_names:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += ": " + ", ".join(sorted(claim_names)) if claim_names else " which is empty"
            errs.append(not_found_field(p, name, detail))
    return errs
