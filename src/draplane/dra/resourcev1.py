"""resource.k8s.io/v1 constants and predicates the structured mode's scheduler plugin and claim
controller share (the kinds themselves are `draplane.api.kinds`'s, re-exported)."""

from __future__ import annotations

from draplane.api.kinds import (
    DEVICE_CLASSES,
    RESOURCE_CLAIM_TEMPLATES_V1,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
)
from draplane.api.meta import Obj
from draplane.api.types import ResourceClaim

__all__ = [
    "DELETE_PROTECTION_FINALIZER",
    "DEVICE_CLASSES",
    "RESERVED_FOR_MAX_SIZE",
    "RESOURCE_CLAIMS_V1",
    "RESOURCE_CLAIM_TEMPLATES_V1",
    "RESOURCE_SLICES",
    "can_be_reserved",
]

DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
"""The finalizer the scheduler adds before it writes an allocation (resourceapi.Finalizer)."""

RESERVED_FOR_MAX_SIZE = 256
"""resource.k8s.io/v1 ResourceClaimReservedForMaxSize."""


def can_be_reserved(claim: ResourceClaim | Obj) -> bool:
    """v1 claims are always shareable, up to RESERVED_FOR_MAX_SIZE consumers."""
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX_SIZE
