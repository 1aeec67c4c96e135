"""The structured allocator (k8s.io/dynamic-resource-allocation/structured, incubating variant).

`Allocator(classes=..., slices=..., allocated=..., features=..., cache=...)` is built once per
scheduling cycle; `allocate(node, claims, in_flight=...)` runs once per node (the scheduler's
Filter) and returns one AllocationResult dict per claim, or None when the claims do not fit the
node; it raises `FailedAllocationOnNode` (this node only) or `AllocationError` (fatal for the pod).
The requests are validated once per claim sequence (`prepare.py`); common requests take the
first-fit path (`firstfit.py`, whose answers a node keeps across allocators while its allocated
devices do not change), full nodes are answered without a search (`freedevices.py`), the rest
by the depth-first search with backtracking (`search.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from draplane.api.quantity import parse_quantity
from draplane.dra.cel import SelectorCache
from draplane.dra.structured.constraints import _Constraint
from draplane.dra.structured.firstfit import (
    FirstFitAnswer,
    first_fit,
    pool_marks,
    recall,
    remember,
    request_signature,
    simple_request,
)
from draplane.dra.structured.freedevices import cannot_fit, demand
from draplane.dra.structured.pools import Candidate, Pool, SliceIndex
from draplane.dra.structured.prepare import ConstraintSpec, prepare
from draplane.dra.structured.requests import Claim, RequestData
from draplane.dra.structured.search import Search
from draplane.dra.structured.state import (
    AllocatedState,
    DeviceID,
    FailedAllocationOnNode,
    Features,
)

Obj = Mapping[str, Any]
ClassLookup = Mapping[str, Obj] | Callable[[str], Obj | None]
Answer = Search | FirstFitAnswer
"""What `find` answers for a node where the claims fit: `results()` builds the AllocationResults."""

ERR_INVALID_POOLS = "invalid resource pools were encountered"
# The scheduler plugin's Filter reason when allocate() returns None.
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"


class _Prepared:
    """One claim sequence's prepared requests and what `find` derives from them per cycle."""

    __slots__ = ("claims", "constraints", "need", "requests", "signature", "simple")

    def __init__(
        self,
        claims: Sequence[Claim],
        requests: dict[tuple[int, int, int], RequestData],
        constraints: list[list[ConstraintSpec]],
        simple: RequestData | None,
        need: tuple[int, bool] | None,
    ) -> None:
        self.claims = claims
        self.requests = requests
        self.constraints = constraints
        self.simple = simple
        """The one request of the first-fit path (`firstfit.simple_request`), if it applies."""
        self.need = need
        """`freedevices.demand` of the requests."""
        self.signature = None if simple is None else request_signature(simple)
        """What the first-fit answer depends on besides the node (the fit memo's key)."""


class Allocator:
    """Allocates devices for a pod's claims on one node at a time; reusable and thread-safe."""

    def __init__(
        self,
        *,
        classes: ClassLookup,
        slices: Iterable[Obj] | SliceIndex,
        allocated: AllocatedState | None = None,
        features: Features | None = None,
        cache: SelectorCache | None = None,
    ) -> None:
        self.features = features or Features()
        self.allocated = allocated or AllocatedState()
        self.slices = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.cache = cache or SelectorCache.shared()
        self._classes = classes
        # Counters still available per pool after already-allocated devices (keyed by driver and
        # pool; upstream keys by pool name only).
        self._available_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        self._lock = threading.Lock()
        self._prepared: _Prepared | None = None
        self.steps = 0  # numAllocateOneInvocations, summed over all allocate() calls
        self.first_fit = True
        """Whether a single plain ExactCount request takes the first-fit path (`firstfit.py`),
        which gives the search's answer in one pass; tests turn it off to compare."""
        self.fit_memo = True
        """Whether the first-fit path's answers (and the skip's, for such a request) are kept
        per node and request in the SliceIndex and reused while the node's pools keep their
        allocated devices (`firstfit.pool_marks`); tests turn it off to compare. A
        remembered answer carries the step count of the allocator that found it, so allocators
        sharing a SliceIndex should share `skip_full_nodes` too."""
        self.skip_full_nodes = True
        """Whether `find` answers "does not fit" without the search where the node has too few
        free devices for the claims (`freedevices.py`; with the scheduler's incrementally kept
        allocated state only). Such a node adds no `steps`; tests turn it off to compare."""

    def get_class(self, name: str) -> Obj | None:
        if callable(self._classes):
            return self._classes(name)
        return self._classes.get(name)

    def allocate(
        self,
        node: Obj,
        claims: Sequence[Claim],
        *,
        in_flight: Iterable[Obj] = (),
        is_cancelled: Callable[[], str | None] | None = None,
    ) -> list[Obj] | None:
        """Allocation results for `claims` (in order) on `node`, or None if they do not fit.

        `in_flight` are AllocationResult dicts of claims reserved but not yet written; their
        devices count as allocated for this call only. `is_cancelled` returns a cause once the
        caller wants the search to stop ("filter operation aborted: <cause>").
        """
        found = self.find(node, claims, in_flight=in_flight, is_cancelled=is_cancelled)
        return None if found is None else found.results()

    def find(
        self,
        node: Obj,
        claims: Sequence[Claim],
        *,
        in_flight: Iterable[Obj] = (),
        is_cancelled: Callable[[], str | None] | None = None,
    ) -> Answer | None:
        """`allocate` without building the AllocationResults: the finished search or the
        first-fit answer, whose `results()` builds them (the scheduler builds them only for the
        node it picks)."""
        allocated = self.allocated
        extra = list(in_flight) if in_flight else ()
        if extra:
            allocated = allocated.copy()
            for a in extra:
                allocated.add(a)
        gathered = self.slices.gathered(node, self.features)
        pools, candidates = gathered.pools, gathered.candidates
        prep = self._prepared_requests(claims, pools, node)
        requests, constraint_specs = prep.requests, prep.constraints
        # The skip and the first-fit path are one pass at most over the node's devices: a
        # cancellation is checked once before them (the search, which checks at every step,
        # reports it).
        live = is_cancelled is None or is_cancelled() is None
        rd = prep.simple if live and self.first_fit else None
        # Their answer depends only on the request and the node's allocated devices: kept per
        # node and request across allocators while the node's pools keep their allocated devices.
        mark = None
        if rd is not None and self.fit_memo and not extra:
            mark = pool_marks(gathered, allocated)
            hit = recall(gathered, prep.signature, mark)
            if hit is not None:
                return self._first_fit_answer(node, claims, requests, rd, pools, *hit, hits=1)
        if (
            live
            and prep.need is not None
            and self.skip_full_nodes
            and not extra
            and cannot_fit(self, node, claims, requests, prep.need, pools, candidates, allocated)
        ):
            remember(gathered, prep.signature, mark, None, 0)
            return self._no_fit(pools)
        fast = None if rd is None else first_fit(self, node, claims[0], rd, candidates, allocated)
        if fast is not None and rd is not None:
            remember(gathered, prep.signature, mark, *fast)
            return self._first_fit_answer(node, claims, requests, rd, pools, *fast, hits=0)
        constraints: list[list[_Constraint]] = [
            [kind(names, attr) for kind, names, attr in specs] for specs in constraint_specs
        ]
        search = Search(
            self,
            node,
            claims,
            requests,
            constraints,
            candidates,
            allocated,
            self._counters_for if not extra else self._fresh_counters(allocated),
            is_cancelled,
        )
        try:
            done = search.run()
        finally:
            with self._lock:
                self.steps += search.steps
        return search if done else self._no_fit(pools)

    def _first_fit_answer(
        self,
        node: Obj,
        claims: Sequence[Claim],
        requests: dict[tuple[int, int, int], RequestData],
        rd: RequestData,
        pools: list[Pool],
        chosen: list[Candidate] | None,
        steps: int,
        *,
        hits: int,
    ) -> FirstFitAnswer | None:
        """A first-fit outcome (found now or remembered, `hits` 1) counted and answered."""
        with self._lock:
            self.steps += steps
            self.slices.fit_hits += hits
        if chosen is None:
            return self._no_fit(pools)
        return FirstFitAnswer(self, node, claims, requests, rd, chosen)

    @staticmethod
    def _no_fit(pools: list[Pool]) -> None:
        if any(p.invalid for p in pools):
            raise FailedAllocationOnNode(ERR_INVALID_POOLS)
        return None

    def _counters_for(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        key = (pool.driver, pool.name)
        with self._lock:
            hit = self._available_counters.get(key)
        if hit is None:
            hit = available_counters(pool, self.allocated)
            with self._lock:
                self._available_counters[key] = hit
        return hit

    @staticmethod
    def _fresh_counters(
        allocated: AllocatedState,
    ) -> Callable[[Pool], dict[str, dict[str, Fraction]]]:
        cache: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}

        def lookup(pool: Pool) -> dict[str, dict[str, Fraction]]:
            key = (pool.driver, pool.name)
            if key not in cache:
                cache[key] = available_counters(pool, allocated)
            return cache[key]

        return lookup

    def _prepared_requests(
        self, claims: Sequence[Claim], pools: list[Pool], node: Obj
    ) -> _Prepared:
        """Prepared requests, reused across nodes unless some request is allocationMode All."""
        hit = self._prepared
        if hit is not None and (
            hit.claims is claims
            or (
                len(hit.claims) == len(claims)
                and all(a is b for a, b in zip(hit.claims, claims, strict=True))
            )
        ):
            return hit
        requests, specs = prepare(self, claims, pools, node)
        prep = _Prepared(
            claims, requests, specs, simple_request(claims, requests, specs), demand(requests)
        )
        if not any(rd.all_mode for rd in requests.values()):
            self._prepared = prep
        return prep


def available_counters(pool: Pool, allocated: AllocatedState) -> dict[str, dict[str, Fraction]]:
    """The pool's counter sets minus what its already-allocated devices consume."""
    avail = {name: dict(counters) for name, counters in pool.counter_sets.items()}
    shared = allocated.shared_devices()
    for s in [*pool.slices, *pool.slices_not_targeting]:
        for d in (s.get("spec") or {}).get("devices") or ():
            uses = d.get("consumesCounters")
            if not uses:
                continue
            did: DeviceID = (pool.driver, pool.name, d.get("name", ""))
            if did not in allocated.allocated_devices and did not in shared:
                continue
            for use in uses:
                counters = avail.get(use.get("counterSet", ""))
                if counters is None:
                    continue
                for n, c in (use.get("counters") or {}).items():
                    if n in counters:
                        counters[n] -= parse_quantity(str((c or {}).get("value", "0")))
    return avail
