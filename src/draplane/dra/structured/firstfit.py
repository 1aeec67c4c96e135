"""The search's answer for the common claim without the search (`Allocator.find`'s fast path).

One claim with one ExactCount request of at most 32 devices, no constraints, no admin access,
no capacity request and no subrequests, over devices that consume no counters and allow one
allocation: every device is accepted or not on its own, so the depth-first search's answer is the
first `count` acceptable devices in search order. `first_fit` returns those devices (or None
when fewer exist) with the step count the search would have taken, or None as a whole when a
device of the node does not qualify (the general search then runs). A `FirstFitAnswer` holds
them for the node; its Search and AllocationResults are built only when `results()` is asked
(Reserve asks for one node, Filter keeps an answer for every feasible one).

That answer (and the free-device skip's, for such a request) depends only on the request and
on which of the node's devices are allocated, so `Allocator.find` keeps it in the node's fit
memo (`pools.Gathered.fit_memo`, alive as long as the SliceIndex and the node object) under
`request_signature` with the allocated device names of the node's pools (`pool_marks`), and
reuses it while those names are the same: across pods and scheduling cycles, a node where
nothing happened costs a tuple compare (of the same frozenset objects).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from draplane.dra.structured.context import AllocationContext
from draplane.dra.structured.pools import Candidate, Gathered
from draplane.dra.structured.requests import Claim, RequestData, taint_prevents_allocation
from draplane.dra.structured.results import DeviceResult
from draplane.dra.structured.search import Search, is_selectable
from draplane.dra.structured.state import NO_NAMES, AllocatedState

Obj = Mapping[str, Any]
_MAX_RESULTS = 32
Marks = tuple[frozenset[str], ...]
"""The allocated device names of a node's pools, in the node's pool order."""
# Distinct requests remembered per node (its memo starts over beyond).
_FIT_MEMO_SIZE = 32


def simple_request(
    claims: Sequence[Claim],
    requests: Mapping[tuple[int, int, int], RequestData],
    constraints: list[Any],
) -> RequestData | None:
    """The one request when the claims qualify for `first_fit`, else None."""
    if len(claims) != 1 or len(requests) != 1 or constraints[0]:
        return None
    rd = requests.get((0, 0, 0))
    if (
        rd is None
        or rd.parent
        or rd.all_mode
        or rd.admin_access
        or rd.capacity
        or rd.count > _MAX_RESULTS
    ):
        return None
    return rd


def first_fit(
    alloc: AllocationContext,
    node: Obj,
    claim: Claim,
    rd: RequestData,
    candidates: list[Candidate],
    allocated: AllocatedState,
) -> tuple[list[Candidate] | None, int] | None:
    in_use = allocated.allocated_devices
    shared = allocated.shared_devices()
    taints = alloc.features.device_taints
    picked: list[Candidate] = []
    for c in candidates:
        if not c.independent or c.id in shared:
            # A dedicated device with live shares (it allowed multiple allocations before):
            # the search decides, and the answer is not kept (shares are not in the marks).
            return None
        if c.id in in_use:
            continue
        if not is_selectable(alloc, None, rd, c, claim, node) or (
            taints and taint_prevents_allocation(c.device, rd.tolerations)
        ):
            continue
        picked.append(c)
        if len(picked) == rd.count:
            # allocateOne: the root, one call per device, the next request, the next claim.
            return picked, rd.count + 3
    # Every subset of the k acceptable devices was tried (k < count), plus the root.
    return None, 2 ** len(picked)


class FirstFitAnswer:
    """The first-fit path's answer on one node: `results()` builds its AllocationResults."""

    __slots__ = ("alloc", "chosen", "claims", "node", "rd", "requests")

    def __init__(
        self,
        alloc: AllocationContext,
        node: Obj,
        claims: Sequence[Claim],
        requests: dict[tuple[int, int, int], RequestData],
        rd: RequestData,
        chosen: list[Candidate],
    ) -> None:
        self.alloc = alloc
        self.node = node
        self.claims = claims
        self.requests = requests
        self.rd = rd
        self.chosen = chosen

    def results(self) -> list[Obj]:
        picked = [DeviceResult(self.rd, c, None, None) for c in self.chosen]
        search = Search.answered(self.alloc, self.node, self.claims, self.requests, picked)
        return search.results()


def request_signature(rd: RequestData) -> tuple[Any, ...]:
    """What decides which devices a first-fit request accepts: the class and request
    selectors, the count, the tolerations (it has no admin access, capacity or subrequests)."""
    tolerations = tuple(tuple(sorted(t.items())) for t in rd.tolerations)
    return (rd.all_selectors, rd.count, tolerations)


def pool_marks(gathered: Gathered, allocated: AllocatedState) -> Marks | None:
    """The allocated device names of the node's pools (`DeviceSet.names`; None for a state the
    tracker did not keep: nothing is remembered for it)."""
    if not allocated.tracked:
        return None
    names = allocated.allocated_devices.by_pool.get
    keys = gathered.pool_keys
    if len(keys) == 1:
        return (names(keys[0], NO_NAMES),)
    return tuple([names(key, NO_NAMES) for key in keys])


def recall(
    gathered: Gathered, signature: Any, marks: Marks | None
) -> tuple[list[Candidate] | None, int] | None:
    """The remembered (picks or None, steps) for the request while the names are `marks`."""
    if marks is None:
        return None
    hit = gathered.fit_memo.get(signature)
    if hit is None or hit[0] != marks:
        return None
    return hit[1], hit[2]


def remember(
    gathered: Gathered,
    signature: Any,
    marks: Marks | None,
    chosen: list[Candidate] | None,
    steps: int,
) -> None:
    """Keep an answer (no-op without `marks`)."""
    if marks is None:
        return
    memo = gathered.fit_memo
    if len(memo) >= _FIT_MEMO_SIZE and signature not in memo:
        memo.clear()
    memo[signature] = (marks, chosen, steps)
