"""Resolving a pod's claims: `name(pod, pod_claim)` and the ownership/reservation predicates.

Every component (claim controller, scheduler, driver framework, nodes, node authorizer) finds a
pod's ResourceClaims only through `name()`, which reads `pod.status.resourceClaimStatuses` for
template claims. Branches, in order (resourceclaim.Name of
k8s.io/dynamic-resource-allocation, 1.28):
1. `source.resourceClaimName` set -> (that name, must_check_owner=False)
2. template claim with a status entry -> (entry's resourceClaimName, which may be None meaning
   "no claim needed, skip it", must_check_owner=True)
3. template claim without a status entry -> raises ErrClaimNotFound
4. neither field set -> raises ErrAPIUnsupported
"""

from __future__ import annotations

from typing import cast

from draplane.api import meta, versions
from draplane.api.meta import Obj
from draplane.api.types import (
    AnyResourceClaim,
    ClaimSource,
    Pod,
    PodResourceClaim,
    resourcev1alpha2,
)

ANNOTATION_POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
DRIVER_FINALIZER_SUFFIX = "/deletion-protection"
RESERVED_FOR_MAX = 32
POD_SCHEDULING_NODE_LIST_MAX = 128
POD_CLAIM_WITHOUT_SOURCE_SINCE = 31
"""The Kubernetes minor version whose core/v1 PodResourceClaim lost `source`."""


class ClaimNameError(Exception):
    """Base of the two errors `name()` raises; callers test the subclass, never the text."""


class ErrClaimNotFound(ClaimNameError):
    """The template claim has not been created (recorded in the pod status) yet."""


class ErrAPIUnsupported(ClaimNameError):
    """No field of the pod claim's source that this client knows is set."""


def pod_claim_source(pod_claim: PodResourceClaim | Obj) -> ClaimSource:
    """Where a pod claim names its claim or template: `source` (1.28) or the pod claim itself
    (core/v1 since 1.31)."""
    return pod_claim.get("source") or cast(ClaimSource, pod_claim)


def pod_resource_claim(
    name: str,
    *,
    claim_name: str | None = None,
    template_name: str | None = None,
    mode: versions.Mode,
) -> Obj:
    """One entry of `pod.spec.resourceClaims` in the mode's shape: the fields under `source`
    (1.28) or directly on the entry (core/v1 since 1.31, the 1.36 mode)."""
    fields: Obj = {}
    if claim_name is not None:
        fields["resourceClaimName"] = claim_name
    if template_name is not None:
        fields["resourceClaimTemplateName"] = template_name
    if mode.minor >= POD_CLAIM_WITHOUT_SOURCE_SINCE:
        return {"name": name, **fields}
    return {"name": name, "source": fields}


def name(pod: Pod | Obj, pod_claim: PodResourceClaim | Obj) -> tuple[str | None, bool]:
    """Resolve a pod claim to (claim name or None, must_check_owner); raises ClaimNameError.

    Reads the 1.28 `source` and the fields directly on the pod claim (core/v1 since 1.31, the
    shape the 1.36 mode's pods have)."""
    source = pod_claim_source(pod_claim)
    claim_name = source.get("resourceClaimName")
    if claim_name:
        return str(claim_name), False
    if source.get("resourceClaimTemplateName"):
        for entry in meta.pod_status(pod).get("resourceClaimStatuses") or []:
            if entry.get("name") == pod_claim.get("name"):
                recorded = entry.get("resourceClaimName")
                return (str(recorded) if recorded else None), True
        raise ErrClaimNotFound(
            f'pod "{meta.namespace(pod)}/{meta.name(pod)}": ResourceClaim not created yet'
        )
    raise ErrAPIUnsupported(
        f'pod "{meta.namespace(pod)}/{meta.name(pod)}", spec.resourceClaim '
        f'"{pod_claim.get("name", "")}": none of the supported fields are set'
    )


def is_for_pod(pod: Pod | Obj, claim: AnyResourceClaim | Obj) -> str | None:
    """None when the claim was created for the pod (same namespace, pod is controller owner);
    otherwise the error message."""
    ref = meta.controller_ref(claim)
    if (
        meta.namespace(claim) == meta.namespace(pod)
        and ref is not None
        and ref.get("uid") == meta.uid(pod)
    ):
        return None
    return (
        f"ResourceClaim {meta.namespace(claim)}/{meta.name(claim)} was not created for pod "
        f"{meta.namespace(pod)}/{meta.name(pod)} (pod is not owner)"
    )


def is_reserved_for_pod(pod: Pod | Obj, claim: AnyResourceClaim | Obj) -> bool:
    pod_uid = meta.uid(pod)
    return any(
        entry.get("uid") == pod_uid
        for entry in (claim.get("status") or {}).get("reservedFor") or []
    )


def is_allocated(claim: AnyResourceClaim | Obj) -> bool:
    return bool((claim.get("status") or {}).get("allocation"))


def can_be_reserved(claim: resourcev1alpha2.ResourceClaim | Obj) -> bool:
    """Shareable allocation, or nobody reserved yet. False for an unallocated claim."""
    status = claim.get("status") or {}
    allocation = status.get("allocation")
    if not allocation:
        return False
    return bool(allocation.get("shareable")) or not status.get("reservedFor")


def pod_reference(pod: Pod | Obj) -> Obj:
    """The `status.reservedFor` entry for a pod."""
    return {"resource": "pods", "name": meta.name(pod), "uid": meta.uid(pod)}


def pod_claim_names(pod: Pod | Obj) -> list[tuple[PodResourceClaim, str | None]]:
    """(pod claim, resolved name or None) for every pod claim that resolves without error.
    Pod claims whose name cannot be resolved yet are left out."""
    out: list[tuple[PodResourceClaim, str | None]] = []
    for pod_claim in meta.pod_claims(pod):
        try:
            claim_name, _ = name(pod, pod_claim)
        except ClaimNameError:
            continue
        out.append((pod_claim, claim_name))
    return out
