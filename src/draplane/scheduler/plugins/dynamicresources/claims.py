"""A pod's ResourceClaims as the plugin sees them (its 1.28
`foreachPodResourceClaim`).

`pod_resource_claims` resolves every pod claim through `dra.name()` and the claim lister and
fails with the first problem's text: the claim is not created yet, not found, being deleted,
or not owned by the pod.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from draplane import dra
from draplane.api import errors, meta
from draplane.api.kinds import RESOURCE_CLAIMS
from draplane.api.meta import Obj
from draplane.api.types import AnyResourceClaim, Pod, ResourceClaimStatus, resourcev1alpha2
from draplane.scheduler.framework import SUCCESS, Lister, Status, lister_get

C = TypeVar("C", bound=AnyResourceClaim)
"""The ResourceClaim version a PodClaim holds: v1 (structured mode), v1alpha2 (classic), or
either (`AnyResourceClaim`: the lookups and hints both modes share)."""

IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


class ClaimLookupError(Exception):
    """The pod's claims cannot all be used now; the message says why."""


@dataclass(frozen=True, slots=True)
class PodClaim(Generic[C]):
    pod_claim_name: str
    """`pod.spec.resourceClaims[].name`"""
    claim: C


def pre_enqueue(pod: Pod | Obj, claims: Lister) -> Status:
    """PreEnqueue of both modes: the pod waits, unresolvable, until every claim it names can be
    used."""
    try:
        pod_resource_claims(pod, claims)
    except ClaimLookupError as err:
        return Status.unresolvable(str(err))
    return SUCCESS


def pod_resource_claims(pod: Pod | Obj, claims: Lister) -> list[PodClaim[AnyResourceClaim]]:
    """The pod's claims in `spec.resourceClaims` order, skipping pod claims that need no
    claim; raises ClaimLookupError at the first claim that cannot be used. Each mode's
    plugin takes them as claims of its own version."""
    namespace = meta.namespace(pod)
    out: list[PodClaim[AnyResourceClaim]] = []
    for pod_claim in meta.pod_claims(pod):
        try:
            claim_name, check_owner = dra.name(pod, pod_claim)
        except dra.ClaimNameError as err:
            raise ClaimLookupError(str(err)) from None
        if claim_name is None:
            continue
        try:
            claim = cast(
                AnyResourceClaim,
                lister_get(claims, RESOURCE_CLAIMS, name=claim_name, namespace=namespace),
            )
        except errors.StatusError as err:
            raise ClaimLookupError(str(err)) from None
        if meta.deletion_timestamp(claim):
            raise ClaimLookupError(f'resourceclaim "{claim_name}" is being deleted')
        if check_owner:
            problem = dra.is_for_pod(pod, claim)
            if problem is not None:
                raise ClaimLookupError(problem)
        out.append(PodClaim(str(pod_claim.get("name") or ""), claim))
    return out


def allocation_mode(claim: resourcev1alpha2.ResourceClaim) -> str:
    return str((claim.get("spec") or {}).get("allocationMode") or WAIT_FOR_FIRST_CONSUMER)


def claim_status(
    claim: AnyResourceClaim,
) -> ResourceClaimStatus | resourcev1alpha2.ResourceClaimStatus:
    """`status` of a claim of either version ({} when it has none)."""
    return claim.get("status") or {}


def deallocation_candidates(
    claims: Sequence[PodClaim[C]], indices: Iterable[int], pod_uid: str
) -> list[int]:
    """PostFilter's candidates in the random order it tries them: the claims at `indices`
    reserved by nobody or by this pod alone (one in use by another pod is never deallocated)."""
    candidates = list(indices)
    random.shuffle(candidates)
    return [
        i
        for i in candidates
        if not (reserved := claim_status(claims[i].claim).get("reservedFor") or [])
        or (len(reserved) == 1 and reserved[0].get("uid") == pod_uid)
    ]
