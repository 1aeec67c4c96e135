"""DRA helpers shared by every component (k8s.io/dynamic-resource-allocation/resourceclaim)."""

from draplane.dra.claims import (
    ANNOTATION_POD_CLAIM_NAME,
    DRIVER_FINALIZER_SUFFIX,
    POD_SCHEDULING_NODE_LIST_MAX,
    RESERVED_FOR_MAX,
    ClaimNameError,
    ErrAPIUnsupported,
    ErrClaimNotFound,
    can_be_reserved,
    is_allocated,
    is_for_pod,
    is_reserved_for_pod,
    name,
    pod_claim_names,
    pod_reference,
)

__all__ = [
    "ANNOTATION_POD_CLAIM_NAME",
    "DRIVER_FINALIZER_SUFFIX",
    "POD_SCHEDULING_NODE_LIST_MAX",
    "RESERVED_FOR_MAX",
    "ClaimNameError",
    "ErrAPIUnsupported",
    "ErrClaimNotFound",
    "can_be_reserved",
    "is_allocated",
    "is_for_pod",
    "is_reserved_for_pod",
    "name",
    "pod_claim_names",
    "pod_reference",
]
