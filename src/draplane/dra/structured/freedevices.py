"""An exact "the claims cannot fit this node" answer before the search (`Allocator.find`).

The search takes a device for a request only when it is not in use: not in
`AllocatedState.allocated_devices` (for requests without adminAccess) and not picked for an
earlier request. So when the node's usable pools (complete, valid) have fewer devices outside
`allocated_devices` than the claims need in total, the search fails; when they have none it
fails without evaluating anything per device (no CEL selector, counter, taint or constraint
check), so its answer is the plain "does not fit" (or `invalid resource pools` through
`_no_fit`), which `cannot_fit` gives without it.

Each gathered `Pool` caches its free-device count with the pool's allocated names object
(`DeviceSet.names`, a new object whenever the pool's allocated devices change), so a node costs
a dict lookup per pool while nothing on it changes. The answer is only given where it is exact:
- no request has adminAccess (it may use allocated devices);
- zero free devices: any requests (ExactCount, All, firstAvailable);
- fewer free devices than needed (each request's count, a firstAvailable request's smallest
  subrequest count): only without allocationMode All and without free devices that allow
  multiple allocations (consumable capacity), and only when no request's selectors raise a CEL
  error on a free device (the search would report that error; it then runs and does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from draplane.dra.structured.context import AllocationContext
from draplane.dra.structured.pools import Candidate, Pool, pool_candidates
from draplane.dra.structured.requests import Claim, RequestData
from draplane.dra.structured.search import is_selectable
from draplane.dra.structured.state import AllocatedState, AllocationError

Obj = Mapping[str, Any]
RequestKey = tuple[int, int, int]


def demand(requests: Mapping[RequestKey, RequestData]) -> tuple[int, bool] | None:
    """(devices the requests need at least, whether that count is exact enough to compare with
    a non-zero free count); None when a request has adminAccess, an ExactCount below one, or
    there is no request."""
    if not requests:
        return None
    total = 0
    countable = True
    smallest: dict[tuple[int, int], int] = {}
    for rd in requests.values():
        if rd.admin_access or (rd.count < 1 and not rd.all_mode):
            return None  # a count below one (not valid API input) needs no device
        if rd.all_mode:
            countable = False
        elif rd.parent:
            key = (rd.claim_index, rd.request_index)
            smallest[key] = min(smallest.get(key, rd.count), rd.count)
        else:
            total += rd.count
    return total + sum(smallest.values()), countable


def free_devices(pools: Sequence[Pool], allocated: AllocatedState) -> tuple[int, bool]:
    """(devices of the usable pools not in `allocated_devices`, whether some device allows
    multiple allocations)."""
    in_use = allocated.allocated_devices
    total = 0
    multi = False
    for p in pools:
        if p.incomplete or p.invalid:
            continue
        names = in_use.names((p.driver, p.name))
        hit = p.free
        if hit is None or hit[0] is not names:
            n = sum(1 for c in pool_candidates(p) if c.id not in in_use)
            p.free = hit = (names, n)
        total += hit[1]
        multi = multi or p.multi_allocatable
    return total, multi


def cannot_fit(
    alloc: AllocationContext,
    node: Obj,
    claims: Sequence[Claim],
    requests: Mapping[RequestKey, RequestData],
    need: tuple[int, bool],
    pools: Sequence[Pool],
    candidates: Sequence[Candidate],
    allocated: AllocatedState,
) -> bool:
    """True when the search is certain to find nothing (see the module docstring); `need` is
    `demand(requests)`."""
    if not allocated.tracked:
        return False
    free, multi = free_devices(pools, allocated)
    if free == 0:
        return True
    needed, countable = need
    if free >= needed or not countable or (multi and alloc.features.consumable_capacity):
        return False
    return not _selectors_raise(alloc, node, claims, requests, candidates, allocated)


def _selectors_raise(
    alloc: AllocationContext,
    node: Obj,
    claims: Sequence[Claim],
    requests: Mapping[RequestKey, RequestData],
    candidates: Sequence[Candidate],
    allocated: AllocatedState,
) -> bool:
    in_use = allocated.allocated_devices
    for rd in requests.values():
        claim = claims[rd.claim_index]
        for c in candidates:
            if c.id in in_use:
                continue
            try:
                is_selectable(alloc, None, rd, c, claim, node)
            except AllocationError:
                return True
    return False
