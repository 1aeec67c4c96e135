"""The structured allocator (k8s.io/dynamic-resource-allocation/structured, incubating variant).

`Allocator(classes=..., slices=..., allocated=..., features=..., cache=...)` is built once per
scheduling cycle; `allocate(node, claims, in_flight=...)` runs once per node (the scheduler's
Filter) and returns one AllocationResult dict per claim, or None when the claims do not fit the
node; it raises `FailedAllocationOnNode` (this node only) or `AllocationError` (fatal for the pod).
The search is depth-first first-fit with backtracking (see `search.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from draplane.api.quantity import parse_quantity
from draplane.dra.cel import SelectorCache
from draplane.dra.structured.constraints import DistinctAttribute, MatchAttribute, _Constraint
from draplane.dra.structured.firstfit import first_fit, simple_request
from draplane.dra.structured.freedevices import cannot_fit, demand
from draplane.dra.structured.pools import Pool, SliceIndex, pool_candidates
from draplane.dra.structured.requests import (
    Candidate,
    RequestData,
    claim_ref,
    make_request_data,
    selector_expressions,
)
from draplane.dra.structured.search import Search
from draplane.dra.structured.state import (
    AllocatedState,
    AllocationError,
    DeviceID,
    FailedAllocationOnNode,
    Features,
)

Obj = Mapping[str, Any]
ClassLookup = Mapping[str, Obj] | Callable[[str], Obj | None]

# resource.k8s.io/v1 AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32
_ConstraintSpec = tuple[type[_Constraint], list[str], str]
ERR_INVALID_POOLS = "invalid resource pools were encountered"
# The scheduler plugin's Filter reason when allocate() returns None.
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"


class _Prepared:
    """One claim sequence's prepared requests and what `find` derives from them per cycle."""

    __slots__ = ("claims", "constraints", "need", "requests", "simple")

    def __init__(
        self,
        claims: Sequence[Obj],
        requests: dict[tuple[int, int, int], RequestData],
        constraints: list[list[_ConstraintSpec]],
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
        claims: Sequence[Obj],
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
        claims: Sequence[Obj],
        *,
        in_flight: Iterable[Obj] = (),
        is_cancelled: Callable[[], str | None] | None = None,
    ) -> Search | None:
        """`allocate` without building the AllocationResults: the finished search, whose
        `results()` builds them (the scheduler builds them only for the node it picks)."""
        allocated = self.allocated
        extra = list(in_flight) if in_flight else ()
        if extra:
            allocated = allocated.copy()
            for a in extra:
                allocated.add(a)
        pools, candidates = self.slices.gather_with_candidates(node, self.features)
        prep = self._prepared_requests(claims, pools, node)
        requests, constraint_specs = prep.requests, prep.constraints
        # The skip and the first-fit path are one pass at most over the node's devices: a
        # cancellation is checked once before them (the search, which checks at every step,
        # reports it).
        live = is_cancelled is None or is_cancelled() is None
        if (
            live
            and prep.need is not None
            and self.skip_full_nodes
            and not extra
            and cannot_fit(self, node, claims, requests, prep.need, pools, candidates, allocated)
        ):
            return self._no_fit(pools)
        rd = prep.simple if live and self.first_fit else None
        fast = None if rd is None else first_fit(self, node, claims[0], rd, candidates, allocated)
        if fast is not None:
            picks, steps = fast
            with self._lock:
                self.steps += steps
            if picks is None:
                return self._no_fit(pools)
            return Search.answered(self, node, claims, requests, picks)
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

    def _prepared_requests(self, claims: Sequence[Obj], pools: list[Pool], node: Obj) -> _Prepared:
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
        requests, specs = self._prepare(claims, pools, node)
        prep = _Prepared(
            claims, requests, specs, simple_request(claims, requests, specs), demand(requests)
        )
        if not any(rd.all_mode for rd in requests.values()):
            self._prepared = prep
        return prep

    def _prepare(
        self, claims: Sequence[Obj], pools: list[Pool], node: Obj
    ) -> tuple[dict[tuple[int, int, int], RequestData], list[list[_ConstraintSpec]]]:
        requests: dict[tuple[int, int, int], RequestData] = {}
        constraints: list[list[_ConstraintSpec]] = []
        f = self.features
        for ci, claim in enumerate(claims):
            ref = claim_ref(claim)
            devices = (claim.get("spec") or {}).get("devices") or {}
            min_devices = 0
            for ri, request in enumerate(devices.get("requests") or []):
                rname = request.get("name", "")
                subs = request.get("firstAvailable") or []
                exactly = request.get("exactly")
                if subs and not f.prioritized_list:
                    raise AllocationError(
                        f"claim {ref}, request {rname}: has subrequests, but the "
                        "DRAPrioritizedList feature is disabled"
                    )
                if not f.consumable_capacity:
                    if exactly and exactly.get("capacity") is not None:
                        raise AllocationError(
                            f"claim {ref}, request {rname}: has capacity requests, but the "
                            "DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subs:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {ref}, subrequest {sub.get('name')}: has capacity "
                                "requests, but the DRAConsumableCapacity feature is disabled"
                            )
                if subs:
                    smallest: int | None = None
                    for si, sub in enumerate(subs):
                        rd = self._request(ci, ri, si, sub, rname, claim, pools, node, admin=None)
                        requests[rd.key] = rd
                        smallest = rd.count if smallest is None else min(smallest, rd.count)
                    min_devices += smallest or 0
                else:
                    rd = self._request(
                        ci, ri, 0, exactly or {}, "", claim, pools, node, admin=request
                    )
                    requests[rd.key] = rd
                    min_devices += rd.count
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {ref}: number of requested devices {min_devices} exceeds the claim "
                    f"limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            claim_constraints: list[_ConstraintSpec] = []
            for i, c in enumerate(devices.get("constraints") or []):
                names = list(c.get("requests") or [])
                if c.get("matchAttribute"):
                    claim_constraints.append((MatchAttribute, names, c["matchAttribute"]))
                elif c.get("distinctAttribute"):
                    claim_constraints.append((DistinctAttribute, names, c["distinctAttribute"]))
                else:
                    raise AllocationError(
                        f"claim {ref}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
            constraints.append(claim_constraints)
        return requests, constraints

    def _request(
        self,
        ci: int,
        ri: int,
        si: int,
        spec: Obj,
        parent: str,
        claim: Obj,
        pools: list[Pool],
        node: Obj,
        *,
        admin: Obj | None,
    ) -> RequestData:
        """Validate one request (`admin` = the request, for `exactly`) or subrequest."""
        ref = claim_ref(claim)
        name = spec.get("name", "") if parent else (admin or {}).get("name", "")
        for i, expr in enumerate(selector_expressions(spec.get("selectors"))):
            if not expr:
                raise AllocationError(
                    f"claim {ref}, request {name}, selector #{i}: CEL expression empty "
                    "(unsupported selector type?)"
                )
        has_admin = admin is not None and spec.get("adminAccess") is not None
        if has_admin and not self.features.admin_access:
            raise AllocationError(
                f"claim {ref}, request {name}: admin access is requested, "
                "but the feature is disabled"
            )
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(
                f"claim {ref}, request {name}: missing device class name "
                "(unsupported request type?)"
            )
        device_class = self.get_class(class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {ref}, request {name}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        mode = spec.get("allocationMode") or "ExactCount"
        if mode not in ("ExactCount", "All"):
            raise AllocationError(f"claim {ref}, request {name}: unsupported count mode {mode}")
        rd = make_request_data(
            ci,
            ri,
            si,
            name,
            parent,
            spec,
            device_class,
            admin_access=bool(spec.get("adminAccess")) and has_admin,
        )
        if rd.all_mode:
            rd.all_devices = self._all_devices(rd, claim, pools, node)
            rd.count = len(rd.all_devices)
        return rd

    def _all_devices(
        self, rd: RequestData, claim: Obj, pools: list[Pool], node: Obj
    ) -> list[Candidate]:
        from draplane.dra.structured.search import capacity_fits, is_selectable

        ref = claim_ref(claim)
        out: list[Candidate] = []
        for p in pools:
            if p.incomplete:
                raise AllocationError(
                    f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                    f"{p.pool_id} is currently being updated"
                )
            if p.invalid:
                raise AllocationError(
                    f"claim {ref}, request {rd.name}: asks for all devices, but resource pool "
                    f"{p.pool_id} is currently invalid"
                )
            for c in pool_candidates(p):
                if not is_selectable(self, None, rd, c, claim, node):
                    continue
                if self.features.consumable_capacity and not capacity_fits(
                    rd, c, self.allocated, None
                ):
                    continue
                out.append(c)
        return out


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
