"""Claim constraints across requests: `matchAttribute` and `distinctAttribute`.

Both take a fully qualified attribute name; a device of driver D also matches `D/<id>` through its
bare `<id>` attribute. `add()` either accepts a device (and books it) or rejects it; every accepted
`add()` is undone by exactly one `remove()` with the same arguments when the search backtracks.
"""

from __future__ import annotations

from typing import Any

from draplane.api.types import Device, DeviceAttribute


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    attrs = device.get("attributes") or {}
    hit = attrs.get(name)
    if hit is not None:
        return hit
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return attrs.get(ident)


def _value(attr: DeviceAttribute) -> tuple[str, Any] | None:
    for kind in ("string", "int", "bool", "version"):
        if kind in attr:
            return kind, attr[kind]
    return None


class _Constraint:
    def __init__(self, requests: list[str], attribute: str) -> None:
        self.requests = set(requests)
        self.attribute = attribute

    def applies(self, request: str, subrequest: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (
            bool(subrequest) and f"{request}/{subrequest}" in self.requests
        )

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        raise NotImplementedError

    def remove(self, request: str, subrequest: str, device: Device, driver: str) -> None:
        raise NotImplementedError


class MatchAttribute(_Constraint):
    """All devices in scope share one attribute value (same type and value)."""

    def __init__(self, requests: list[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        if not self.applies(request, subrequest):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        value = _value(attr) if attr is not None else None
        if value is None:
            return False
        if self.count == 0:
            self.value = value
        elif value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str, device: Device, driver: str) -> None:
        if self.applies(request, subrequest):
            self.count -= 1


class DistinctAttribute(_Constraint):
    """All devices in scope have different values of the attribute.

    Values are remembered per request name, as upstream does: devices of one request overwrite
    each other's entry, so only values of different requests are compared against each other.
    """

    def __init__(self, requests: list[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: dict[str, tuple[str, Any]] = {}

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        if not self.applies(request, subrequest):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        value = _value(attr) if attr is not None else None
        if value is None or value in self.values.values():
            return False
        self.values[request] = value
        return True

    def remove(self, request: str, subrequest: str, device: Device, driver: str) -> None:
        if self.applies(request, subrequest):
            self.values.pop(request, None)
