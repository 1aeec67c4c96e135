"""`StructuredClaims`: the resource claim controller's policy for DRA with structured
parameters (1.36, resource.k8s.io/v1).

No PodSchedulingContexts: an allocated claim a bound pod does not hold yet is reserved for it.
A claim nobody uses any more is deallocated by the controller itself: its `status.allocation`
and `status.devices` are cleared and then the delete-protection finalizer is removed (where
1.28 asked the driver with `deallocationRequested`).
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.informer import Informer
from draplane.controllers.resourceclaim_context import ClaimControllerContext
from draplane.controllers.resourceclaim_scheduled import needs_reservation, reserve_for_pod
from draplane.dra.resourcev1 import (
    DELETE_PROTECTION_FINALIZER,
    RESOURCE_CLAIM_TEMPLATES_V1,
    RESOURCE_CLAIMS_V1,
    can_be_reserved,
)
from draplane.klog import V2

log = logging.getLogger(__name__)


class StructuredClaims:
    claim_type: ResourceType = RESOURCE_CLAIMS_V1
    template_type: ResourceType = RESOURCE_CLAIM_TEMPLATES_V1

    def informers(self) -> tuple[Informer, ...]:
        return ()

    def scheduled_pod_needs_help(self, pod: Obj, claim: Obj) -> bool:
        return needs_reservation(pod, claim, can_be_reserved)

    async def help_scheduled_pod(self, ctx: ClaimControllerContext, pod: Obj, claim: Obj) -> bool:
        if needs_reservation(pod, claim, can_be_reserved):
            await reserve_for_pod(ctx, pod=pod, claim=claim)
        return True

    async def sync_reservations(
        self, ctx: ClaimControllerContext, claim: Obj, valid: list[Obj]
    ) -> Obj:
        reserved_for: list[Obj] = (claim.get("status") or {}).get("reservedFor") or []
        if len(valid) < len(reserved_for) or (not valid and _deallocatable(claim)):
            return await _write(ctx, claim, valid)
        return claim


def _deallocatable(claim: Obj) -> bool:
    status = claim.get("status") or {}
    return _has_finalizer(claim) and (
        bool(status.get("allocation")) or bool(meta.deletion_timestamp(claim))
    )


def _has_finalizer(claim: Obj) -> bool:
    return DELETE_PROTECTION_FINALIZER in ((claim.get("metadata") or {}).get("finalizers") or ())


async def _write(ctx: ClaimControllerContext, claim: Obj, valid: list[Obj]) -> Obj:
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
        claim = await ctx.client.update(RESOURCE_CLAIMS_V1, updated, subresource="status")
    if valid or not _has_finalizer(claim):
        return claim
    without = meta.deep_copy(claim)
    without["metadata"]["finalizers"] = [
        f for f in without["metadata"].get("finalizers") or () if f != DELETE_PROTECTION_FINALIZER
    ]
    claim = await ctx.client.update(RESOURCE_CLAIMS_V1, without)
    log.log(V2, "Deallocated ResourceClaim %s/%s", meta.namespace(claim), meta.name(claim))
    return claim
