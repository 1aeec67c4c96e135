"""The depth-first, first-fit search of one `Allocator.allocate()` call (allocateOne upstream).

Claims in order, requests in spec order, one slot per device; candidates in pool -> slice ->
device order; the next slot of the same request starts after the previous slot's device, so only
combinations are tried. A firstAvailable request tries its subrequests in order; the first that
leads to a complete solution of everything after it wins. Results are booked and undone on
backtracking (in-use marks, constraints, counters, capacity).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from draplane.api import meta
from draplane.api.quantity import parse_quantity
from draplane.dra.cel import CELCompileError, CELRuntimeError
from draplane.dra.structured import capacity as cap
from draplane.dra.structured.constraints import _Constraint
from draplane.dra.structured.context import AllocationContext
from draplane.dra.structured.pools import Candidate, Pool, node_matches
from draplane.dra.structured.requests import (
    Claim,
    RequestData,
    taint_prevents_allocation,
)
from draplane.dra.structured.results import DeviceResult, build_allocation
from draplane.dra.structured.state import AllocatedState, AllocationError, DeviceID

Obj = Mapping[str, Any]
Counters = dict[str, dict[str, Fraction]]
_MAX_RESULTS = 32


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: the claim would get more than 32 results."""


def is_selectable(
    alloc: AllocationContext,
    memo: dict[tuple[DeviceID, tuple[int, int, int]], bool] | None,
    rd: RequestData,
    c: Candidate,
    claim: Claim,
    node: Obj,
) -> bool:
    """Class selectors, then request selectors, then per-device node selection (cached)."""
    if memo is not None:
        hit = memo.get((c.id, rd.key))
        if hit is not None:
            return hit
    device = c.device
    if not alloc.features.device_binding_and_status and device.get("bindingConditions"):
        return False
    cache = alloc.cache
    ok = cache.cached_all(rd.all_selectors, c.driver, device)
    if ok is None:
        ok = _selectors_match(alloc, rd.class_selectors, c, f"class {rd.class_name}") and (
            _selectors_match(alloc, rd.selectors, c, f"claim {meta.key(claim)}")
        )
        cache.remember_all(rd.all_selectors, c.driver, device, ok)
    if ok and (c.slice.get("spec") or {}).get("perDeviceNodeSelection"):
        ok = node_matches(
            node, device.get("nodeName"), bool(device.get("allNodes")), device.get("nodeSelector")
        )
    if memo is not None:
        memo[(c.id, rd.key)] = ok
    return ok


def _selectors_match(alloc: AllocationContext, exprs: list[str], c: Candidate, owner: str) -> bool:
    for i, expr in enumerate(exprs):
        try:
            if not alloc.cache.matches(expr, c.driver, c.device):
                return False
        except CELCompileError as e:
            raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {e}") from None
        except CELRuntimeError as e:
            raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {e}") from None
    return True


def capacity_fits(
    rd: RequestData,
    c: Candidate,
    allocated: AllocatedState,
    allocating: Mapping[DeviceID, Mapping[str, Fraction]] | None,
) -> bool:
    if not rd.capacity and not c.device.get("allowMultipleAllocations"):
        return True
    return cap.fits(
        rd.capacity,
        c.device,
        allocated.aggregated_capacity.get(c.id),
        (allocating or {}).get(c.id),
        allow_multiple=bool(c.device.get("allowMultipleAllocations")),
    )


class Search:
    def __init__(
        self,
        alloc: AllocationContext,
        node: Obj,
        claims: Sequence[Claim],
        requests: dict[tuple[int, int, int], RequestData],
        constraints: list[list[_Constraint]],
        candidates: list[Candidate],
        allocated: AllocatedState,
        counters_for: Callable[[Pool], Counters],
        is_cancelled: Callable[[], str | None] | None,
    ) -> None:
        self.alloc = alloc
        self.features = alloc.features
        self.node = node
        self.claims = claims
        self.requests = requests
        self.constraints = constraints
        self.candidates = candidates
        self.allocated = allocated
        self.shared = allocated.shared_devices()
        """Devices with a live share: never dedicated to a claim (kubernetes#140798)."""
        self.counters_for = counters_for
        self.is_cancelled = is_cancelled
        self.memo: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[tuple[str, str], Counters] = {}
        self.picked: list[list[DeviceResult]] = [[] for _ in claims]
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.num_requests = [
            len(((c.get("spec") or {}).get("devices") or {}).get("requests") or []) for c in claims
        ]
        self.steps = 0

    @classmethod
    def answered(
        cls,
        alloc: AllocationContext,
        node: Obj,
        claims: Sequence[Claim],
        requests: dict[tuple[int, int, int], RequestData],
        picked: list[DeviceResult],
    ) -> Search:
        """The finished search of the first-fit path (one claim, one plain request): only what
        `results()` reads."""
        search = cls.__new__(cls)
        search.alloc = alloc
        search.features = alloc.features
        search.node = node
        search.claims = claims
        search.requests = requests
        search.picked = [picked]
        search.selected_sub = {}
        return search

    def run(self) -> bool:
        try:
            return self._one(0, 0, 0, 0, False, 0)
        except _MaxSizeExceeded:
            return False

    def results(self) -> list[Obj]:
        node_name = (self.node.get("metadata") or {}).get("name", "")
        binding = self.features.device_binding_and_status
        return [
            build_allocation(
                ci, claim, self.picked[ci], self.request_data, node_name=node_name, binding=binding
            )
            for ci, claim in enumerate(self.claims)
        ]

    def request_data(self, ci: int, ri: int) -> RequestData:
        """The request, or for firstAvailable the chosen subrequest."""
        rd = self.requests[(ci, ri, 0)]
        if rd.parent:
            rd = self.requests[(ci, ri, self.selected_sub.get((ci, ri), 0))]
        return rd

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.allocated.allocated_devices or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        """deviceCapacityInUse: a share of the device is allocated (by its consumed capacity
        or only by its shareID, kubernetes#140437) or being allocated."""
        return did in self.shared or did in self.allocating_capacity

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.steps += 1
        if self.is_cancelled is not None:
            cause = self.is_cancelled()
            if cause:
                raise AllocationError(f"filter operation aborted: {cause}")
        if ci >= len(self.claims):
            return True
        if ri >= self.num_requests[ci]:
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except _MaxSizeExceeded:
                return False
        rd = self.requests[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self._one(ci, ri, sub, 0, True, 0)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        if rd.all_mode and not rd.all_devices:
            return False
        if di >= rd.count:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.picked[ci]) + rd.count - di > _MAX_RESULTS:
            raise _MaxSizeExceeded
        if rd.all_mode:
            undo = self._allocate_device(rd, rd.all_devices[di], must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        candidates = self.candidates
        claim = self.claims[ci]
        memo = self.memo
        admin = rd.admin_access
        rkey = rd.key
        for index in range(start, len(candidates)):
            c = candidates[index]
            did = c.id
            if admin:
                if ci in self.allocating.get(did, ()):
                    continue
            elif did in self.allocated.allocated_devices or self.allocating.get(did):
                continue
            hit = memo.get((did, rkey))
            if hit is None:
                hit = is_selectable(self.alloc, memo, rd, c, claim, self.node)
            if not hit:
                continue
            if self.features.consumable_capacity and not capacity_fits(
                rd, c, self.allocated, self.allocating_capacity
            ):
                continue
            undo = self._allocate_device(rd, c, must=False)
            if undo is None:
                continue
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, index + 1)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    def _allocate_device(
        self, rd: RequestData, c: Candidate, *, must: bool
    ) -> Callable[[], None] | None:
        ci = rd.claim_index
        did = c.id
        device = c.device
        multi = self.features.consumable_capacity and bool(device.get("allowMultipleAllocations"))
        if rd.admin_access:
            if not multi and ci in self.allocating.get(did, ()):
                return None
        elif self._in_use(did) or (not multi and self._capacity_in_use(did)):
            # A device that allowed multiple allocations and no longer does stays taken
            # until its shares are gone.
            return None
        uses = device.get("consumesCounters")
        if uses and not self.features.partitionable_devices:
            return None
        skip_counters = multi and self._capacity_in_use(did)
        booked_counters = False
        if uses and not skip_counters:
            if not self._book_counters(c):
                return None
            booked_counters = True
        base, subname = (rd.parent, rd.name) if rd.parent else (rd.name, "")
        # [QUIRK] counters stay booked when the taint or constraint check rejects the device.
        if self.features.device_taints and taint_prevents_allocation(device, rd.tolerations):
            return None
        added: list[_Constraint] = []
        for con in self.constraints[ci]:
            if not con.add(base, subname, device, c.driver):
                if must:
                    raise AllocationError(
                        f"claim {meta.key(self.claims[ci])}, request {rd.name}: cannot add device "
                        f"{'/'.join(did)} because a claim constraint would not be satisfied"
                    )
                for done in added:
                    done.remove(base, subname, device, c.driver)
                return None
            added.append(con)
        consumed: dict[str, Fraction] | None = None
        share_id = None
        if self.features.consumable_capacity:
            if not capacity_fits(rd, c, self.allocated, self.allocating_capacity):
                for con in added:
                    con.remove(base, subname, device, c.driver)
                return None
            if multi:
                consumed = cap.consumed_capacity(rd.capacity, device) or {}
                share_id = str(uuid.uuid4())
                booked = self.allocating_capacity.setdefault(did, {})
                for n, q in consumed.items():
                    booked[n] = booked.get(n, Fraction(0)) + q
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
        results = self.picked[ci]
        results.append(DeviceResult(rd, c, share_id, consumed))

        def undo() -> None:
            for con in self.constraints[ci]:
                con.remove(base, subname, device, c.driver)
            if multi:
                if consumed is not None:
                    booked = self.allocating_capacity[did]
                    for n, q in consumed.items():
                        booked[n] -= q
                    if not any(booked.values()):
                        del self.allocating_capacity[did]
            else:
                self.allocating[did].discard(ci)
            if booked_counters:
                self._release_counters(c)
            results.pop()

        return undo

    def _book_counters(self, c: Candidate) -> bool:
        pool: Pool = c.pool
        key = (pool.driver, pool.name)
        available = self.counters_for(pool)
        consumed = self.consumed_counters.setdefault(key, {})
        for use in c.device.get("consumesCounters") or ():
            booked = consumed.setdefault(use.get("counterSet", ""), {})
            for n, v in (use.get("counters") or {}).items():
                booked[n] = booked.get(n, Fraction(0)) + parse_quantity(
                    str((v or {}).get("value", "0"))
                )
        for set_name, counters in available.items():
            booked = consumed.get(set_name, {})
            for n, value in counters.items():
                if value < booked.get(n, Fraction(0)):
                    self._release_counters(c)
                    return False
        return True

    def _release_counters(self, c: Candidate) -> None:
        consumed = self.consumed_counters[(c.pool.driver, c.pool.name)]
        for use in c.device.get("consumesCounters") or ():
            booked = consumed[use.get("counterSet", "")]
            for n, v in (use.get("counters") or {}).items():
                booked[n] -= parse_quantity(str((v or {}).get("value", "0")))
