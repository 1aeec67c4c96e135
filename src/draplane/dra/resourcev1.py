"""The resource.k8s.io/v1 kinds the structured mode of DynamicResources reads.

Equal (frozen dataclasses) to the `draplane.api.kinds` constants of the same names that the 1.36
mode serves, so listers keyed by either find the same informer.
"""

from __future__ import annotations

from draplane.api.kinds import RESOURCE_GROUP, ResourceType
from draplane.api.meta import Obj

DEVICE_CLASSES = ResourceType(
    RESOURCE_GROUP, "v1", "deviceclasses", "DeviceClass", False, "deviceclass"
)
RESOURCE_CLAIMS_V1 = ResourceType(
    RESOURCE_GROUP, "v1", "resourceclaims", "ResourceClaim", True, "resourceclaim", (), ("status",)
)
RESOURCE_CLAIM_TEMPLATES_V1 = ResourceType(
    RESOURCE_GROUP,
    "v1",
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    True,
    "resourceclaimtemplate",
)
RESOURCE_SLICES = ResourceType(
    RESOURCE_GROUP, "v1", "resourceslices", "ResourceSlice", False, "resourceslice"
)

DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
"""The finalizer the scheduler adds before it writes an allocation (resourceapi.Finalizer)."""

RESERVED_FOR_MAX_SIZE = 256
"""resource.k8s.io/v1 ResourceClaimReservedForMaxSize."""


def can_be_reserved(claim: Obj) -> bool:
    """v1 claims are always shareable, up to RESERVED_FOR_MAX_SIZE consumers."""
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX_SIZE
