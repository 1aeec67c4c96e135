"""The claim writes of the structured DynamicResources plugin (spec 4.10): PreBind's finalizer,
`status.allocation` and `reservedFor` writes with conflict retries, Unreserve's removal of the
pod from `reservedFor`, PostFilter's deallocation. Every answer of the API server goes into the
assume cache (`ClaimTracker.assume`), so the next cycle sees it before the informer does.
"""

from __future__ import annotations

import logging
from typing import cast

from draplane import dra
from draplane.api import errors, meta
from draplane.api.meta import Obj, deep_copy
from draplane.api.types import ResourceClaim
from draplane.client.interface import Client
from draplane.dra.resourcev1 import DELETE_PROTECTION_FINALIZER, RESOURCE_CLAIMS_V1
from draplane.scheduler.framework import PodInfo
from draplane.scheduler.plugins.dynamicresources import bindingconditions
from draplane.scheduler.plugins.dynamicresources.assume import ClaimTracker
from draplane.scheduler.plugins.dynamicresources.claims import PodClaim

log = logging.getLogger(__name__)

_CONFLICT_RETRIES = 5


class BindError(Exception):
    """PreBind cannot write the claim (deleted, or allocated elsewhere meanwhile)."""


async def bind_claim(
    client: Client,
    tracker: ClaimTracker,
    pod_claim: PodClaim[ResourceClaim],
    pod_info: PodInfo,
    allocating: bool,
    *,
    allocation_timestamp: str | None = None,
) -> ResourceClaim | None:
    """Write one claim's allocation (`allocating`: this cycle made one, in flight) and the
    pod's reservation, re-reading the claim after a conflict. An allocation whose devices have
    binding conditions gets `allocation_timestamp` (when given) as its allocationTimestamp.
    Returns the claim as written when this call added the pod to `reservedFor`, else None."""
    name = pod_claim.claim["metadata"]["name"]
    key = meta.namespaced_key(pod_claim.claim)
    uid = meta.uid(pod_claim.claim)
    flying = tracker.in_flight(uid) if allocating else None
    fresh: ResourceClaim | None = None
    written: ResourceClaim | None = None
    for attempt in range(_CONFLICT_RETRIES):
        claim = fresh or cast("ResourceClaim | None", tracker.get(name, pod_info.namespace))
        fresh = None
        if claim is None or meta.uid(claim) != uid:
            raise BindError(f"claim {key} got deleted in the meantime")
        if flying is not None:
            allocation = (claim.get("status") or {}).get("allocation")
            wanted = flying.claim["status"]["allocation"]
            if allocation and allocation != wanted:
                raise BindError(f"claim {key} got allocated elsewhere in the meantime")
            if DELETE_PROTECTION_FINALIZER not in (claim["metadata"].get("finalizers") or ()):
                changed = deep_copy(claim)
                changed["metadata"].setdefault("finalizers", []).append(DELETE_PROTECTION_FINALIZER)
                finalized = await _updated(
                    client, changed, "", retry=attempt + 1 < _CONFLICT_RETRIES
                )
                if finalized is None:
                    fresh = await _fresh(client, name, pod_info.namespace)
                    continue
                claim = finalized
                tracker.assume(cast(Obj, claim))
        if dra.is_reserved_for_pod(pod_info.pod, claim) and (
            flying is None or (claim.get("status") or {}).get("allocation")
        ):
            break
        changed = deep_copy(claim)
        status = changed.setdefault("status", {})
        if flying is not None:
            status["allocation"] = deep_copy(flying.claim["status"]["allocation"])
            if allocation_timestamp and bindingconditions.has_binding_conditions(
                cast(ResourceClaim, changed)
            ):
                status["allocation"]["allocationTimestamp"] = allocation_timestamp
        if not dra.is_reserved_for_pod(pod_info.pod, changed):
            status.setdefault("reservedFor", []).append(dra.pod_reference(pod_info.pod))
        updated = await _updated(client, changed, "status", retry=attempt + 1 < _CONFLICT_RETRIES)
        if updated is None:
            fresh = await _fresh(client, name, pod_info.namespace)
            continue
        tracker.assume(cast(Obj, updated))
        written = updated
        break
    if flying is not None:
        tracker.drop_in_flight(uid, pod_info.uid)
    return written


async def _updated(
    client: Client, claim: Obj, subresource: str, *, retry: bool
) -> ResourceClaim | None:
    """The claim (or its `subresource`) updated; None on a conflict that may be retried."""
    try:
        updated = await client.update(RESOURCE_CLAIMS_V1, claim, subresource=subresource)
        return cast(ResourceClaim, updated)
    except errors.StatusError as err:
        if errors.is_conflict(err) and retry:
            return None
        raise


async def _fresh(client: Client, name: str, namespace: str) -> ResourceClaim | None:
    """The claim as the API server has it now (after a conflict the cache may lag)."""
    try:
        return cast(ResourceClaim, await client.get(RESOURCE_CLAIMS_V1, name, namespace))
    except errors.StatusError as err:
        if errors.is_not_found(err):
            return None
        raise


async def drop_reservation(
    client: Client, tracker: ClaimTracker, name: str, pod_info: PodInfo
) -> None:
    """Unreserve: remove the pod from the claim's `reservedFor` (a failure is logged)."""
    claim = tracker.get(name, pod_info.namespace)
    if claim is None or not dra.is_reserved_for_pod(pod_info.pod, claim):
        return
    changed = deep_copy(claim)
    status = changed.setdefault("status", {})
    status["reservedFor"] = [
        e for e in status.get("reservedFor") or () if e.get("uid") != pod_info.uid
    ]
    try:
        updated = await client.update(RESOURCE_CLAIMS_V1, changed, subresource="status")
    except errors.StatusError as err:
        log.warning(
            "Unreserve of claim %s for pod %s: %s", meta.namespaced_key(claim), pod_info.key, err
        )
        return
    tracker.assume(updated)


async def deallocate(client: Client, tracker: ClaimTracker, claim: ResourceClaim) -> ResourceClaim:
    """PostFilter: clear the claim's allocation, reservations and device status."""
    changed = deep_copy(claim)
    status = changed.setdefault("status", {})
    for name in ("allocation", "reservedFor", "devices"):
        status.pop(name, None)
    updated = await client.update(RESOURCE_CLAIMS_V1, changed, subresource="status")
    tracker.assume(updated)
    return cast(ResourceClaim, updated)
