"""`ClassicClaims`: the resource claim controller's policy for classic DRA (1.28,
resource.k8s.io/v1alpha2).

A claim's `allocationMode` decides: a bound pod whose WaitForFirstConsumer claim is not
allocated yet gets a PodSchedulingContext naming its node (ensurePodSchedulingContext), so the
driver allocates there; an allocated claim the pod does not hold yet is reserved for it. A claim
nobody uses any more loses its reservations and, delayed, asks the driver to deallocate it
(`deallocationRequested`).
"""

from __future__ import annotations

import logging

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.kinds import (
    POD_SCHEDULING_CONTEXTS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    ResourceType,
)
from draplane.api.meta import Obj
from draplane.client.informer import Informer, InformerFactory
from draplane.controllers.resourceclaim_context import (
    WAIT_FOR_FIRST_CONSUMER,
    ClaimControllerContext,
    SyncError,
)
from draplane.controllers.resourceclaim_scheduled import needs_reservation, reserve_for_pod
from draplane.dra import claims as dra
from draplane.klog import V2

log = logging.getLogger(__name__)


def allocation_mode(claim: Obj) -> str:
    return str((claim.get("spec") or {}).get("allocationMode") or WAIT_FOR_FIRST_CONSUMER)


def _waits_for_node(claim: Obj) -> bool:
    """Delayed allocation that has not happened yet: the driver needs the pod's node."""
    return allocation_mode(claim) == WAIT_FOR_FIRST_CONSUMER and not dra.is_allocated(claim)


class ClassicClaims:
    claim_type: ResourceType = RESOURCE_CLAIMS
    template_type: ResourceType = RESOURCE_CLAIM_TEMPLATES

    def __init__(self, informers: InformerFactory) -> None:
        self._scheduling_contexts = informers.informer(POD_SCHEDULING_CONTEXTS)

    def informers(self) -> tuple[Informer, ...]:
        return (self._scheduling_contexts,)

    def scheduled_pod_needs_help(self, pod: Obj, claim: Obj) -> bool:
        if _waits_for_node(claim):
            lister = self._scheduling_contexts.lister
            scheduling_context = lister.get(meta.name(pod), meta.namespace(pod))
            return scheduling_context is None or (scheduling_context.get("spec") or {}).get(
                "selectedNode"
            ) != (pod.get("spec") or {}).get("nodeName")
        return needs_reservation(pod, claim, dra.can_be_reserved)

    async def help_scheduled_pod(self, ctx: ClaimControllerContext, pod: Obj, claim: Obj) -> bool:
        if _waits_for_node(claim):
            await self._ensure_pod_scheduling_context(ctx, pod)
            return False
        if needs_reservation(pod, claim, dra.can_be_reserved):
            await reserve_for_pod(ctx, pod=pod, claim=claim)
        return True

    async def _ensure_pod_scheduling_context(self, ctx: ClaimControllerContext, pod: Obj) -> None:
        name, namespace = meta.name(pod), meta.namespace(pod)
        node_name = (pod.get("spec") or {}).get("nodeName")
        existing = self._scheduling_contexts.lister.get(name, namespace)
        if existing is None:
            scheduling_context: Obj = {
                "apiVersion": POD_SCHEDULING_CONTEXTS.api_version,
                "kind": POD_SCHEDULING_CONTEXTS.kind,
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": name,
                            "uid": meta.uid(pod),
                            "controller": True,
                        }
                    ],
                },
                "spec": {"selectedNode": node_name},
            }
            try:
                await ctx.client.create(POD_SCHEDULING_CONTEXTS, scheduling_context, namespace)
            except StatusError as err:
                raise SyncError(f"create PodSchedulingContext: {err}") from err
            return
        if (existing.get("spec") or {}).get("selectedNode") != node_name:
            updated = meta.deep_copy(existing)
            updated.setdefault("spec", {})["selectedNode"] = node_name
            try:
                await ctx.client.update(POD_SCHEDULING_CONTEXTS, updated)
            except StatusError as err:
                raise SyncError(f"update spec.selectedNode in PodSchedulingContext: {err}") from err

    async def sync_reservations(
        self, ctx: ClaimControllerContext, claim: Obj, valid: list[Obj]
    ) -> Obj:
        reserved_for: list[Obj] = (claim.get("status") or {}).get("reservedFor") or []
        if len(valid) < len(reserved_for):
            await _write_reserved_for(ctx, claim, valid)
        return claim


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
