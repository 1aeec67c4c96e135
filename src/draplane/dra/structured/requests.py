"""Preparing claim requests for the search (validateDeviceRequest in the upstream allocator).

One `RequestData` per plain request and per firstAvailable subrequest, holding the resolved
DeviceClass, the selector expressions, the device count and, for allocationMode All, the fixed
list of devices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from draplane.api.types import (
    Device,
    DeviceClass,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
)
from draplane.dra.structured.capacity import requested_capacity
from draplane.dra.structured.pools import Candidate

Obj = Mapping[str, Any]
Claim = ResourceClaim | Obj
"""A v1 ResourceClaim, typed or as the plain dict the caller has (read-only)."""
Request = ExactDeviceRequest | DeviceSubRequest
"""What one RequestData serves: a request's `exactly`, or one of its subrequests."""


@dataclass
class RequestData:
    claim_index: int
    request_index: int
    sub_index: int
    name: str  # the request's or the subrequest's own name
    parent: str  # the parent request's name for a subrequest, else ""
    spec: Request
    class_name: str
    device_class: DeviceClass | Obj
    class_selectors: list[str]
    selectors: list[str]
    count: int
    all_mode: bool
    admin_access: bool
    tolerations: list[DeviceToleration]
    capacity: dict[str, Fraction]
    all_devices: list[Candidate] = field(default_factory=list)
    # Class selectors, a separator no expression can be, request selectors: the cache key.
    all_selectors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.all_selectors = (*self.class_selectors, "\x00", *self.selectors)

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.claim_index, self.request_index, self.sub_index)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def selector_expressions(selectors: list[DeviceSelector] | None) -> list[str | None]:
    return [((s or {}).get("cel") or {}).get("expression") for s in selectors or []]


def make_request_data(
    claim_index: int,
    request_index: int,
    sub_index: int,
    name: str,
    parent: str,
    spec: Request,
    device_class: DeviceClass | Obj,
    *,
    admin_access: bool,
) -> RequestData:
    class_selectors = [
        e or "" for e in selector_expressions((device_class.get("spec") or {}).get("selectors"))
    ]
    mode = spec.get("allocationMode") or "ExactCount"
    return RequestData(
        claim_index=claim_index,
        request_index=request_index,
        sub_index=sub_index,
        name=name,
        parent=parent,
        spec=spec,
        class_name=spec.get("deviceClassName", ""),
        device_class=device_class,
        class_selectors=class_selectors,
        selectors=[e or "" for e in selector_expressions(spec.get("selectors"))],
        count=int(spec.get("count") or 1) if mode == "ExactCount" else 0,
        all_mode=mode == "All",
        admin_access=admin_access,
        tolerations=list(spec.get("tolerations") or []),
        capacity=requested_capacity(spec),
    )


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """resourceclaim.ToleratesTaint."""
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def taint_prevents_allocation(device: Device, tolerations: list[DeviceToleration]) -> bool:
    for taint in device.get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
            tolerates(t, taint) for t in tolerations
        ):
            return True
    return False
