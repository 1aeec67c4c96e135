"""Table columns and cells of Secrets, Services, Endpoints and EndpointSlices, as
kube-apiserver 1.28 prints them (pkg/printers/internalversion/printers.go): TYPE/DATA of
Secrets, TYPE/CLUSTER-IP/EXTERNAL-IP/PORT(S) of Services (SELECTOR with `-o wide`), the first
three endpoints of Endpoints and EndpointSlices.
"""

from __future__ import annotations

from typing import Any

from draplane.api.meta import Obj
from draplane.apiserver.printing import AGE, NAME, AgeFn, Column, Printer, aged
from draplane.apiserver.workloadprinters import (
    _at,
    _labels_text,
    _name,
    _obj,
)

SECRET_COLUMNS: list[Column] = [
    NAME,
    ("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
    ("Data", "string", 0, "Data contains the secret data."),
    AGE,
]


def secret_cells(obj: Obj, age: AgeFn) -> list[Any]:
    data = obj.get("data")
    return [
        _name(obj),
        str(obj.get("type") or ""),
        len(data) if isinstance(data, dict) else 0,
        age(_at(obj, "metadata", "creationTimestamp")),
    ]


SERVICE_COLUMNS: list[Column] = [
    NAME,
    ("Type", "string", 0, "type determines how the Service is exposed."),
    ("Cluster-IP", "string", 0, "clusterIP is the IP address of the service."),
    (
        "External-IP",
        "string",
        0,
        "externalIPs is a list of IP addresses for which nodes in the cluster "
        "will also accept traffic for this service.",
    ),
    ("Port(s)", "string", 0, "The list of ports that are exposed by this service."),
    AGE,
    (
        "Selector",
        "string",
        1,
        "Route service traffic to pods with label keys and values matching this selector.",
    ),
]


def _external_ip(spec: Obj, status: Obj) -> str:
    kind = spec.get("type") or "ClusterIP"
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    if kind == "LoadBalancer":
        ingress = _at(status, "loadBalancer", "ingress")
        addresses = [
            str(_obj(i).get("ip") or _obj(i).get("hostname") or "")
            for i in (ingress if isinstance(ingress, list) else [])
        ]
        found = addresses + external
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _service_ports(spec: Obj) -> str:
    parts = []
    ports = spec.get("ports")
    for port in ports if isinstance(ports, list) else []:
        port = _obj(port)
        protocol = port.get("protocol") or "TCP"
        if port.get("nodePort"):
            parts.append(f"{port.get('port')}:{port.get('nodePort')}/{protocol}")
        else:
            parts.append(f"{port.get('port')}/{protocol}")
    return ",".join(parts) or "<none>"


def service_cells(obj: Obj, age: AgeFn) -> list[Any]:
    spec, status = _obj(obj.get("spec")), _obj(obj.get("status"))
    ips = spec.get("clusterIPs")
    cluster_ip = str(ips[0]) if isinstance(ips, list) and ips else "<none>"
    return [
        _name(obj),
        str(spec.get("type") or ""),
        cluster_ip,
        _external_ip(spec, status),
        _service_ports(spec),
        age(_at(obj, "metadata", "creationTimestamp")),
        _labels_text(spec.get("selector")),
    ]


ENDPOINTS_COLUMNS: list[Column] = [
    NAME,
    ("Endpoints", "string", 0, "The set of all endpoints is the union of all subsets."),
    AGE,
]


def _first_three(items: list[str]) -> str:
    if not items:
        return "<none>"
    text = ",".join(items[:3])
    return text + (f" + {len(items) - 3} more..." if len(items) > 3 else "")


def endpoints_cells(obj: Obj, age: AgeFn) -> list[Any]:
    items: list[str] = []
    subsets = obj.get("subsets")
    for subset in subsets if isinstance(subsets, list) else []:
        subset = _obj(subset)
        ports = [_obj(p) for p in subset.get("ports") or []] or [{}]
        for address in subset.get("addresses") or []:
            ip = str(_obj(address).get("ip") or "")
            for port in ports:
                items.append(f"{ip}:{port['port']}" if "port" in port else ip)
    return [_name(obj), _first_three(items), age(_at(obj, "metadata", "creationTimestamp"))]


ENDPOINT_SLICE_COLUMNS: list[Column] = [
    NAME,
    (
        "AddressType",
        "string",
        0,
        "addressType specifies the type of address carried by this EndpointSlice.",
    ),
    (
        "Ports",
        "string",
        0,
        "ports specifies the list of network ports exposed by each endpoint in this slice.",
    ),
    ("Endpoints", "string", 0, "endpoints is a list of unique endpoints in this slice."),
    AGE,
]


def endpoint_slice_cells(obj: Obj, age: AgeFn) -> list[Any]:
    ports = obj.get("ports")
    port_text = ",".join(
        str(_obj(p).get("port")) for p in (ports if isinstance(ports, list) else [])
    )
    endpoints = obj.get("endpoints")
    addresses = [
        str(a)
        for e in (endpoints if isinstance(endpoints, list) else [])
        for a in (_obj(e).get("addresses") or [])
    ]
    return [
        _name(obj),
        str(obj.get("addressType") or ""),
        port_text or "<unset>",
        _first_three(addresses),
        age(_at(obj, "metadata", "creationTimestamp")),
    ]


SECRET = Printer(SECRET_COLUMNS, aged(secret_cells))
SERVICE = Printer(SERVICE_COLUMNS, aged(service_cells))
ENDPOINTS = Printer(ENDPOINTS_COLUMNS, aged(endpoints_cells))
ENDPOINT_SLICE = Printer(ENDPOINT_SLICE_COLUMNS, aged(endpoint_slice_cells))
