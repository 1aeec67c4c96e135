"""Typed shapes of the objects draplane's components read: TypedDicts over the JSON dicts.

Objects stay plain dicts exactly as on the wire (`draplane.api.meta.Obj`); these TypedDicts
(total=False, the Go types' JSON field names) only tell mypy which keys exist and what they
hold, at no run-time cost. Where dicts come in untyped (an informer, a lister, a response), the
reader casts once: `pod = cast(Pod, obj)`. `tests/api/test_types.py` checks every key against
the structs of `draplane.api.schema`, so the two cannot drift.

The resource.k8s.io/v1 kinds are here by their Go names; v1alpha2's (the 1.28 mode) are in
`draplane.api.types.resourcev1alpha2`. `AnyResourceClaim` is a claim of either version, for the
predicates both modes share.
"""

from __future__ import annotations

from draplane.api.types import resourcev1alpha2
from draplane.api.types.core import (
    ClaimSource,
    Container,
    ContainerExtendedResourceRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    Pod,
    PodCondition,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    Taint,
    Toleration,
)
from draplane.api.types.meta import Condition, LabelSelector, ObjectMeta, OwnerReference
from draplane.api.types.resource import (
    AllocatedDeviceStatus,
    AllocationResult,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    NetworkDeviceData,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

AnyResourceClaim = ResourceClaim | resourcev1alpha2.ResourceClaim
"""A ResourceClaim of resource.k8s.io/v1 or v1alpha2."""

__all__ = [
    "AllocatedDeviceStatus",
    "AllocationResult",
    "AnyResourceClaim",
    "ClaimSource",
    "Condition",
    "Container",
    "ContainerExtendedResourceRequest",
    "CounterSet",
    "Device",
    "DeviceAllocationConfiguration",
    "DeviceAllocationResult",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaim",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceClassSpec",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceToleration",
    "ExactDeviceRequest",
    "LabelSelector",
    "NetworkDeviceData",
    "Node",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OpaqueDeviceConfiguration",
    "OwnerReference",
    "Pod",
    "PodCondition",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSpec",
    "PodStatus",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateSpec",
    "ResourcePool",
    "ResourceSlice",
    "ResourceSliceSpec",
    "Taint",
    "Toleration",
    "resourcev1alpha2",
]
