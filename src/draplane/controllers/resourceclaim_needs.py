"""Which pod events need work: `pod_needs_work` and `pod_needs_claims` (enqueuePod and
podNeedsWork of pkg/controller/resourceclaim).

Deliberate differences from 1.28 (docs/fidelity.md): finished pods need no work; a pod
claim that resolves to no claim, or to a missing user claim, no longer hides the pod's later
claims; a recorded claim owned by another pod queues the pod, whose sync then reports
it with an Event.
"""

from __future__ import annotations

from draplane.api import meta
from draplane.api.meta import Obj
from draplane.controllers.resourceclaim_context import (
    ClaimControllerContext,
    is_pod_done,
    pod_claims,
)
from draplane.dra import claims as dra


def pod_needs_claims(pod: Obj, *, deleted: bool) -> bool:
    """False once the pod's claims may be released: gone, terminated, or deleted unscheduled."""
    return not deleted and not is_pod_done(pod)


def pod_needs_work(ctx: ClaimControllerContext, pod: Obj) -> bool:
    if meta.deletion_timestamp(pod) or is_pod_done(pod):
        return False
    namespace = meta.namespace(pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    for pod_claim in pod_claims(pod):
        try:
            claim_name, must_check_owner = dra.name(pod, pod_claim)
        except dra.ClaimNameError:
            return True  # not created yet, or a source this controller cannot handle
        if claim_name is None:
            continue
        claim = ctx.claims.get(claim_name, namespace)
        if claim is None:
            if dra.pod_claim_source(pod_claim).get("resourceClaimTemplateName"):
                return True  # must (re)create it from the template
            continue  # must be created by the user
        if must_check_owner and dra.is_for_pod(pod, claim) is not None:
            return True
        if node_name and ctx.policy.scheduled_pod_needs_help(pod, claim):
            return True
    return False
