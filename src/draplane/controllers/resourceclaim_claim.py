"""`sync_claim`: drop reservations of pods that are gone or done, then delete generated claims
whose pod is done (syncClaim of kubernetes/kubernetes pkg/controller/resourceclaim).

In the structured mode a claim nobody uses any more is deallocated here (1.36): its
`status.allocation` and `status.devices` are cleared and then the delete-protection finalizer
is removed, where 1.28 asked the driver with `deallocationRequested`.
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_not_found
from draplane.api.kinds import PODS, RESOURCE_CLAIMS
from draplane.api.meta import Obj
from draplane.controllers.resourceclaim_context import (
    WAIT_FOR_FIRST_CONSUMER,
    ClaimControllerContext,
    SyncError,
    is_pod_done,
    owning_pod,
)
from draplane.controllers.resourceclaim_scheduled import allocation_mode
from draplane.dra.resourcev1 import DELETE_PROTECTION_FINALIZER
from draplane.klog import V2

log = logging.getLogger(__name__)


async def sync_claim(ctx: ClaimControllerContext, namespace: str, name: str) -> None:
    claim = ctx.claims.get(name, namespace)
    if claim is None:
        return
    reserved_for: list[Obj] = (claim.get("status") or {}).get("reservedFor") or []
    valid: list[Obj] = []
    for entry in reserved_for:
        if (entry.get("apiGroup") or "") != "" or entry.get("resource") != "pods":
            raise SyncError(f"unsupported ReservedFor entry: {entry}")
        if await _still_reserved(ctx, namespace=namespace, entry=entry):
            valid.append(entry)
    if ctx.structured:
        if len(valid) < len(reserved_for) or (not valid and _deallocatable(claim)):
            claim = await _write_structured(ctx, claim, valid)
    elif len(valid) < len(reserved_for):
        await _write_reserved_for(ctx, claim, valid)
    if not valid:
        await _delete_if_pod_done(ctx, claim)


def _deallocatable(claim: Obj) -> bool:
    status = claim.get("status") or {}
    finalizers = (claim.get("metadata") or {}).get("finalizers") or ()
    return DELETE_PROTECTION_FINALIZER in finalizers and (
        bool(status.get("allocation")) or bool(meta.deletion_timestamp(claim))
    )


async def _write_structured(ctx: ClaimControllerContext, claim: Obj, valid: list[Obj]) -> Obj:
    """Keep the `valid` reservations; with none left, deallocate (clear `allocation` and
    `devices`) and then drop the delete-protection finalizer."""
    updated = meta.deep_copy(claim)
    status = updated.setdefault("status", {})
    if valid:
        status["reservedFor"] = valid
    else:
        for field in ("reservedFor", "allocation", "devices"):
            status.pop(field, None)
    if status != (claim.get("status") or {}):
        claim = await ctx.client.update(ctx.claim_type, updated, subresource="status")
    if valid or not _deallocatable_finalizer(claim):
        return claim
    without = meta.deep_copy(claim)
    without["metadata"]["finalizers"] = [
        f for f in without["metadata"].get("finalizers") or () if f != DELETE_PROTECTION_FINALIZER
    ]
    claim = await ctx.client.update(ctx.claim_type, without)
    log.log(V2, "Deallocated ResourceClaim %s/%s", meta.namespace(claim), meta.name(claim))
    return claim


def _deallocatable_finalizer(claim: Obj) -> bool:
    return DELETE_PROTECTION_FINALIZER in ((claim.get("metadata") or {}).get("finalizers") or ())


async def _still_reserved(ctx: ClaimControllerContext, *, namespace: str, entry: Obj) -> bool:
    uid = entry.get("uid")
    if uid in ctx.deleted_pods:
        return False
    pod = ctx.pods.get(str(entry.get("name") or ""), namespace)
    if pod is None:
        # The informer may not have seen a brand new pod yet: ask the API server.
        try:
            pod = await ctx.client.get(PODS, str(entry.get("name") or ""), namespace)
        except StatusError as err:
            if is_not_found(err):
                return False
            raise
        return meta.uid(pod) == uid
    return meta.uid(pod) == uid and not is_pod_done(pod)


async def _write_reserved_for(ctx: ClaimControllerContext, claim: Obj, valid: list[Obj]) -> None:
    updated = meta.deep_copy(claim)
    status = updated.setdefault("status", {})
    if valid:
        status["reservedFor"] = valid
    else:
        status.pop("reservedFor", None)
        # The transition from used to unused is what releases a delayed allocation.
        if allocation_mode(claim) == WAIT_FOR_FIRST_CONSUMER:
            status["deallocationRequested"] = True
    await ctx.client.update(RESOURCE_CLAIMS, updated, subresource="status")
    log.log(
        V2,
        "Removed stale reservations of ResourceClaim %s/%s: %d left",
        meta.namespace(claim),
        meta.name(claim),
        len(valid),
    )


async def _delete_if_pod_done(ctx: ClaimControllerContext, claim: Obj) -> None:
    owner = owning_pod(claim)
    if owner is None:
        return  # a user's claim
    pod = ctx.pods.get(owner.name, meta.namespace(claim))
    # A pod the informer does not know is left to the garbage collector.
    if pod is None or (meta.uid(pod) == owner.uid and not is_pod_done(pod)):
        return
    if meta.deletion_timestamp(claim):
        return  # already going; another DELETE would change nothing
    try:
        await ctx.client.delete(ctx.claim_type, meta.name(claim), meta.namespace(claim))
    except StatusError as err:
        if is_not_found(err):
            return
        raise SyncError(f"delete claim: {err}") from err
    log.log(
        V2,
        "Deleted ResourceClaim %s/%s: pod %s is done",
        meta.namespace(claim),
        meta.name(claim),
        owner.name,
    )
