"""Defaulting of Secrets, Services, Endpoints and EndpointSlices (pkg/apis/core/v1/defaults.go,
pkg/apis/discovery/v1/defaults.go, and the v1 conversion that folds `stringData` into `data`).

Functions change the object in place and never raise on malformed input.
"""

from __future__ import annotations

import base64
from typing import Any

from draplane.api.meta import Obj


def _dict(parent: Any, key: str) -> Obj | None:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else None


def default_secret(obj: Obj) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            if isinstance(value, str):
                data[key] = base64.b64encode(value.encode()).decode()


def _ports(ports: Any, *, target: bool) -> None:
    for port in ports if isinstance(ports, list) else []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if target and port.get("targetPort") in (None, 0, "") and port.get("port") is not None:
            port["targetPort"] = port["port"]


def default_service(obj: Obj) -> None:
    if obj.get("spec") is None:
        obj["spec"] = {}
    spec = _dict(obj, "spec")
    if spec is None:
        return
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "ClientIP" and not spec.get("sessionAffinityConfig"):
        spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    _ports(spec.get("ports"), target=True)
    kind = spec["type"]
    if kind in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if kind != "ExternalName" and not spec.get("internalTrafficPolicy"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    if obj.get("status") is None:
        obj["status"] = {"loadBalancer": {}}


def default_endpoints(obj: Obj) -> None:
    for subset in obj.get("subsets") or []:
        if isinstance(subset, dict):
            _ports(subset.get("ports"), target=False)


def default_endpoint_slice(obj: Obj) -> None:
    ports = obj.get("ports")
    _ports(ports, target=False)
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict) and port.get("name") is None:
            port["name"] = ""
