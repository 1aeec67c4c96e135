"""Conversion between the served versions of resource.k8s.io's structured-parameters kinds
(kubernetes/kubernetes pkg/apis/resource/v1beta1/conversion.go): objects are stored at v1 and
read at the requested version.

v1beta2 has v1's shape (only apiVersion changes). v1beta1 differs in two places:

* a claim's requests carry `deviceClassName, selectors, allocationMode, count, adminAccess,
  tolerations, capacity` directly beside `firstAvailable`, where v1 wraps them in `exactly`;
  v1beta1 -> v1 creates `exactly` only when one of them is set, v1 -> v1beta1 copies them up;
* a slice's devices nest their fields in `basic`, which v1 flattens; v1beta1's `nodeName: ""`
  and `allNodes: false` are absent in v1.

Both directions keep every field, so v1beta1 -> v1 -> v1beta1 and back are lossless.
"""

from __future__ import annotations

from typing import Any

from draplane.api import kinds, meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj

STORAGE_VERSION = "v1"
CONVERTED_VERSIONS = ("v1beta1", "v1beta2")
_KINDS = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"}

EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
"""A v1 `exactly` request's fields, which v1beta1 has on the request itself."""
BASIC_FIELDS = (
    "attributes",
    "capacity",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "taints",
    "bindsToNode",
    "bindingConditions",
    "bindingFailureConditions",
    "allowMultipleAllocations",
)
"""A v1 device's fields, which v1beta1 nests in `basic`."""


def converts(rt: ResourceType) -> bool:
    """True for a version of a structured kind that is stored at another version."""
    return (
        rt.group == kinds.RESOURCE_GROUP
        and rt.version in CONVERTED_VERSIONS
        and rt.kind in _KINDS
        and rt.custom is None
    )


def storage_type(rt: ResourceType) -> ResourceType:
    """The v1 type `rt`'s objects are stored as."""
    found = kinds.lookup(rt.group, STORAGE_VERSION, rt.resource)
    assert found is not None, rt
    return found


def convert(obj: Any, version: str) -> Any:
    """`obj` (an object or a list, of any of the versions) at `version`; anything that is not
    a structured kind's object is returned as is."""
    if not isinstance(obj, dict):
        return obj
    api_version = obj.get("apiVersion")
    kind = str(obj.get("kind") or "")
    if isinstance(obj.get("items"), list) and kind.endswith("List") and kind[:-4] in _KINDS:
        return {
            **obj,
            "apiVersion": f"{kinds.RESOURCE_GROUP}/{version}",
            "items": [convert(i, version) for i in obj["items"]],
        }
    if kind not in _KINDS or not isinstance(api_version, str):
        return obj
    group, _, current = api_version.rpartition("/")
    if group != kinds.RESOURCE_GROUP or current == version:
        return obj
    out = meta.deep_copy(obj)
    out["apiVersion"] = f"{kinds.RESOURCE_GROUP}/{version}"
    if current == "v1beta1":
        _from_v1beta1(kind, out)
    if version == "v1beta1":
        _to_v1beta1(kind, out)
    return out


def _claim_specs(kind: str, obj: Obj) -> list[Obj]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    if kind == "ResourceClaimTemplate":
        spec = spec.get("spec")
        return [spec] if isinstance(spec, dict) else []
    return [spec] if kind == "ResourceClaim" else []


def _requests(kind: str, obj: Obj) -> list[Obj]:
    out: list[Obj] = []
    for spec in _claim_specs(kind, obj):
        devices = spec.get("devices")
        if isinstance(devices, dict) and isinstance(devices.get("requests"), list):
            out.extend(r for r in devices["requests"] if isinstance(r, dict))
    return out


def _slice_devices(kind: str, obj: Obj) -> list[Obj]:
    spec = obj.get("spec")
    if kind != "ResourceSlice" or not isinstance(spec, dict):
        return []
    devices = spec.get("devices")
    return [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []


def _from_v1beta1(kind: str, obj: Obj) -> None:
    for request in _requests(kind, obj):
        exactly = {k: request.pop(k) for k in EXACT_FIELDS if k in request}
        if exactly:
            request["exactly"] = exactly
    for device in _slice_devices(kind, obj):
        basic = device.pop("basic", None)
        if isinstance(basic, dict):
            device.update(basic)
    spec = obj.get("spec")
    if kind == "ResourceSlice" and isinstance(spec, dict):
        if spec.get("nodeName") == "":
            del spec["nodeName"]
        if spec.get("allNodes") is False:
            del spec["allNodes"]


def _to_v1beta1(kind: str, obj: Obj) -> None:
    for request in _requests(kind, obj):
        exactly = request.pop("exactly", None)
        if isinstance(exactly, dict):
            request.update(exactly)
    for device in _slice_devices(kind, obj):
        basic = {k: device.pop(k) for k in BASIC_FIELDS if k in device}
        device["basic"] = basic
