"""`sync_claim`: drop reservations of pods that are gone or done, then delete generated claims
whose pod is done (syncClaim of kubernetes/kubernetes pkg/controller/resourceclaim).

How the reservations are written, and what is released with the last one, is the mode's
`ClaimPolicy.sync_reservations` (resourceclaim_classic.py, resourceclaim_structured.py).
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError, is_not_found
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.controllers.resourceclaim_context import (
    ClaimControllerContext,
    SyncError,
    is_pod_done,
    owning_pod,
)
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
    claim = await ctx.policy.sync_reservations(ctx, claim, valid)
    if not valid:
        await _delete_if_pod_done(ctx, claim)


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
        await ctx.client.delete(ctx.policy.claim_type, meta.name(claim), meta.namespace(claim))
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
