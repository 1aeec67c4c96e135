"""Per-pool device and counter utilisation of a state: for each (driver, pool) the devices its
slices of the newest generation publish, how many are allocated (named in some ResourceClaim's
`status.allocation`), and for each shared counter its capacity and what the allocated devices
consume of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from draplane.api.kinds import RESOURCE_SLICES
from draplane.api.meta import Obj
from draplane.api.quantity import parse_quantity
from draplane.explain import Snapshot

PoolKey = tuple[str, str]
"""(driver, pool)"""


@dataclass
class PoolUsage:
    devices: int = 0
    allocated: int = 0
    counters: dict[str, list[Fraction]] = field(default_factory=dict)
    """`counterSet/counter` -> [consumed, capacity]."""

    def json(self) -> dict[str, Any]:
        return {
            "devices": self.devices,
            "allocated": self.allocated,
            "counters": {
                name: {"consumed": _number(used), "capacity": _number(cap)}
                for name, (used, cap) in sorted(self.counters.items())
            },
        }

    @property
    def fraction(self) -> float:
        return self.allocated / self.devices if self.devices else 0.0


def _number(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)


def _quantity(entry: Any) -> Fraction:
    try:
        return parse_quantity((entry or {}).get("value") or "0")
    except ValueError:
        return Fraction(0)


def _newest_slices(state: Snapshot) -> dict[PoolKey, list[Obj]]:
    pools: dict[PoolKey, tuple[int, list[Obj]]] = {}
    for s in state.kind(RESOURCE_SLICES).values():
        spec = s.get("spec") or {}
        pool = spec.get("pool") or {}
        key = (str(spec.get("driver") or ""), str(pool.get("name") or ""))
        generation = int(pool.get("generation") or 0)
        have = pools.get(key)
        if have is None or generation > have[0]:
            pools[key] = (generation, [s])
        elif generation == have[0]:
            have[1].append(s)
    return {key: slices for key, (_, slices) in pools.items()}


def allocated_devices(state: Snapshot) -> set[tuple[str, str, str]]:
    return set(state.claim_holders())


def pool_usage(state: Snapshot) -> dict[PoolKey, PoolUsage]:
    """Every pool's utilisation, by (driver, pool)."""
    allocated = allocated_devices(state)
    out: dict[PoolKey, PoolUsage] = {}
    for key, slices in sorted(_newest_slices(state).items()):
        usage = out[key] = PoolUsage()
        driver, pool = key
        for s in slices:
            spec = s.get("spec") or {}
            for counter_set in spec.get("sharedCounters") or ():
                set_name = str(counter_set.get("name") or "")
                for name, value in (counter_set.get("counters") or {}).items():
                    entry = usage.counters.setdefault(f"{set_name}/{name}", [Fraction(0)] * 2)
                    entry[1] += _quantity(value)
        for s in slices:
            for device in (s.get("spec") or {}).get("devices") or ():
                usage.devices += 1
                if (driver, pool, str(device.get("name"))) not in allocated:
                    continue
                usage.allocated += 1
                for consumed in device.get("consumesCounters") or ():
                    set_name = str(consumed.get("counterSet") or "")
                    for name, value in (consumed.get("counters") or {}).items():
                        entry = usage.counters.setdefault(f"{set_name}/{name}", [Fraction(0)] * 2)
                        entry[0] += _quantity(value)
    return out


def totals(usage: dict[PoolKey, PoolUsage]) -> tuple[int, int]:
    """(devices, allocated) over all pools."""
    return sum(u.devices for u in usage.values()), sum(u.allocated for u in usage.values())
