"""Why a pod does not fit a node, as `Reason`s: the scheduler's non-DRA Filter statuses as they
are, and for DynamicResources one reason per claim request and cause, found with the
allocator's own pieces (`devices.diagnose_request`; `Allocator.find` for what only the whole
search knows, such as a claim constraint). A reason's `summary` does not name the node, so nodes
failing alike group together; `detail` is this node's particulars.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, cast

from draplane.api import meta
from draplane.api.kinds import DEVICE_CLASSES, RESOURCE_CLAIMS_V1, RESOURCE_SLICES
from draplane.api.meta import Obj, deep_copy
from draplane.dra.cel import CELCompileError, CELRuntimeError, SelectorCache
from draplane.dra.structured import AllocatedState, AllocationError, Allocator, SliceIndex
from draplane.dra.structured.requests import Request, make_request_data
from draplane.dra.structured.state import FailedAllocationOnNode, Features
from draplane.explain.devices import DeviceID, RequestDiagnosis, diagnose_request
from draplane.explain.snapshot import Snapshot
from draplane.scheduler.framework.status import Code, Status
from draplane.scheduler.plugins import names

_DRIVER_EQUALS = re.compile(r'device\.driver\s*==\s*"([^"]+)"')

# Reason codes (the `code` of a Reason, stable for scripts).
NO_SLICE_FOR_DRIVER = "NoResourceSliceForDriver"
SELECTOR_FALSE = "SelectorFalse"
CEL_RUNTIME_ERROR = "CELRuntimeError"
NOT_ENOUGH_DEVICES = "NotEnoughDevices"
COUNTERS_EXHAUSTED = "CountersExhausted"
CAPACITY_EXHAUSTED = "CapacityExhausted"
DEVICE_TAINT = "DeviceTaintNotTolerated"
CONSTRAINT = "ConstraintUnsatisfiable"
DEVICES_TOGETHER = "DevicesNotEnoughTogether"
CLAIM_ELSEWHERE = "ClaimAllocatedElsewhere"
DRA_OTHER = "DynamicResources"


@dataclass(frozen=True)
class Reason:
    code: str
    summary: str
    plugin: str = names.DYNAMIC_RESOURCES
    claim: str = ""
    request: str = ""
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def group_key(self) -> tuple[str, str, str, str, str]:
        return (self.plugin, self.code, self.claim, self.request, self.summary)

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "plugin": self.plugin, "summary": self.summary}
        for k in ("claim", "request", "detail"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        if self.data:
            out["data"] = self.data
        return out


@dataclass
class DraContext:
    """What the DRA diagnosis of every node shares: built once per snapshot."""

    snapshot: Snapshot
    claims: list[Obj]
    """The pod's claims the scheduler would allocate (not allocated yet)."""
    features: Features = field(default_factory=Features)
    cache: SelectorCache = field(default_factory=SelectorCache.shared)
    index: SliceIndex = field(init=False)
    allocated: AllocatedState = field(init=False)
    holders: dict[DeviceID, list[str]] = field(init=False)
    class_drivers: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    """Class selectors -> `_class_drivers` (the same for every node)."""

    def __post_init__(self) -> None:
        self.index = SliceIndex(list(self.snapshot.kind(RESOURCE_SLICES).values()))
        claims = self.snapshot.kind(RESOURCE_CLAIMS_V1).values()
        self.allocated = AllocatedState.from_allocations(
            (c.get("status") or {}).get("allocation") for c in claims
        )
        self.holders = {
            did: [meta.namespaced_key(c) for c in held]
            for did, held in self.snapshot.claim_holders().items()
        }

    def get_class(self, name: str) -> Obj | None:
        return self.snapshot.get(DEVICE_CLASSES, name)

    def allocator(self) -> Allocator:
        return Allocator(
            classes=self.get_class,
            slices=self.index,
            allocated=self.allocated,
            features=self.features,
            cache=self.cache,
        )


def status_reasons(status: Status) -> list[Reason]:
    """A non-DRA plugin's rejection, as the scheduler words it."""
    code = "Error" if status.code is Code.ERROR else status.plugin or "Filter"
    return [Reason(code=code, summary=r, plugin=status.plugin) for r in status.reasons or ("",)]


def _requests(claim: Obj) -> list[tuple[str, str, Obj]]:
    """(request name, full name, spec) of every plain request and firstAvailable subrequest."""
    out = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        name = str(request.get("name") or "")
        if request.get("exactly"):
            out.append((name, name, request["exactly"]))
        for sub in request.get("firstAvailable") or ():
            out.append((name, f"{name}/{sub.get('name', '')}", sub))
    return out


def _class_drivers(ctx: DraContext, rd_classes: list[str]) -> set[str]:
    """Drivers with some device anywhere passing the class selectors, and those the class
    selectors name (`device.driver == "..."`)."""
    key = tuple(rd_classes)
    hit = ctx.class_drivers.get(key)
    if hit is not None:
        return hit
    drivers = {d for e in rd_classes for d in _DRIVER_EQUALS.findall(e)}
    for obj in ctx.snapshot.kind(RESOURCE_SLICES).values():
        spec = obj.get("spec") or {}
        driver = str(spec.get("driver") or "")
        if driver in drivers:
            continue
        for device in spec.get("devices") or ():
            try:
                if all(ctx.cache.matches(e, driver, device) for e in rd_classes):
                    drivers.add(driver)
                    break
            except (CELCompileError, CELRuntimeError):
                break
    ctx.class_drivers[key] = drivers
    return drivers


def request_reasons(
    claim_key: str, request: str, diag: RequestDiagnosis, *, node_drivers: set[str],
    class_drivers: set[str],
) -> list[Reason]:  # fmt: skip
    """The reasons one request's devices on one node give, most basic first."""
    if diag.fits:
        return []
    out: list[Reason] = []
    for (owner, i), err in sorted(diag.cel_errors.items()):
        expr = diag.expressions.get((owner, i), "")
        out.append(
            Reason(
                CEL_RUNTIME_ERROR,
                f"{owner} selector #{i} `{expr}`: {err}",
                claim=claim_key,
                request=request,
                data={"expression": expr, "error": err},
            )
        )
    if diag.matching == 0 and diag.cel_errors:
        return out
    if diag.matching == 0:
        missing = sorted(class_drivers - node_drivers)
        if diag.candidates == 0 or (class_drivers and missing and not class_drivers & node_drivers):
            drivers = ", ".join(missing) or "any driver"
            out.append(
                Reason(
                    NO_SLICE_FOR_DRIVER,
                    f"no ResourceSlice of {drivers} on the node",
                    data={"drivers": missing},
                    claim=claim_key,
                    request=request,
                )
            )
            return out
        for miss in sorted(diag.selector_misses.values(), key=lambda m: -len(m.devices)):
            values = ", ".join(f"{k}={v}" for k, v in miss.values.items())
            out.append(
                Reason(
                    SELECTOR_FALSE,
                    f"{miss.owner} selector #{miss.index} `{miss.expression}` is false",
                    detail=f"false for {len(miss.devices)} devices"
                    + (f", e.g. {'/'.join(miss.devices[0])}: {values}" if values else ""),
                    data={
                        "expression": miss.expression,
                        "values": miss.values,
                        "devices": len(miss.devices),
                    },
                    claim=claim_key,
                    request=request,
                )
            )
        return out
    for taint, devices in sorted(diag.tainted.items()):
        out.append(
            Reason(
                DEVICE_TAINT,
                f"device taint {taint} not tolerated",
                detail=f"{len(devices)} devices: {', '.join('/'.join(d) for d in devices[:3])}",
                data={"taint": taint, "devices": len(devices)},
                claim=claim_key,
                request=request,
            )
        )
    for short in diag.counters.values():
        out.append(
            Reason(
                COUNTERS_EXHAUSTED,
                f"counter {short.counter_set}/{short.counter} exhausted",
                detail=f"pool {short.pool}: a device needs {short.needed}, "
                f"{short.available} left ({len(short.devices)} devices)",
                data={
                    "counterSet": short.counter_set,
                    "counter": short.counter,
                    "needed": short.needed,
                    "available": short.available,
                },
                claim=claim_key,
                request=request,
            )
        )
    if diag.capacity:
        did, text = diag.capacity[0]
        out.append(
            Reason(
                CAPACITY_EXHAUSTED,
                "consumable capacity exhausted",
                detail=f"{len(diag.capacity)} devices, e.g. {'/'.join(did)}: {text}",
                claim=claim_key,
                request=request,
            )
        )
    holders = sorted({h for hs in diag.held.values() for h in hs})
    out.append(
        Reason(
            NOT_ENOUGH_DEVICES,
            f"wanted {diag.wanted}, free {len(diag.free)}",
            detail=f"{diag.matching} matching device{'' if diag.matching == 1 else 's'}"
            + (f"; {len(diag.held)} held by {', '.join(holders)}" if holders else ""),
            data={
                "wanted": diag.wanted,
                "free": len(diag.free),
                "matching": diag.matching,
                "heldBy": holders,
            },
            claim=claim_key,
            request=request,
        )
    )
    return out


def _fits(ctx: DraContext, node: Obj, claims: list[Obj]) -> bool | str:
    try:
        return ctx.allocator().find(node, claims) is not None
    except (FailedAllocationOnNode, AllocationError) as err:
        return str(err)


def _without_constraint(claim: Obj, index: int | None) -> Obj:
    out = deep_copy(claim)
    devices = out["spec"]["devices"]
    if index is None:
        devices.pop("constraints", None)
    else:
        del devices["constraints"][index]
    return out


def _constraint_reasons(ctx: DraContext, node: Obj) -> list[Reason]:
    """When every request fits alone: which constraint the combination cannot satisfy."""
    out: list[Reason] = []
    for ci, claim in enumerate(ctx.claims):
        constraints = ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []
        for i, con in enumerate(constraints):
            trial = [*ctx.claims[:ci], _without_constraint(claim, i), *ctx.claims[ci + 1 :]]
            if _fits(ctx, node, trial) is True:
                attr = con.get("matchAttribute") or con.get("distinctAttribute")
                kind = "matchAttribute" if con.get("matchAttribute") else "distinctAttribute"
                reqs = ", ".join(con.get("requests") or ()) or "all requests"
                out.append(
                    Reason(
                        CONSTRAINT,
                        f"constraint {kind} {attr} ({reqs}) cannot be satisfied",
                        claim=meta.namespaced_key(claim),
                        data={"constraint": i, kind: attr},
                    )
                )
    return out


def dra_reasons(ctx: DraContext, node: Obj, status: Status) -> list[Reason]:
    """The DynamicResources rejection of `node`, explained."""
    if status.reasons and status.reasons[0] == "resourceclaim not available on the node":
        return [Reason(CLAIM_ELSEWHERE, "an allocated claim of the pod is for other nodes")]
    gathered = ctx.index.gathered(node, ctx.features)
    node_drivers = {p.driver for p in gathered.pools}
    out: list[Reason] = []
    for claim in ctx.claims:
        claim_key = meta.namespaced_key(claim)
        for _, full, spec in _requests(claim):
            dclass = ctx.get_class(str(spec.get("deviceClassName") or "")) or {"spec": {}}
            admin = bool(spec.get("adminAccess"))
            request = cast(Request, spec)
            rd = make_request_data(0, 0, 0, full, "", request, dclass, admin_access=admin)
            diag = diagnose_request(
                rd=rd, owner=f"claim {claim_key}", node=node, candidates=gathered.candidates,
                allocated=ctx.allocated, holders=lambda d: ctx.holders.get(d, []),
                cache=ctx.cache,
            )  # fmt: skip
            out += request_reasons(
                claim_key, full, diag, node_drivers=node_drivers,
                class_drivers=_class_drivers(ctx, rd.class_selectors),
            )  # fmt: skip
    out = _first_available_only_when_all_fail(ctx, out)
    if out:
        return out
    out = _constraint_reasons(ctx, node)
    if out:
        return out
    message = "; ".join(status.reasons) or "cannot allocate all claims"
    return [Reason(DEVICES_TOGETHER, f"the requests do not fit together: {message}")]


def _first_available_only_when_all_fail(ctx: DraContext, reasons: list[Reason]) -> list[Reason]:
    """A firstAvailable request fails only when every subrequest does: keep the reasons of the
    subrequests of requests where none fits (the allocator tries them in order)."""
    failing = {(r.claim, r.request) for r in reasons}
    out = []
    for r in reasons:
        parent, sep, _ = r.request.partition("/")
        if not sep:
            out.append(r)
            continue
        claim = next(c for c in ctx.claims if meta.namespaced_key(c) == r.claim)
        subs = [full for name, full, _ in _requests(claim) if name == parent]
        if all((r.claim, s) in failing for s in subs):
            out.append(r)
    return out


def node_reasons(ctx: DraContext | None, node: Obj, statuses: list[Status]) -> list[Reason]:
    out: list[Reason] = []
    for status in statuses:
        if status.plugin == names.DYNAMIC_RESOURCES and ctx is not None:
            explained = dra_reasons(ctx, node, status)
            cel = any(r.code == CEL_RUNTIME_ERROR for r in explained)
            if status.code is Code.ERROR and not cel:
                explained = [replace(r, detail=r.detail or status.message) for r in explained]
            out += explained
        else:
            out += status_reasons(status)
    return out
