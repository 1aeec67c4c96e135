"""Defaulting of resource.k8s.io/v1's kinds (pkg/apis/resource/v1/defaults.go, 1.36): a request
or subrequest without `allocationMode` gets `ExactCount` and then `count: 1`, a toleration
without operator `Equal`; the non-pointer structs are on the wire (`spec: {}`, `status: {}`).
"""

from __future__ import annotations

from typing import Any

from draplane.api.meta import Obj


def _structs(obj: Any, *fields: str) -> None:
    if isinstance(obj, dict):
        for field in fields:
            if obj.get(field) is None:
                obj[field] = {}


def _exact(request: Any) -> None:
    if not isinstance(request, dict):
        return
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and request.get("count") in (None, 0):
        request["count"] = 1
    for toleration in request.get("tolerations") or []:
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def default_claim_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    _structs(spec, "devices")
    devices = spec["devices"]
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return
    for request in devices["requests"]:
        if not isinstance(request, dict):
            continue
        _exact(request.get("exactly"))
        for sub in request.get("firstAvailable") or []:
            _exact(sub)


def default_claim(obj: Obj) -> None:
    _structs(obj, "spec", "status")
    default_claim_spec(obj.get("spec"))


def default_claim_template(obj: Obj) -> None:
    _structs(obj, "spec")
    spec = obj.get("spec")
    _structs(spec, "metadata", "spec")
    if isinstance(spec, dict):
        md = spec.get("metadata")
        if isinstance(md, dict) and "creationTimestamp" not in md:
            md["creationTimestamp"] = None  # metav1.Time without omitempty
        default_claim_spec(spec.get("spec"))


def default_spec(obj: Obj) -> None:
    _structs(obj, "spec")
