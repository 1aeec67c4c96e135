"""Queueing hints of DynamicResources (1.28: isSchedulableAfterClaimChange and
isSchedulableAfterPodSchedulingContextChange) and their selectors.

Both run when an informer delivers an event for a pod this plugin rejected; the listers already
hold the new object. They decide between QueueSkip (nothing changed for this pod),
QueueAfterBackoff and QueueImmediately (the change is what the pod waited for). The selectors
tell the queue which pods a hint can requeue at all (the pods naming the claim; the pod the
PodSchedulingContext is named after), so an event does not ask every pending pod.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

from draplane import dra
from draplane.api import meta
from draplane.api.meta import Obj
from draplane.api.types import AnyResourceClaim, Pod, resourcev1alpha2
from draplane.api.types.resourcev1alpha2 import PodSchedulingContext
from draplane.api.validation.objectmeta import semantic_equal
from draplane.klog import V5
from draplane.scheduler.framework import Lister, PodSelector, QueueingHint, unwrap
from draplane.scheduler.plugins.dynamicresources.claims import (
    WAIT_FOR_FIRST_CONSUMER,
    ClaimLookupError,
    PodClaim,
    allocation_mode,
    claim_status,
    pod_resource_claims,
)
from draplane.scheduler.plugins.dynamicresources.state import unsuitable_nodes

log = logging.getLogger(__name__)

SKIP = QueueingHint.QUEUE_SKIP
AFTER_BACKOFF = QueueingHint.QUEUE_AFTER_BACKOFF
IMMEDIATELY = QueueingHint.QUEUE_IMMEDIATELY


def _claims(pod: Pod | Obj, claims: Lister) -> list[PodClaim[AnyResourceClaim]] | None:
    try:
        return pod_resource_claims(pod, claims)
    except ClaimLookupError as err:
        log.log(V5, "pod %s not schedulable yet: %s", meta.namespaced_key(pod), err)
        return None


def is_schedulable_after_claim_change(
    *, pod: Obj, old: Any, new: Any, claims: Lister, contexts: Lister | None = None
) -> QueueingHint:
    """isSchedulableAfterClaimChange, plus one deviation (docs/fidelity.md): with `contexts`, a
    claim that got allocated while another claim of the pod still waits for its driver to allocate
    on the accepted selected node is QueueSkip (the attempt could only fail; the last allocation
    requeues the pod)."""
    if new is None:
        return SKIP
    if not isinstance(new, dict):
        log.error("unexpected new object in ResourceClaim event: %r", type(new))
        return AFTER_BACKOFF
    unwrapped = unwrap(old) if old is not None else None
    if isinstance(unwrapped, dict) and unwrapped.get("status") == new.get("status"):
        # Where steps 3-7 lead for an unchanged status; cheap, and most claim updates
        # (finalizers) are of this kind.
        return SKIP
    pod_claims = _claims(pod, claims)
    if pod_claims is None:
        return SKIP
    if meta.uid(new) not in {meta.uid(pc.claim) for pc in pod_claims}:
        return SKIP
    if old is None:
        return IMMEDIATELY
    old = unwrap(old)
    if not isinstance(old, dict):
        log.error("unexpected old object in ResourceClaim event: %r", type(old))
        return AFTER_BACKOFF
    if not _status_changed(old.get("status") or {}, new.get("status") or {}):
        return SKIP
    if contexts is not None and claim_status(cast(AnyResourceClaim, new)).get("allocation"):
        # The classic mode's: v1alpha2 claims.
        others = [pc for pc in pod_claims if meta.uid(pc.claim) != meta.uid(new)]
        if _awaiting_allocation(_v1alpha2(others)) and _selected_node_accepted(
            _context(pod, contexts)
        ):
            return SKIP
    return IMMEDIATELY


def _status_changed(old: Obj, new: Obj) -> bool:
    """Semantic inequality, as apiequality.Semantic (absent, null and empty values are the
    same); an allocation appearing or going, the usual change, is decided without it."""
    if bool(old.get("allocation")) != bool(new.get("allocation")):
        return True
    return not semantic_equal(old, new)


def _v1alpha2(
    pod_claims: Sequence[PodClaim[AnyResourceClaim]],
) -> Sequence[PodClaim[resourcev1alpha2.ResourceClaim]]:
    return cast(Sequence[PodClaim[resourcev1alpha2.ResourceClaim]], pod_claims)


def _awaiting_allocation(pod_claims: Sequence[PodClaim[resourcev1alpha2.ResourceClaim]]) -> bool:
    """Some delayed claim is neither allocated nor asked to be deallocated."""
    return any(
        allocation_mode(pc.claim) == WAIT_FOR_FIRST_CONSUMER
        and not (status := pc.claim.get("status") or {}).get("allocation")
        and not status.get("deallocationRequested")
        for pc in pod_claims
    )


def _selected_node_accepted(psc: PodSchedulingContext | None) -> bool:
    """A node is selected and no driver reported it unsuitable: the drivers allocate there."""
    if psc is None:
        return False
    selected = (psc.get("spec") or {}).get("selectedNode")
    entries = (psc.get("status") or {}).get("resourceClaims") or ()
    return bool(selected) and not any(selected in (e.get("unsuitableNodes") or ()) for e in entries)


def _context(pod: Pod | Obj, contexts: Lister) -> PodSchedulingContext | None:
    return cast("PodSchedulingContext | None", contexts.get(meta.name(pod), meta.namespace(pod)))


def is_schedulable_after_scheduling_context_change(
    *, pod: Obj, old: Any, new: Any, claims: Lister
) -> QueueingHint:
    old = unwrap(old) if old is not None else None
    if old is not None and new is None:
        return SKIP
    if (old is not None and not isinstance(old, dict)) or not isinstance(new, dict):
        return AFTER_BACKOFF
    new_md, pod_md = meta.metadata(new), meta.metadata(pod)
    if new_md.get("name") != pod_md.get("name") or (
        new_md.get("namespace") != pod_md.get("namespace")
    ):
        return SKIP
    found = _claims(pod, claims)
    if found is None:
        return SKIP
    pod_claims = _v1alpha2(found)
    psc = cast(PodSchedulingContext, new)
    pending = sum(
        1
        for pc in pod_claims
        if allocation_mode(pc.claim) == WAIT_FOR_FIRST_CONSUMER
        and not claim_status(pc.claim).get("allocation")
        and unsuitable_nodes(psc, pc.pod_claim_name) is None
    )
    if pending:
        return SKIP
    if _selected_node_accepted(psc) and _awaiting_allocation(pod_claims):
        # Deviation (docs/fidelity.md): the drivers answered and accepted the selected node, so they
        # allocate there; the pod waits for that allocation, which the claim hint sees. Upstream
        # queues immediately and, when this event beats the claim's, fails one attempt more.
        return SKIP
    new_entries = (new.get("status") or {}).get("resourceClaims") or []
    if old is None or len(new_entries) > len((old.get("status") or {}).get("resourceClaims") or []):
        return IMMEDIATELY
    selected = (psc.get("spec") or {}).get("selectedNode")
    if selected and any(selected in (e.get("unsuitableNodes") or ()) for e in new_entries):
        return IMMEDIATELY
    if not semantic_equal(old.get("spec"), new.get("spec")) and semantic_equal(
        old.get("status"), new.get("status")
    ):
        return SKIP
    return AFTER_BACKOFF


def claim_keys(pod: Pod | Obj) -> list[str]:
    """`namespace/name` of every claim the pod names; none when a name is not known yet (the
    claim hint then returns QueueSkip for any claim, as upstream)."""
    namespace = meta.namespace(pod)
    keys: list[str] = []
    for pod_claim in meta.pod_claims(pod):
        try:
            claim_name, _ = dra.name(pod, pod_claim)
        except dra.ClaimNameError:
            return []
        if claim_name is not None:
            keys.append(f"{namespace}/{claim_name}")
    return keys


def claim_event_key(old: Any, new: Any) -> str | None:
    if new is None:
        return ""
    return meta.namespaced_key(new) if isinstance(new, dict) else None


def scheduling_context_keys(pod: Pod | Obj) -> list[str]:
    return [meta.namespaced_key(pod)]


def scheduling_context_event_key(old: Any, new: Any) -> str | None:
    old = unwrap(old) if old is not None else None
    if old is not None and new is None:
        return ""
    if (old is not None and not isinstance(old, dict)) or not isinstance(new, dict):
        return None
    return meta.namespaced_key(new)


CLAIM_SELECTOR = PodSelector(pod_keys=claim_keys, event_key=claim_event_key)
SCHEDULING_CONTEXT_SELECTOR = PodSelector(
    pod_keys=scheduling_context_keys, event_key=scheduling_context_event_key
)
