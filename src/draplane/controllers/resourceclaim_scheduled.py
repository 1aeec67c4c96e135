"""Help for pods bound to a node before their claims were allocated or reserved (syncPod's
ensurePodSchedulingContext and reserveForPod).

Such pods never pass through the scheduler, so the controller helps them claim by claim, as
its mode's policy says (`ClaimPolicy.help_scheduled_pod`: classic DRA asks for delayed
allocation on the pod's node through a PodSchedulingContext); an allocated claim is reserved
for the pod (`reserve_for_pod`).
"""

from __future__ import annotations

from collections.abc import Callable

from draplane.api import meta
from draplane.api.errors import StatusError
from draplane.api.meta import Obj
from draplane.controllers.resourceclaim_context import (
    ClaimControllerContext,
    SyncError,
    pod_claims,
)
from draplane.dra import claims as dra


async def help_scheduled_pod(ctx: ClaimControllerContext, pod: Obj) -> None:
    """Stops at the first claim that is missing or that the policy stops at (one that needs a
    PodSchedulingContext), as upstream; the claim's next change requeues the pod."""
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
        if not await ctx.policy.help_scheduled_pod(ctx, pod, claim):
            return


def needs_reservation(pod: Obj, claim: Obj, can_be_reserved: Callable[[Obj], bool]) -> bool:
    """The claim is allocated, not yet reserved for the pod, and may be (by the mode's rule)."""
    return (
        dra.is_allocated(claim)
        and not dra.is_reserved_for_pod(pod, claim)
        and can_be_reserved(claim)
    )


async def reserve_for_pod(ctx: ClaimControllerContext, *, pod: Obj, claim: Obj) -> None:
    updated = meta.deep_copy(claim)
    status = updated.setdefault("status", {})
    status["reservedFor"] = [*(status.get("reservedFor") or []), dra.pod_reference(pod)]
    try:
        await ctx.client.update(ctx.policy.claim_type, updated, subresource="status")
    except StatusError as err:
        raise SyncError(f"reserve claim for pod: {err}") from err
