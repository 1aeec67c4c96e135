"""Queueing hints of the structured mode (1.36 isSchedulableAfterClaimChange and the
ResourceSlice / DeviceClass events, spec 4.2).

A claim event requeues the pods that use the claim when it was created or its status changed;
a claim that lost its allocation requeues every pod (its devices are free again), so its pod
selector asks every pod for that event. ResourceSlice and DeviceClass adds and updates requeue
without a hint function (QueueAfterBackoff), as upstream.
"""

from __future__ import annotations

from typing import Any

from draplane import dra
from draplane.api.meta import Obj
from draplane.scheduler.framework import Lister, PodSelector, QueueingHint, unwrap
from draplane.scheduler.plugins.dynamicresources import hints
from draplane.scheduler.plugins.dynamicresources.hints import AFTER_BACKOFF, SKIP

QUEUE = QueueingHint.QUEUE_IMMEDIATELY


def _allocated(obj: Any) -> bool:
    return isinstance(obj, dict) and dra.is_allocated(obj)


def deallocated(old: Any, new: Any) -> bool:
    """The event takes a claim's allocation away (a status update, or a delete)."""
    old = unwrap(old) if old is not None else None
    if not _allocated(old):
        return False
    return new is None or (isinstance(new, dict) and not _allocated(new))


def is_schedulable_after_claim_change(
    *, pod: Obj, old: Any, new: Any, claims: Lister
) -> QueueingHint:
    if deallocated(old, new):
        # Its devices might be what this pod waits for.
        return QUEUE
    if new is None:
        return SKIP
    if not isinstance(new, dict):
        return AFTER_BACKOFF
    return hints.is_schedulable_after_claim_change(pod=pod, old=old, new=new, claims=claims)


def claim_event_key(old: Any, new: Any) -> str | None:
    if deallocated(old, new):
        return None
    return hints.claim_event_key(old, new)


CLAIM_SELECTOR = PodSelector(pod_keys=hints.claim_keys, event_key=claim_event_key)
