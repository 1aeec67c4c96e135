"""Builders for resource.k8s.io/v1 objects with structured parameters.

`make_device_class("gpu").selector('device.driver == "gpu.example.com"').obj()`,
`make_resource_slice("s", driver, pool).node("node-0").device(make_device("gpu-0").attr(...))`,
`make_structured_claim("c").request("gpu", "gpu-class", count=2).obj()`, plus `make_device()`
and `make_request()`/`make_subrequest()` for the pieces. Attribute values are typed by Python type
(bool, int, str); versions go through `version_attr()`. Builders accept other builders wherever
they accept a dict.
"""

from __future__ import annotations

from typing import Any, Self

from draplane.api.meta import Obj, deep_copy
from draplane.testing.basebuilder import _Builder, _ReservedFor, _uid

API_VERSION = "resource.k8s.io/v1"


def _o(value: Any) -> Any:
    return value.obj() if isinstance(value, _Builder | _Part) else deep_copy(value)


def _attr(value: bool | int | str) -> Obj:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


class _Part:
    """A builder for an object fragment (device, request) without metadata."""

    def __init__(self, obj: Obj) -> None:
        self._obj = obj

    def obj(self) -> Obj:
        return deep_copy(self._obj)

    def set(self, key: str, value: Any) -> Self:
        self._obj[key] = _o(value)
        return self


class DeviceBuilder(_Part):
    def attr(self, name: str, value: bool | int | str) -> Self:
        self._obj.setdefault("attributes", {})[name] = _attr(value)
        return self

    def version_attr(self, name: str, value: str) -> Self:
        self._obj.setdefault("attributes", {})[name] = {"version": value}
        return self

    def capacity(self, name: str, value: str, request_policy: Obj | None = None) -> Self:
        entry: Obj = {"value": value}
        if request_policy is not None:
            entry["requestPolicy"] = deep_copy(request_policy)
        self._obj.setdefault("capacity", {})[name] = entry
        return self

    def consumes(self, counter_set: str, **counters: str) -> Self:
        self._obj.setdefault("consumesCounters", []).append(
            {"counterSet": counter_set, "counters": {n: {"value": v} for n, v in counters.items()}}
        )
        return self

    def taint(self, key: str, effect: str = "NoSchedule", value: str = "") -> Self:
        taint: Obj = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        self._obj.setdefault("taints", []).append(taint)
        return self

    def allow_multiple_allocations(self, value: bool = True) -> Self:
        self._obj["allowMultipleAllocations"] = value
        return self

    def binding_conditions(self, conditions: list[str], failure: list[str]) -> Self:
        self._obj["bindingConditions"] = list(conditions)
        self._obj["bindingFailureConditions"] = list(failure)
        return self

    def binds_to_node(self, value: bool = True) -> Self:
        self._obj["bindsToNode"] = value
        return self

    def node_name(self, value: str) -> Self:
        self._obj["nodeName"] = value
        return self

    def all_nodes(self) -> Self:
        self._obj["allNodes"] = True
        return self

    def node_selector(self, selector: Obj) -> Self:
        self._obj["nodeSelector"] = deep_copy(selector)
        return self


def make_device(name: str) -> DeviceBuilder:
    return DeviceBuilder({"name": name})


class SliceBuilder(_Builder):
    @property
    def _spec(self) -> Obj:
        spec: Obj = self._obj["spec"]
        return spec

    def node(self, name: str) -> Self:
        self._spec["nodeName"] = name
        return self

    def all_nodes(self) -> Self:
        self._spec["allNodes"] = True
        return self

    def node_selector(self, selector: Obj) -> Self:
        self._spec["nodeSelector"] = deep_copy(selector)
        return self

    def per_device_node_selection(self) -> Self:
        self._spec["perDeviceNodeSelection"] = True
        return self

    def generation(self, value: int) -> Self:
        self._spec["pool"]["generation"] = value
        return self

    def slice_count(self, value: int) -> Self:
        self._spec["pool"]["resourceSliceCount"] = value
        return self

    def device(self, *devices: DeviceBuilder | Obj | str) -> Self:
        for d in devices:
            entry = {"name": d} if isinstance(d, str) else _o(d)
            self._spec.setdefault("devices", []).append(entry)
        return self

    def shared_counters(self, name: str, **counters: str) -> Self:
        self._spec.setdefault("sharedCounters", []).append(
            {"name": name, "counters": {n: {"value": v} for n, v in counters.items()}}
        )
        return self


def make_resource_slice(
    name: str, driver: str = "driver.example.com", pool: str = "pool-0"
) -> SliceBuilder:
    return SliceBuilder(
        {
            "apiVersion": API_VERSION,
            "kind": "ResourceSlice",
            "metadata": {"name": name, "uid": _uid(name)},
            "spec": {
                "driver": driver,
                "pool": {"name": pool, "generation": 0, "resourceSliceCount": 1},
            },
        }
    )


class DeviceClassBuilder(_Builder):
    def selector(self, expression: str) -> Self:
        self._obj["spec"].setdefault("selectors", []).append({"cel": {"expression": expression}})
        return self

    def config(self, driver: str, parameters: Obj | None = None) -> Self:
        self._obj["spec"].setdefault("config", []).append(
            {"opaque": {"driver": driver, "parameters": deep_copy(parameters or {})}}
        )
        return self

    def extended_resource_name(self, value: str) -> Self:
        self._obj["spec"]["extendedResourceName"] = value
        return self


def make_device_class(name: str = "example", driver: str | None = None) -> DeviceClassBuilder:
    """A DeviceClass; with `driver`, one selector `device.driver == "<driver>"`."""
    b = DeviceClassBuilder(
        {
            "apiVersion": API_VERSION,
            "kind": "DeviceClass",
            "metadata": {"name": name, "uid": _uid(name)},
            "spec": {},
        }
    )
    if driver:
        b.selector(f'device.driver == "{driver}"')
    return b


def _exact(
    device_class: str,
    *,
    count: int | None,
    mode: str | None,
    selectors: list[str] | None,
    admin_access: bool | None,
    tolerations: list[Obj] | None,
    capacity: dict[str, str] | None,
) -> Obj:
    out: Obj = {"deviceClassName": device_class, "allocationMode": mode or "ExactCount"}
    if out["allocationMode"] == "ExactCount":
        out["count"] = 1 if count is None else count
    if selectors:
        out["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if admin_access is not None:
        out["adminAccess"] = admin_access
    if tolerations:
        out["tolerations"] = [deep_copy(t) for t in tolerations]
    if capacity:
        out["capacity"] = {"requests": dict(capacity)}
    return out


def make_subrequest(
    name: str,
    device_class: str,
    *,
    count: int | None = None,
    mode: str | None = None,
    selectors: list[str] | None = None,
    tolerations: list[Obj] | None = None,
    capacity: dict[str, str] | None = None,
) -> Obj:
    """One `firstAvailable` entry (defaulted as the API server defaults it)."""
    sub = _exact(
        device_class,
        count=count,
        mode=mode,
        selectors=selectors,
        admin_access=None,
        tolerations=tolerations,
        capacity=capacity,
    )
    return {"name": name, **sub}


class StructuredClaimBuilder(_ReservedFor):
    @property
    def _devices(self) -> Obj:
        devices: Obj = self._obj["spec"]["devices"]
        return devices

    def request(
        self,
        name: str,
        device_class: str,
        *,
        count: int | None = None,
        mode: str | None = None,
        selectors: list[str] | None = None,
        admin_access: bool | None = None,
        tolerations: list[Obj] | None = None,
        capacity: dict[str, str] | None = None,
    ) -> Self:
        exactly = _exact(
            device_class,
            count=count,
            mode=mode,
            selectors=selectors,
            admin_access=admin_access,
            tolerations=tolerations,
            capacity=capacity,
        )
        self._devices.setdefault("requests", []).append({"name": name, "exactly": exactly})
        return self

    def first_available(self, name: str, *subrequests: Obj) -> Self:
        self._devices.setdefault("requests", []).append(
            {"name": name, "firstAvailable": [deep_copy(s) for s in subrequests]}
        )
        return self

    def raw_request(self, request: Obj) -> Self:
        self._devices.setdefault("requests", []).append(deep_copy(request))
        return self

    def match_attribute(self, attribute: str, *requests: str) -> Self:
        c: Obj = {"matchAttribute": attribute}
        if requests:
            c["requests"] = list(requests)
        self._devices.setdefault("constraints", []).append(c)
        return self

    def distinct_attribute(self, attribute: str, *requests: str) -> Self:
        c: Obj = {"distinctAttribute": attribute}
        if requests:
            c["requests"] = list(requests)
        self._devices.setdefault("constraints", []).append(c)
        return self

    def config(self, driver: str, parameters: Obj | None = None, *requests: str) -> Self:
        c: Obj = {"opaque": {"driver": driver, "parameters": deep_copy(parameters or {})}}
        if requests:
            c["requests"] = list(requests)
        self._devices.setdefault("config", []).append(c)
        return self

    def allocation(self, allocation: Obj) -> Self:
        self._obj.setdefault("status", {})["allocation"] = deep_copy(allocation)
        return self


def make_structured_claim(
    name: str = "claim", namespace: str = "default"
) -> StructuredClaimBuilder:
    return StructuredClaimBuilder(
        {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"devices": {}},
        }
    )


def make_structured_claim_template(
    name: str = "template", namespace: str = "default", claim: StructuredClaimBuilder | None = None
) -> _Builder:
    spec = (claim.obj() if claim is not None else make_structured_claim().obj())["spec"]
    return _Builder(
        {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace, "uid": _uid(name)},
            "spec": {"spec": spec},
        }
    )


def device_result(
    request: str,
    device: str,
    driver: str = "driver.example.com",
    pool: str = "pool-0",
    **extra: Any,
) -> Obj:
    """One expected `devices.results` entry."""
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


def node_selector_for(node: str) -> Obj:
    """The allocation nodeSelector of a node-local allocation."""
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }
