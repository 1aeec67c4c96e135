"""syncClaim and allocateClaims of the driver controller helper
(k8s.io/dynamic-resource-allocation/controller, v0.28).

Writes go through the API with the object's resourceVersion as precondition, and each result is
recorded in the mutation cache so the next sync sees it before the informer does.
"""

from __future__ import annotations

import logging

from draplane.api import errors, kinds, meta
from draplane.api.meta import Obj
from draplane.dra.controller._context import SyncContext, SyncError, SyncResult, get_parameters
from draplane.dra.controller._interfaces import ClaimAllocation
from draplane.klog import V2

log = logging.getLogger(__name__)

IMMEDIATE = "Immediate"


async def sync_claim(ctx: SyncContext, claim: Obj) -> SyncResult:
    status = claim.get("status") or {}
    if status.get("reservedFor"):
        return SyncResult.DONE
    if meta.deletion_timestamp(claim) or status.get("deallocationRequested"):
        try:
            await _deallocate(ctx, claim)
        except SyncError as err:
            # A stale copy of a claim that is already gone: nothing is left to release.
            if not errors.is_not_found(err.__cause__ or err):
                raise
        return SyncResult.DONE
    if status.get("allocation"):
        return SyncResult.DONE
    if (claim.get("spec") or {}).get("allocationMode") != IMMEDIATE:
        return SyncResult.DONE
    resource_class = ctx.resource_class((claim.get("spec") or {}).get("resourceClassName", ""))
    if resource_class.get("driverName") != ctx.driver_name:
        # The class may still be changed to point at this driver.
        return SyncResult.REQUEUE
    class_parameters, claim_parameters = await get_parameters(ctx, claim, resource_class)
    item = ClaimAllocation(
        pod_claim_name="",
        claim=claim,
        resource_class=resource_class,
        claim_parameters=claim_parameters,
        class_parameters=class_parameters,
    )
    await allocate_claims(ctx, [item], selected_node=None, selected_user=None)
    if item.error is not None:
        raise SyncError(f"allocate: {item.error}")
    return SyncResult.DONE


async def _deallocate(ctx: SyncContext, claim: Obj) -> None:
    if ctx.finalizer not in meta.finalizers(claim):
        return
    claim = meta.deep_copy(claim)
    status = claim.setdefault("status", {})
    if status.get("allocation"):
        try:
            await ctx.driver.deallocate(claim)
        except Exception as err:
            raise SyncError(f"deallocate: {err}") from err
        for field in ("allocation", "driverName", "deallocationRequested"):
            status.pop(field, None)
        claim = await _write(ctx, claim, subresource="status", what="remove allocation")
        log.log(V2, "driver %s: deallocated ResourceClaim %s", ctx.driver_name, meta.key(claim))
    else:
        # Nothing recorded, but the driver may be in the middle of allocating it.
        try:
            await ctx.driver.deallocate(claim)
        except Exception as err:
            raise SyncError(f"stop allocation: {err}") from err
        if status.get("deallocationRequested"):
            status.pop("deallocationRequested")
            claim = await _write(ctx, claim, subresource="status", what="remove deallocation")
    claim = meta.deep_copy(claim)
    claim["metadata"]["finalizers"] = [f for f in meta.finalizers(claim) if f != ctx.finalizer]
    await _write(ctx, claim, subresource="", what="remove finalizer")


async def _write(ctx: SyncContext, claim: Obj, *, subresource: str, what: str) -> Obj:
    try:
        written = await ctx.client.update(kinds.RESOURCE_CLAIMS, claim, subresource=subresource)
    except Exception as err:
        raise SyncError(f"{what}: {err}") from err
    ctx.claims.mutation(written)
    return written


async def allocate_claims(
    ctx: SyncContext,
    items: list[ClaimAllocation],
    *,
    selected_node: str | None,
    selected_user: Obj | None,
) -> None:
    """Allocate the unallocated items; each failure ends up in its item's `error`."""
    pending = [item for item in items if not (item.claim.get("status") or {}).get("allocation")]
    for item in pending:
        if ctx.finalizer in meta.finalizers(item.claim):
            continue
        claim = meta.deep_copy(item.claim)
        claim["metadata"].setdefault("finalizers", []).append(ctx.finalizer)
        try:
            item.claim = await _write(ctx, claim, subresource="", what="add finalizer")
        except SyncError as err:
            item.error = str(err)
    ready = [item for item in pending if item.error is None]
    if not ready:
        return
    try:
        await ctx.driver.allocate(ready, selected_node=selected_node)
    except Exception as err:
        log.warning("driver %s: allocate failed: %s", ctx.driver_name, err)
        for item in ready:
            if item.allocation is None and item.error is None:
                item.error = str(err)
    for item in ready:
        await _record_allocation(ctx, item, selected_user=selected_user)
        if item.error is None:
            log.log(
                V2,
                "driver %s: allocated ResourceClaim %s%s",
                ctx.driver_name,
                meta.key(item.claim),
                f" for node {selected_node}" if selected_node else "",
            )


async def _record_allocation(
    ctx: SyncContext, item: ClaimAllocation, *, selected_user: Obj | None
) -> None:
    if item.error is not None:
        return
    if item.allocation is None:
        item.error = "allocating claim: missing allocation from driver"
        return
    claim = meta.deep_copy(item.claim)
    status = claim.setdefault("status", {})
    status["allocation"] = item.allocation
    status["driverName"] = ctx.driver_name
    if selected_user is not None and ctx.set_reserved_for:
        status.setdefault("reservedFor", []).append(selected_user)
    try:
        item.claim = await _write(ctx, claim, subresource="status", what="add allocation")
    except SyncError as err:
        item.error = str(err)
