"""Help for pods bound to a node before their claims were allocated (syncPod's
ensurePodSchedulingContext and reserveForPod).

Such pods never pass through the scheduler, so the controller asks for delayed allocation on
their node through a PodSchedulingContext, and reserves allocated claims for them.
"""

from __future__ import annotations

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.kinds import POD_SCHEDULING_CONTEXTS
from draplane.api.meta import Obj
from draplane.controllers.resourceclaim_context import (
    WAIT_FOR_FIRST_CONSUMER,
    ClaimControllerContext,
    SyncError,
    pod_claims,
)
from draplane.dra import claims as dra
from draplane.dra.resourcev1 import can_be_reserved


def allocation_mode(claim: Obj) -> str:
    return str((claim.get("spec") or {}).get("allocationMode") or WAIT_FOR_FIRST_CONSUMER)


async def help_scheduled_pod(ctx: ClaimControllerContext, pod: Obj) -> None:
    """Stops at the first claim that is missing or needs a PodSchedulingContext, as upstream;
    the claim's next change requeues the pod."""
    namespace = meta.namespace(pod)
    for pod_claim in pod_claims(pod):
        try:
            claim_name, must_check_owner = dra.name(pod, pod_claim)
        except dra.ClaimNameError as err:
            raise SyncError(str(err)) from err
        if claim_name is None:
            continue
        # The mutation cache also knows a claim created earlier in this pass.
        claim = ctx.claim_cache.get(claim_name, namespace)
        if claim is None:
            return
        if must_check_owner and (problem := dra.is_for_pod(pod, claim)) is not None:
            raise SyncError(problem)
        if ctx.structured:
            # 1.36: no PodSchedulingContext; an allocated claim is reserved for the bound pod.
            allocated = dra.is_allocated(claim)
            if allocated and not dra.is_reserved_for_pod(pod, claim) and can_be_reserved(claim):
                await reserve_for_pod(ctx, pod=pod, claim=claim)
            continue
        if allocation_mode(claim) == WAIT_FOR_FIRST_CONSUMER and not dra.is_allocated(claim):
            await ensure_pod_scheduling_context(ctx, pod)
            return
        if (
            dra.is_allocated(claim)
            and not dra.is_reserved_for_pod(pod, claim)
            and dra.can_be_reserved(claim)
        ):
            await reserve_for_pod(ctx, pod=pod, claim=claim)


async def ensure_pod_scheduling_context(ctx: ClaimControllerContext, pod: Obj) -> None:
    name, namespace = meta.name(pod), meta.namespace(pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    assert ctx.scheduling_contexts is not None, "classic mode only"
    existing = ctx.scheduling_contexts.get(name, namespace)
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


async def reserve_for_pod(ctx: ClaimControllerContext, *, pod: Obj, claim: Obj) -> None:
    updated = meta.deep_copy(claim)
    status = updated.setdefault("status", {})
    status["reservedFor"] = [*(status.get("reservedFor") or []), dra.pod_reference(pod)]
    try:
        await ctx.client.update(ctx.claim_type, updated, subresource="status")
    except StatusError as err:
        raise SyncError(f"reserve claim for pod: {err}") from err
