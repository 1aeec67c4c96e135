"""Queueing hints of DynamicResources (1.28 names; spec §4.5 and §4.6).

Both run when an informer delivers an event for a pod this plugin rejected; the listers already
hold the new object. They decide between QueueSkip (nothing changed for this pod),
QueueAfterBackoff and QueueImmediately (the change is what the pod waited for).
"""

from __future__ import annotations

import logging
from typing import Any

from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import semantic_equal
from draplane.scheduler.framework import Lister, QueueingHint
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


def _unwrap(obj: Any) -> Any:
    """Objects from a delete may come wrapped in a DeletedFinalStateUnknown tombstone."""
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else obj


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _claims(pod: Obj, claims: Lister) -> list[PodClaim] | None:
    try:
        return pod_resource_claims(pod, claims)
    except ClaimLookupError as err:
        log.debug("pod %s not schedulable yet: %s", _key(pod), err)
        return None


def _key(obj: Obj) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def is_schedulable_after_claim_change(
    *, pod: Obj, old: Any, new: Any, claims: Lister
) -> QueueingHint:
    if new is None:
        return SKIP
    if not isinstance(new, dict):
        log.error("unexpected new object in ResourceClaim event: %r", type(new))
        return AFTER_BACKOFF
    pod_claims = _claims(pod, claims)
    if pod_claims is None:
        return SKIP
    if _uid(new) not in {_uid(pc.claim) for pc in pod_claims}:
        return SKIP
    if old is None:
        return IMMEDIATELY
    old = _unwrap(old)
    if not isinstance(old, dict):
        log.error("unexpected old object in ResourceClaim event: %r", type(old))
        return AFTER_BACKOFF
    # Semantic equality, as apiequality.Semantic: absent, null and empty values are the same.
    if semantic_equal(old.get("status"), new.get("status")):
        return SKIP
    return IMMEDIATELY


def is_schedulable_after_scheduling_context_change(
    *, pod: Obj, old: Any, new: Any, claims: Lister
) -> QueueingHint:
    old = _unwrap(old) if old is not None else None
    if old is not None and new is None:
        return SKIP
    if (old is not None and not isinstance(old, dict)) or not isinstance(new, dict):
        return AFTER_BACKOFF
    new_md, pod_md = new.get("metadata") or {}, pod.get("metadata") or {}
    if new_md.get("name") != pod_md.get("name") or (
        new_md.get("namespace") != pod_md.get("namespace")
    ):
        return SKIP
    pod_claims = _claims(pod, claims)
    if pod_claims is None:
        return SKIP
    pending = sum(
        1
        for pc in pod_claims
        if allocation_mode(pc.claim) == WAIT_FOR_FIRST_CONSUMER
        and not claim_status(pc.claim).get("allocation")
        and unsuitable_nodes(new, pc.pod_claim_name) is None
    )
    if pending:
        return SKIP
    new_entries = (new.get("status") or {}).get("resourceClaims") or []
    if old is None or len(new_entries) > len((old.get("status") or {}).get("resourceClaims") or []):
        return IMMEDIATELY
    selected = (new.get("spec") or {}).get("selectedNode")
    if selected and any(selected in (e.get("unsuitableNodes") or ()) for e in new_entries):
        return IMMEDIATELY
    if not semantic_equal(old.get("spec"), new.get("spec")) and semantic_equal(
        old.get("status"), new.get("status")
    ):
        return SKIP
    return AFTER_BACKOFF
