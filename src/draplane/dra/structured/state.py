"""Inputs of the structured allocator besides the objects: feature switches, the allocated state.

`AllocatedState` is what the scheduler's allocated-devices tracker plus its in-flight map hold
(structured/internal/allocatedstate.go): dedicated devices, shared devices per shareID and the
capacity their shares consume. `AllocatedState.from_allocations()` builds it from
`status.allocation` dicts of allocated claims and of in-flight allocations alike.

The dedicated devices are a `DeviceSet`: device names grouped by pool in frozensets, so a copy
(the tracker's snapshot, once per scheduling cycle) shares every pool's set and costs one
entry per pool, and a change builds only its pool's set anew. A pool's set (`names`) is then
also what the allocator's caches key on: the same object while the pool's allocated devices
stay the same, a new one as soon as they change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from draplane.api.quantity import parse_quantity

# (driver, pool, device)
DeviceID = tuple[str, str, str]
PoolKey = tuple[str, str]
NO_NAMES: frozenset[str] = frozenset()


def device_id_string(d: DeviceID) -> str:
    return "/".join(d)


class AllocationError(Exception):
    """Allocation cannot proceed: fatal for the pod's scheduling attempt."""


class FailedAllocationOnNode(AllocationError):
    """Concerns only this node (ErrFailedAllocationOnNode): "invalid resource pools ..."."""


@dataclass(frozen=True)
class Features:
    """Allocator feature switches; defaults are the 1.36 feature-gate defaults."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True


class DeviceSet(Set[DeviceID]):
    """A set of device IDs kept per pool (see the module docstring); `copy()` is a dict copy."""

    __slots__ = ("by_pool",)

    def __init__(self, devices: Iterable[DeviceID] = ()) -> None:
        self.by_pool: dict[PoolKey, frozenset[str]] = {}
        """Pool -> its allocated device names (read-only outside this class; `names`)."""
        self.update(devices)

    def __contains__(self, did: object) -> bool:
        if type(did) is not tuple or len(did) != 3:
            return False
        names = self.by_pool.get((did[0], did[1]))
        return names is not None and did[2] in names

    def __iter__(self) -> Iterator[DeviceID]:
        for (driver, pool), names in self.by_pool.items():
            for name in names:
                yield (driver, pool, name)

    def __len__(self) -> int:
        return sum(len(names) for names in self.by_pool.values())

    def __repr__(self) -> str:
        return f"DeviceSet({sorted(self)!r})"

    def names(self, pool: PoolKey) -> frozenset[str]:
        """The pool's allocated device names (one shared empty set for a pool without any)."""
        return self.by_pool.get(pool, NO_NAMES)

    def add(self, did: DeviceID) -> None:
        key = (did[0], did[1])
        names = self.by_pool.get(key)
        if names is None:
            self.by_pool[key] = frozenset((did[2],))
        elif did[2] not in names:
            self.by_pool[key] = names | {did[2]}

    def update(self, devices: Iterable[DeviceID]) -> None:
        grouped: dict[PoolKey, set[str]] = {}
        for did in devices:
            grouped.setdefault((did[0], did[1]), set()).add(did[2])
        for key, names in grouped.items():
            self.by_pool[key] = self.by_pool.get(key, NO_NAMES) | names

    def discard(self, did: DeviceID) -> None:
        key = (did[0], did[1])
        names = self.by_pool.get(key)
        if names is not None and did[2] in names:
            rest = names - {did[2]}
            if rest:
                self.by_pool[key] = rest
            else:
                del self.by_pool[key]

    def copy(self) -> DeviceSet:
        out = DeviceSet()
        out.by_pool = dict(self.by_pool)
        return out


@dataclass
class AllocatedState:
    """Devices in use by allocated and in-flight claims (admin-access results excluded)."""

    allocated_devices: DeviceSet = field(default_factory=DeviceSet)
    # (driver, pool, device, shareID)
    allocated_shared_device_ids: set[tuple[str, str, str, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)
    tracked: bool = False
    """Whether this is a snapshot of the scheduler's incrementally kept counts
    (`AllocatedCounts.snapshot()` sets it; `add()` clears it): only there do the allocator's
    full-node skip and fit memo apply."""
    _shared: set[DeviceID] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.allocated_devices, DeviceSet):
            self.allocated_devices = DeviceSet(self.allocated_devices)

    @classmethod
    def from_allocations(cls, allocations: Iterable[Mapping[str, Any] | None]) -> AllocatedState:
        state = cls()
        for allocation in allocations:
            if allocation:
                state.add(allocation)
        return state

    def add(self, allocation: Mapping[str, Any]) -> None:
        """Record one `status.allocation` (AllocationResult dict)."""
        self.tracked = False
        self._shared = None
        for r in (allocation.get("devices") or {}).get("results") or []:
            if r.get("adminAccess"):
                continue
            did: DeviceID = (r["driver"], r["pool"], r["device"])
            share = r.get("shareID")
            if not share:
                self.allocated_devices.add(did)
                continue
            self.allocated_shared_device_ids.add((*did, share))
            agg = self.aggregated_capacity.setdefault(did, {})
            for name, q in (r.get("consumedCapacity") or {}).items():
                agg[name] = agg.get(name, Fraction(0)) + parse_quantity(str(q))

    def copy(self) -> AllocatedState:
        return AllocatedState(
            self.allocated_devices.copy(),
            set(self.allocated_shared_device_ids),
            {k: dict(v) for k, v in self.aggregated_capacity.items()},
        )

    def shared_devices(self) -> set[DeviceID]:
        """Devices with at least one share allocated (computed once; do not modify)."""
        if self._shared is None:
            self._shared = {(s[0], s[1], s[2]) for s in self.allocated_shared_device_ids} | set(
                self.aggregated_capacity
            )
        return self._shared

    def is_allocated(self, did: DeviceID) -> bool:
        """Dedicated or shared: the device consumes its counters."""
        return did in self.allocated_devices or did in self.shared_devices()


class AllocatedCounts:
    """An AllocatedState kept current allocation by allocation (the scheduler's
    allocated-devices tracker fed by claim events): `add` and `remove` one `status.allocation`,
    `snapshot()` the state they add up to. Devices are counted, so removing one of two
    allocations that name the same device keeps the device allocated."""

    def __init__(self) -> None:
        self._devices: dict[DeviceID, int] = {}
        self._present = DeviceSet()
        """The devices of `_devices` (count above zero), handed out as copies."""
        self._shares: dict[tuple[str, str, str, str], int] = {}
        self._shares_per_device: dict[DeviceID, int] = {}
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}

    def add(self, allocation: Mapping[str, Any]) -> None:
        self._apply(allocation, 1)

    def remove(self, allocation: Mapping[str, Any]) -> None:
        self._apply(allocation, -1)

    def _apply(self, allocation: Mapping[str, Any], sign: int) -> None:
        for r in (allocation.get("devices") or {}).get("results") or []:
            if r.get("adminAccess"):
                continue
            did: DeviceID = (r["driver"], r["pool"], r["device"])
            share = r.get("shareID")
            if not share:
                if _count(self._devices, did, sign):
                    self._present.add(did)
                else:
                    self._present.discard(did)
                continue
            _count(self._shares, (*did, share), sign)
            agg = self._capacity.setdefault(did, {})
            for name, q in (r.get("consumedCapacity") or {}).items():
                agg[name] = agg.get(name, Fraction(0)) + sign * parse_quantity(str(q))
            if not _count(self._shares_per_device, did, sign):
                del self._capacity[did]

    def snapshot(self) -> AllocatedState:
        return AllocatedState(
            self._present.copy(),
            set(self._shares),
            {k: dict(v) for k, v in self._capacity.items()},
            tracked=True,
        )


def _count(counts: dict[Any, int], key: Any, sign: int) -> int:
    n = counts.get(key, 0) + sign
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)
    return max(n, 0)
