"""Why the devices of one node do not serve one claim request: every device of the node's
usable pools goes through the allocator's own checks in the allocator's order (class selectors,
request selectors, device taints, in use, shared counters, consumable capacity) and the first
check it fails is recorded (`RequestDiagnosis`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from draplane.api.quantity import parse_quantity
from draplane.dra.cel import CELCompileError, CELRuntimeError, SelectorCache
from draplane.dra.structured import AllocatedState, Pool, available_counters
from draplane.dra.structured.capacity import fits as capacity_fits, format_quantity
from draplane.dra.structured.constraints import lookup_attribute
from draplane.dra.structured.pools import Candidate, node_matches
from draplane.dra.structured.requests import RequestData, tolerates

Obj = Mapping[str, Any]
DeviceID = tuple[str, str, str]

_ATTR = re.compile(r'device\.attributes\[\s*"([^"]+)"\s*\](?:\.(\w+)|\[\s*"([^"]+)"\s*\])')


@dataclass
class SelectorMiss:
    owner: str
    """"class NAME" or "claim NS/NAME"."""
    index: int
    expression: str
    devices: list[DeviceID] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    """Attribute the expression reads -> its value on the first such device."""


@dataclass
class CounterMiss:
    pool: str
    counter_set: str
    counter: str
    needed: str
    available: str
    devices: list[DeviceID] = field(default_factory=list)


@dataclass
class RequestDiagnosis:
    """One request's devices on one node, by the first check each fails."""

    wanted: int
    """Devices the request needs (for allocationMode All: every matching device)."""
    all_mode: bool
    candidates: int = 0
    matching: int = 0
    """Devices passing the class and request selectors."""
    free: list[DeviceID] = field(default_factory=list)
    selector_misses: dict[tuple[str, int], SelectorMiss] = field(default_factory=dict)
    cel_errors: dict[tuple[str, int], str] = field(default_factory=dict)
    """(owner, selector index) -> the CEL error text."""
    expressions: dict[tuple[str, int], str] = field(default_factory=dict)
    not_for_node: list[DeviceID] = field(default_factory=list)
    tainted: dict[str, list[DeviceID]] = field(default_factory=dict)
    """Untolerated taint ("key=value:Effect") -> devices."""
    held: dict[DeviceID, list[str]] = field(default_factory=dict)
    """Device in use -> the claims ("ns/name") holding it."""
    counters: dict[tuple[str, str, str], CounterMiss] = field(default_factory=dict)
    capacity: list[tuple[DeviceID, str]] = field(default_factory=list)
    """(device, what is short) of devices whose consumable capacity is exhausted."""

    @property
    def fits(self) -> bool:
        if self.all_mode:
            return self.matching > 0 and len(self.free) == self.matching
        return len(self.free) >= self.wanted


def taint_text(taint: Obj) -> str:
    value = taint.get("value") or ""
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect', '')}"


def attribute_values(expression: str, c: Candidate) -> dict[str, str]:
    out: dict[str, str] = {}
    for domain, ident_dot, ident_index in _ATTR.findall(expression):
        ident = ident_dot or ident_index
        qualified = f"{domain}/{ident}"
        attr = lookup_attribute(c.device, c.driver, qualified)
        if attr is None:
            out[qualified] = "(not set)"
            continue
        for kind in ("string", "int", "bool", "version"):
            if kind in attr:
                out[qualified] = repr(attr[kind]) if kind == "string" else str(attr[kind])
    return out


def _selectors_pass(
    cache: SelectorCache, owner: str, exprs: list[str], c: Candidate, out: RequestDiagnosis
) -> bool:
    for i, expr in enumerate(exprs):
        key = (owner, i)
        out.expressions[key] = expr
        try:
            ok = cache.matches(expr, c.driver, c.device)
        except (CELCompileError, CELRuntimeError) as err:
            out.cel_errors.setdefault(key, str(err))
            return False
        if not ok:
            miss = out.selector_misses.get(key)
            if miss is None:
                miss = out.selector_misses[key] = SelectorMiss(
                    owner, i, expr, values=attribute_values(expr, c)
                )
            miss.devices.append(c.id)
            return False
    return True


def _counter_shortage(
    c: Candidate, available: dict[str, dict[str, Fraction]]
) -> tuple[str, str, Fraction, Fraction] | None:
    for use in c.device.get("consumesCounters") or ():
        set_name = str(use.get("counterSet", ""))
        for name, v in (use.get("counters") or {}).items():
            need = parse_quantity(str((v or {}).get("value", "0")))
            have = (available.get(set_name) or {}).get(name, Fraction(0))
            if need > have:
                return set_name, str(name), need, have
    return None


def diagnose_request(
    *,
    rd: RequestData,
    owner: str,
    node: Obj,
    candidates: list[Candidate],
    allocated: AllocatedState,
    holders: Callable[[DeviceID], list[str]],
    cache: SelectorCache,
) -> RequestDiagnosis:
    out = RequestDiagnosis(wanted=rd.count, all_mode=rd.all_mode)
    counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}

    def pool_counters(pool: Pool) -> dict[str, dict[str, Fraction]]:
        key = (pool.driver, pool.name)
        if key not in counters:
            counters[key] = available_counters(pool, allocated)
        return counters[key]

    for c in candidates:
        out.candidates += 1
        if not _selectors_pass(cache, f"class {rd.class_name}", rd.class_selectors, c, out):
            continue
        if not _selectors_pass(cache, owner, rd.selectors, c, out):
            continue
        device = c.device
        if (c.slice.get("spec") or {}).get("perDeviceNodeSelection") and not node_matches(
            node, device.get("nodeName"), bool(device.get("allNodes")), device.get("nodeSelector")
        ):
            out.not_for_node.append(c.id)
            continue
        out.matching += 1
        untolerated = [
            t
            for t in device.get("taints") or ()
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not any(tolerates(tol, t) for tol in rd.tolerations)
        ]
        if untolerated:
            out.tainted.setdefault(taint_text(untolerated[0]), []).append(c.id)
            continue
        multi = bool(device.get("allowMultipleAllocations"))
        if not rd.admin_access and c.id in allocated.allocated_devices:
            out.held[c.id] = holders(c.id)
            continue
        shared = c.id in allocated.aggregated_capacity
        if device.get("consumesCounters") and not (multi and shared):
            short = _counter_shortage(c, pool_counters(c.pool))
            if short is not None:
                set_name, counter, need, have = short
                key = (c.pool.pool_id, set_name, counter)
                miss = out.counters.get(key)
                if miss is None:
                    miss = out.counters[key] = CounterMiss(
                        c.pool.pool_id, set_name, counter, format_quantity(need),
                        format_quantity(have),
                    )  # fmt: skip
                miss.devices.append(c.id)
                continue
        if (rd.capacity or multi) and not capacity_fits(
            rd.capacity, device, allocated.aggregated_capacity.get(c.id), None, allow_multiple=multi
        ):
            out.capacity.append((c.id, _capacity_text(rd, device, allocated, c.id)))
            continue
        out.free.append(c.id)
    if rd.all_mode:
        out.wanted = out.matching
    return out


def _capacity_text(rd: RequestData, device: Obj, allocated: AllocatedState, did: DeviceID) -> str:
    used = allocated.aggregated_capacity.get(did) or {}
    parts = []
    for name, cap in (device.get("capacity") or {}).items():
        if rd.capacity and name not in rd.capacity:
            continue
        total = parse_quantity(str((cap or {}).get("value", "0")))
        want = rd.capacity.get(name)
        want_text = format_quantity(want) if want is not None else "default"
        parts.append(
            f"{name}: requested {want_text}, free {format_quantity(total - used.get(name, 0))}"
            f" of {format_quantity(total)}"
        )
    missing = [n for n in rd.capacity if n not in (device.get("capacity") or {})]
    parts += [f"{n}: the device has no such capacity" for n in missing]
    return "; ".join(parts)
