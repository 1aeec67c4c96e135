"""Validating and preparing a pod's claim requests for one allocation (validateDeviceRequest and
the constraint setup of the upstream allocator's Allocate).

`prepare(alloc, claims, pools, node)` returns one `RequestData` per plain request and per
firstAvailable subrequest (keyed by claim, request and subrequest index) and each claim's
constraint specs, or raises `AllocationError` for a request the allocator cannot serve (a
disabled feature, an empty CEL expression, a missing device class, too many devices). A request
with allocationMode All gets its fixed device list from the node's pools here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from draplane.api import meta
from draplane.api.types import DeviceRequest, DeviceSubRequest, ExactDeviceRequest, ResourceClaim
from draplane.dra.structured.constraints import DistinctAttribute, MatchAttribute, _Constraint
from draplane.dra.structured.context import AllocationContext
from draplane.dra.structured.pools import Candidate, Pool, pool_candidates
from draplane.dra.structured.requests import (
    Claim,
    Request,
    RequestData,
    make_request_data,
    selector_expressions,
)
from draplane.dra.structured.search import capacity_fits, is_selectable
from draplane.dra.structured.state import AllocationError

Obj = Mapping[str, Any]
ConstraintSpec = tuple[type[_Constraint], list[str], str]

# resource.k8s.io/v1 AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32


def prepare(
    alloc: AllocationContext, claims: Sequence[Claim], pools: list[Pool], node: Obj
) -> tuple[dict[tuple[int, int, int], RequestData], list[list[ConstraintSpec]]]:
    requests: dict[tuple[int, int, int], RequestData] = {}
    constraints: list[list[ConstraintSpec]] = []
    f = alloc.features
    # Read as v1 claims (prepared once per claim sequence, so the cast costs nothing).
    for ci, claim in enumerate(cast(Sequence[ResourceClaim], claims)):
        ref = meta.key(claim)
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
                    rd = _request(alloc, ci, ri, si, sub, rname, claim, pools, node, admin=None)
                    requests[rd.key] = rd
                    smallest = rd.count if smallest is None else min(smallest, rd.count)
                min_devices += smallest or 0
            else:
                plain: ExactDeviceRequest = exactly or {}
                rd = _request(alloc, ci, ri, 0, plain, "", claim, pools, node, admin=request)
                requests[rd.key] = rd
                min_devices += rd.count
        if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {ref}: number of requested devices {min_devices} exceeds the claim "
                f"limit of {ALLOCATION_RESULTS_MAX_SIZE}"
            )
        claim_constraints: list[ConstraintSpec] = []
        for i, c in enumerate(devices.get("constraints") or []):
            names = list(c.get("requests") or [])
            if c.get("matchAttribute"):
                claim_constraints.append((MatchAttribute, names, c["matchAttribute"]))
            elif c.get("distinctAttribute"):
                claim_constraints.append((DistinctAttribute, names, c["distinctAttribute"]))
            else:
                raise AllocationError(
                    f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)"
                )
        constraints.append(claim_constraints)
    return requests, constraints


def _request(
    alloc: AllocationContext,
    ci: int,
    ri: int,
    si: int,
    spec: Request,
    parent: str,
    claim: ResourceClaim,
    pools: list[Pool],
    node: Obj,
    *,
    admin: DeviceRequest | None,
) -> RequestData:
    """Validate one request (`admin` = the request, for `exactly`) or subrequest."""
    ref = meta.key(claim)
    name = cast(DeviceSubRequest, spec).get("name", "") if parent else (admin or {}).get("name", "")
    for i, expr in enumerate(selector_expressions(spec.get("selectors"))):
        if not expr:
            raise AllocationError(
                f"claim {ref}, request {name}, selector #{i}: CEL expression empty "
                "(unsupported selector type?)"
            )
    has_admin = admin is not None and spec.get("adminAccess") is not None
    if has_admin and not alloc.features.admin_access:
        raise AllocationError(
            f"claim {ref}, request {name}: admin access is requested, but the feature is disabled"
        )
    class_name = spec.get("deviceClassName") or ""
    if not class_name:
        raise AllocationError(
            f"claim {ref}, request {name}: missing device class name (unsupported request type?)"
        )
    device_class = alloc.get_class(class_name)
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
        rd.all_devices = _all_devices(alloc, rd, claim, pools, node)
        rd.count = len(rd.all_devices)
    return rd


def _all_devices(
    alloc: AllocationContext, rd: RequestData, claim: ResourceClaim, pools: list[Pool], node: Obj
) -> list[Candidate]:
    ref = meta.key(claim)
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
            if not is_selectable(alloc, None, rd, c, claim, node):
                continue
            if alloc.features.consumable_capacity and not capacity_fits(
                rd, c, alloc.allocated, None
            ):
                continue
            out.append(c)
    return out
