"""resource.k8s.io/v1alpha2 (the 1.28 mode): ResourceClass, ResourceClaim,
ResourceClaimTemplate and PodSchedulingContext, as the classic DRA code reads them."""

from __future__ import annotations

from typing import TypedDict

from draplane.api.types.core import NodeSelector
from draplane.api.types.meta import ObjectMeta
from draplane.api.types.resource import ResourceClaimConsumerReference


class ResourceClassParametersReference(TypedDict, total=False):
    apiGroup: str
    kind: str
    name: str
    namespace: str


class ResourceClass(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    driverName: str
    parametersRef: ResourceClassParametersReference
    suitableNodes: NodeSelector


class ResourceClaimParametersReference(TypedDict, total=False):
    apiGroup: str
    kind: str
    name: str


class ResourceClaimSpec(TypedDict, total=False):
    resourceClassName: str
    parametersRef: ResourceClaimParametersReference
    allocationMode: str


class ResourceHandle(TypedDict, total=False):
    driverName: str
    data: str


class AllocationResult(TypedDict, total=False):
    resourceHandles: list[ResourceHandle]
    availableOnNodes: NodeSelector
    shareable: bool


class ResourceClaimStatus(TypedDict, total=False):
    driverName: str
    allocation: AllocationResult
    reservedFor: list[ResourceClaimConsumerReference]
    deallocationRequested: bool


class ResourceClaim(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceClaimSpec
    status: ResourceClaimStatus


class ResourceClaimTemplateSpec(TypedDict, total=False):
    metadata: ObjectMeta
    spec: ResourceClaimSpec


class ResourceClaimTemplate(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceClaimTemplateSpec


class PodSchedulingContextSpec(TypedDict, total=False):
    selectedNode: str
    potentialNodes: list[str]


class ResourceClaimSchedulingStatus(TypedDict, total=False):
    name: str
    unsuitableNodes: list[str]


class PodSchedulingContextStatus(TypedDict, total=False):
    resourceClaims: list[ResourceClaimSchedulingStatus]


class PodSchedulingContext(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: PodSchedulingContextSpec
    status: PodSchedulingContextStatus
