"""Consumable capacity (DRAConsumableCapacity): how much of a shareable device a request uses.

A device with `allowMultipleAllocations: true` can be allocated many times; each allocation
consumes an amount of every capacity: the request rounded up to the capacity's `requestPolicy`
(`validRange` min + k*step, or the smallest of `validValues`), or when not requested the policy's
`default`, else the whole capacity. For other devices capacity requests only filter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from draplane.api.quantity import parse_quantity
from draplane.api.types import Device, DeviceCapacity, DeviceSubRequest, ExactDeviceRequest


def requested_capacity(request: ExactDeviceRequest | DeviceSubRequest) -> dict[str, Fraction]:
    reqs = (request.get("capacity") or {}).get("requests") or {}
    return {name: parse_quantity(str(q)) for name, q in reqs.items()}


def _consumed(requested: Fraction | None, cap: DeviceCapacity) -> Fraction | None:
    """The amount consumed of one capacity, or None when the policy cannot satisfy it."""
    value = parse_quantity(str(cap.get("value", "0")))
    policy = cap.get("requestPolicy")
    if requested is None:
        if policy and policy.get("default") is not None:
            return parse_quantity(str(policy["default"]))
        return value
    if not policy:
        return requested
    valid_values = policy.get("validValues")
    if valid_values:
        fits = [v for v in map(lambda q: parse_quantity(str(q)), valid_values) if v >= requested]
        return min(fits) if fits else None
    rng = policy.get("validRange")
    if rng:
        low = parse_quantity(str(rng.get("min", "0")))
        if requested <= low:
            amount = low
        elif rng.get("step"):
            step = parse_quantity(str(rng["step"]))
            amount = low + math.ceil((requested - low) / step) * step
        else:
            amount = requested
        if rng.get("max") is not None and amount > parse_quantity(str(rng["max"])):
            return None
        return amount
    return requested


def consumed_capacity(
    requested: Mapping[str, Fraction], device: Device
) -> dict[str, Fraction] | None:
    """What one allocation of a shareable device consumes, or None if the policy forbids it."""
    out: dict[str, Fraction] = {}
    for name, cap in (device.get("capacity") or {}).items():
        amount = _consumed(requested.get(name), cap or {})
        if amount is None:
            return None
        out[name] = amount
    return out


def fits(
    requested: Mapping[str, Fraction],
    device: Device,
    allocated: Mapping[str, Fraction] | None,
    allocating: Mapping[str, Fraction] | None,
    *,
    allow_multiple: bool,
) -> bool:
    caps = device.get("capacity") or {}
    for name in requested:
        if name not in caps:
            return False  # a request naming a capacity the device lacks skips the device
    if not allow_multiple:
        return all(
            amount <= parse_quantity(str((caps[name] or {}).get("value", "0")))
            for name, amount in requested.items()
        )
    consumed = consumed_capacity(requested, device)
    if consumed is None:
        return False
    for name, amount in consumed.items():
        total = parse_quantity(str((caps[name] or {}).get("value", "0")))
        used = (allocated or {}).get(name, Fraction(0)) + (allocating or {}).get(name, Fraction(0))
        if used + amount > total:
            return False
    return True


def format_quantity(value: Fraction) -> str:
    """A canonical quantity string: binary suffix for whole multiples of 1Ki.., else decimal."""
    if value.denominator == 1:
        n = value.numerator
        for suffix, mult in (
            ("Ei", 2**60),
            ("Pi", 2**50),
            ("Ti", 2**40),
            ("Gi", 2**30),
            ("Mi", 2**20),
            ("Ki", 2**10),
        ):
            if n and n % mult == 0:
                return f"{n // mult}{suffix}"
        return str(n)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return f"{math.ceil(value * 10**9)}n"
