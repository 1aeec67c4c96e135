"""core/v1 Secret, Service and Endpoints and discovery.k8s.io/v1 EndpointSlice rules
(pkg/apis/core/validation, pkg/apis/discovery/validation), the parts draplane serves.

Secrets: data keys, total size, the required keys of the typed secrets, immutability; Services:
DNS-1035 names, ports (names, numbers, protocols, target ports), types, cluster IPs (immutable
once set), node ports only where the type allows; Endpoints and EndpointSlices: addresses and
ports.
"""

from __future__ import annotations

import ipaddress
import re
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
from draplane.api.validation.objectmeta import (
    add_invalid,
    as_dict,
    as_list,
    immutable,
    semantic_equal,
    shown,
    too_long,
    validate_labels,
    validate_meta_content,
    validate_object_meta,
    validate_object_meta_update,
)
from draplane.api.validation.podtemplate import is_int

MAX_SECRET_SIZE = 1024 * 1024
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
_SECRET_REQUIRED = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_RE = re.compile(_DNS1035_FMT)
DNS1035_ERROR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    f"'abc-123', regex used for validation is '{_DNS1035_FMT}')"
)
_IANA_SVC = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def is_dns1035_label(value: Any, *, prefix: bool = False) -> list[str]:
    if not isinstance(value, str):
        return ["must be a string"]
    if prefix and len(value) > 1 and value.endswith("-"):
        value = value[:-1] + "a"
    errs: list[str] = []
    if len(value) > 63:
        errs.append(names.max_len_error(63))
    if not _DNS1035_RE.fullmatch(value):
        errs.append(DNS1035_ERROR)
    return errs


def _port_number(value: Any, path: str) -> list[FieldError]:
    if not is_int(value) or not 1 <= value <= 65535:
        return [invalid(path, value, "must be between 1 and 65535, inclusive")]
    return []


def _protocol(value: Any, path: str) -> list[FieldError]:
    if not value:
        return [required(path, "")]
    return [] if value in _PROTOCOLS else [not_supported(path, value, _PROTOCOLS)]


def is_ip(value: Any) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return isinstance(value, str)


# Secret -----------------------------------------------------------------------------------------


def validate_secret(obj: Obj) -> list[FieldError]:
    md = obj["metadata"]
    errs = validate_object_meta(md, namespaced=True, name_fn=names.name_is_dns_subdomain)
    data = as_dict(obj.get("data"), "data", errs)
    total = 0
    for key, value in data.items():
        add_invalid(errs, f"data[{key}]", key, names.is_config_map_key(key))
        total += len(value) * 3 // 4 if isinstance(value, str) else 0
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("data", "", MAX_SECRET_SIZE))
    kind = obj.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token":
        annotations = md.get("annotations") or {}
        if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            errs.append(required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]", ""))
    elif kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
        errs.append(required("data[username]", ""))
        errs.append(required("data[password]", ""))
    for key in _SECRET_REQUIRED.get(kind, ()):
        if key not in data:
            errs.append(required(f"data[{key}]", ""))
    return errs


def validate_secret_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(immutable("type", obj.get("type") or "Opaque", old.get("type") or "Opaque"))
    if old.get("immutable") is True:
        if obj.get("immutable") is not True:
            errs.append(forbidden("immutable", "field is immutable when `immutable` is set"))
        if not semantic_equal(obj.get("data"), old.get("data")):
            errs.append(forbidden("data", "field is immutable when `immutable` is set"))
    errs.extend(validate_secret(obj))
    return errs


# Service ----------------------------------------------------------------------------------------


def _service_ports(spec: Obj, errs: list[FieldError]) -> None:
    ports = as_list(spec.get("ports"), "spec.ports", errs)
    kind = spec.get("type") or "ClusterIP"
    seen_names: set[str] = set()
    seen_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        p = f"spec.ports[{i}]"
        port = as_dict(port, p, errs)
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            errs.append(required(f"{p}.name", ""))
        elif name:
            add_invalid(errs, f"{p}.name", name, names.is_dns1123_label(name))
            if name in seen_names:
                errs.append(duplicate(f"{p}.name", name))
            seen_names.add(name)
        errs.extend(_port_number(port.get("port"), f"{p}.port"))
        errs.extend(_protocol(port.get("protocol"), f"{p}.protocol"))
        target = port.get("targetPort")
        if isinstance(target, str):
            if not _IANA_SVC.match(target) or len(target) > 15 or not re.search("[a-z]", target):
                errs.append(
                    invalid(
                        f"{p}.targetPort",
                        target,
                        "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                    )
                )
        elif target is not None:
            errs.extend(_port_number(target, f"{p}.targetPort"))
        node_port = port.get("nodePort")
        if node_port and kind not in ("NodePort", "LoadBalancer"):
            errs.append(forbidden(f"{p}.nodePort", f"may not be used when `type` is '{kind}'"))
        key = (port.get("port"), port.get("protocol"))
        if key in seen_ports:
            errs.append(duplicate(p, shown(port)))
        seen_ports.add(key)


def validate_service(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(obj["metadata"], namespaced=True, name_fn=is_dns1035_label)
    spec = as_dict(obj.get("spec"), "spec", errs)
    kind = spec.get("type") or "ClusterIP"
    cluster_ip = spec.get("clusterIP") or ""
    headless = cluster_ip == "None"
    if kind not in _SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, _SERVICE_TYPES))
    if kind == "ExternalName":
        external = spec.get("externalName")
        if not external:
            errs.append(required("spec.externalName", ""))
        else:
            add_invalid(
                errs,
                "spec.externalName",
                external,
                names.is_dns1123_subdomain(str(external).rstrip(".")),
            )
        if cluster_ip:
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    elif not spec.get("ports") and not headless:
        errs.append(required("spec.ports", ""))
    if headless and kind in ("NodePort", "LoadBalancer"):
        errs.append(
            invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services")
        )
    for i, ip in enumerate(spec.get("clusterIPs") or ([cluster_ip] if cluster_ip else [])):
        if ip != "None" and not is_ip(ip):
            errs.append(
                invalid(
                    f"spec.clusterIPs[{i}]",
                    ip,
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                )
            )
    _service_ports(spec, errs)
    if "selector" in spec:
        errs.extend(validate_labels(spec["selector"], "spec.selector"))
    affinity = spec.get("sessionAffinity")
    if affinity not in (None, "None", "ClientIP"):
        errs.append(not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    for i, ip in enumerate(spec.get("externalIPs") or []):
        if not is_ip(ip):
            errs.append(
                invalid(
                    f"spec.externalIPs[{i}]",
                    ip,
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                )
            )
    return errs


def validate_service_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_service(obj))
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if (
        (spec.get("type") or "ClusterIP") != "ExternalName"
        and old_spec.get("clusterIP")
        and spec.get("clusterIP") != old_spec.get("clusterIP")
    ):
        errs.append(
            invalid(
                "spec.clusterIPs[0]",
                shown(spec.get("clusterIPs") or []),
                "may not change once set",
            )
        )
    return errs


def validate_service_status_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_meta_content(obj["metadata"]))
    return errs


# Endpoints and EndpointSlices -------------------------------------------------------------------


def _endpoint_ports(ports: Any, path: str, *, named: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    ports = as_list(ports, path, errs)
    for i, port in enumerate(ports):
        p = f"{path}[{i}]"
        port = as_dict(port, p, errs)
        name = port.get("name") or ""
        if named and len(ports) > 1 and not name:
            errs.append(required(f"{p}.name", ""))
        elif name:
            add_invalid(errs, f"{p}.name", name, names.is_dns1123_label(name))
        if port.get("port") is not None or named:
            errs.extend(_port_number(port.get("port"), f"{p}.port"))
        errs.extend(_protocol(port.get("protocol"), f"{p}.protocol"))
    return errs


def validate_endpoints(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    for i, subset in enumerate(as_list(obj.get("subsets"), "subsets", errs)):
        p = f"subsets[{i}]"
        subset = as_dict(subset, p, errs)
        for key in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(as_list(subset.get(key), f"{p}.{key}", errs)):
                ip = as_dict(address, f"{p}.{key}[{j}]", errs).get("ip")
                if not is_ip(ip):
                    errs.append(invalid(f"{p}.{key}[{j}].ip", ip, "must be a valid IP address"))
        errs.extend(_endpoint_ports(subset.get("ports"), f"{p}.ports", named=True))
    return errs


def validate_endpoints_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_endpoints(obj))
    return errs


_ADDRESS_TYPES = ["IPv4", "IPv6", "FQDN"]


def validate_endpoint_slice(obj: Obj) -> list[FieldError]:
    errs = validate_object_meta(
        obj["metadata"], namespaced=True, name_fn=names.name_is_dns_subdomain
    )
    address_type = obj.get("addressType")
    if not address_type:
        errs.append(required("addressType", ""))
    elif address_type not in _ADDRESS_TYPES:
        errs.append(not_supported("addressType", address_type, _ADDRESS_TYPES))
    for i, endpoint in enumerate(as_list(obj.get("endpoints"), "endpoints", errs)):
        p = f"endpoints[{i}]"
        addresses = as_list(as_dict(endpoint, p, errs).get("addresses"), f"{p}.addresses", errs)
        if not 1 <= len(addresses) <= 100:
            errs.append(
                required(f"{p}.addresses", "must contain at least 1 address")
                if not addresses
                else invalid(f"{p}.addresses", len(addresses), "must have at most 100 items")
            )
        for j, address in enumerate(addresses):
            if address_type in ("IPv4", "IPv6") and not is_ip(address):
                errs.append(invalid(f"{p}.addresses[{j}]", address, "must be a valid IP address"))
    errs.extend(_endpoint_ports(obj.get("ports"), "ports", named=False))
    return errs


def validate_endpoint_slice_update(obj: Obj, old: Obj) -> list[FieldError]:
    errs = validate_object_meta_update(obj["metadata"], old.get("metadata") or {})
    errs.extend(validate_endpoint_slice(obj))
    errs.extend(immutable("addressType", obj.get("addressType"), old.get("addressType")))
    return errs
