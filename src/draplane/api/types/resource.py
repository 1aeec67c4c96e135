"""resource.k8s.io/v1 (the 1.36 mode): DeviceClass, ResourceClaim, ResourceClaimTemplate and
ResourceSlice, as the structured allocator, the scheduler plugin, the kubelet and the example
driver read them. v1beta2 has the same shape; v1beta1 (requests flat, devices under `basic`) is
converted to v1 before these readers see it."""

from __future__ import annotations

import builtins
from typing import Any, TypedDict

from draplane.api.types.core import NodeSelector
from draplane.api.types.meta import Condition, ObjectMeta


class CELDeviceSelector(TypedDict, total=False):
    expression: str


class DeviceSelector(TypedDict, total=False):
    cel: CELDeviceSelector


class OpaqueDeviceConfiguration(TypedDict, total=False):
    driver: str
    parameters: Any


class DeviceClassConfiguration(TypedDict, total=False):
    opaque: OpaqueDeviceConfiguration


class DeviceClassSpec(TypedDict, total=False):
    selectors: list[DeviceSelector]
    config: list[DeviceClassConfiguration]
    extendedResourceName: str


class DeviceClass(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: DeviceClassSpec


class DeviceToleration(TypedDict, total=False):
    key: str
    operator: str
    value: str
    effect: str
    tolerationSeconds: int


class CapacityRequirements(TypedDict, total=False):
    requests: dict[str, str]


class ExactDeviceRequest(TypedDict, total=False):
    deviceClassName: str
    selectors: list[DeviceSelector]
    allocationMode: str
    count: int
    adminAccess: bool
    tolerations: list[DeviceToleration]
    capacity: CapacityRequirements


class DeviceSubRequest(TypedDict, total=False):
    name: str
    deviceClassName: str
    selectors: list[DeviceSelector]
    allocationMode: str
    count: int
    tolerations: list[DeviceToleration]
    capacity: CapacityRequirements


class DeviceRequest(TypedDict, total=False):
    name: str
    exactly: ExactDeviceRequest
    firstAvailable: list[DeviceSubRequest]


class DeviceConstraint(TypedDict, total=False):
    requests: list[str]
    matchAttribute: str
    distinctAttribute: str


class DeviceClaimConfiguration(TypedDict, total=False):
    requests: list[str]
    opaque: OpaqueDeviceConfiguration


class DeviceClaim(TypedDict, total=False):
    requests: list[DeviceRequest]
    constraints: list[DeviceConstraint]
    config: list[DeviceClaimConfiguration]


class ResourceClaimSpec(TypedDict, total=False):
    devices: DeviceClaim


class DeviceRequestAllocationResult(TypedDict, total=False):
    request: str
    driver: str
    pool: str
    device: str
    adminAccess: bool
    tolerations: list[DeviceToleration]
    bindingConditions: list[str]
    bindingFailureConditions: list[str]
    shareID: str
    consumedCapacity: dict[str, str]


class DeviceAllocationConfiguration(TypedDict, total=False):
    source: str
    requests: list[str]
    opaque: OpaqueDeviceConfiguration


class DeviceAllocationResult(TypedDict, total=False):
    results: list[DeviceRequestAllocationResult]
    config: list[DeviceAllocationConfiguration]


class AllocationResult(TypedDict, total=False):
    devices: DeviceAllocationResult
    nodeSelector: NodeSelector
    allocationTimestamp: str | None


class ResourceClaimConsumerReference(TypedDict, total=False):
    """A consumer of a claim; v1alpha2's ResourceClaimConsumerReference has the same fields."""

    apiGroup: str
    resource: str
    name: str
    uid: str


class NetworkDeviceData(TypedDict, total=False):
    interfaceName: str
    ips: list[str]
    hardwareAddress: str


class AllocatedDeviceStatus(TypedDict, total=False):
    driver: str
    pool: str
    device: str
    shareID: str
    conditions: list[Condition]
    data: Any
    networkData: NetworkDeviceData


class ResourceClaimStatus(TypedDict, total=False):
    allocation: AllocationResult
    reservedFor: list[ResourceClaimConsumerReference]
    devices: list[AllocatedDeviceStatus]


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


class Counter(TypedDict, total=False):
    value: str


class CounterSet(TypedDict, total=False):
    name: str
    counters: dict[str, Counter]


class DeviceTaint(TypedDict, total=False):
    key: str
    value: str
    effect: str
    timeAdded: str | None


class DeviceAttribute(TypedDict, total=False):
    """One attribute value; exactly one member is set."""

    int: builtins.int
    bool: builtins.bool
    string: str
    version: str


class CapacityRequestPolicyRange(TypedDict, total=False):
    min: str
    max: str
    step: str


class CapacityRequestPolicy(TypedDict, total=False):
    default: str
    validValues: list[str]
    validRange: CapacityRequestPolicyRange


class DeviceCapacity(TypedDict, total=False):
    value: str
    requestPolicy: CapacityRequestPolicy


class DeviceCounterConsumption(TypedDict, total=False):
    counterSet: str
    counters: dict[str, Counter]


class Device(TypedDict, total=False):
    name: str
    attributes: dict[str, DeviceAttribute]
    capacity: dict[str, DeviceCapacity]
    consumesCounters: list[DeviceCounterConsumption]
    nodeName: str
    nodeSelector: NodeSelector
    allNodes: bool
    taints: list[DeviceTaint]
    bindsToNode: bool
    bindingConditions: list[str]
    bindingFailureConditions: list[str]
    allowMultipleAllocations: bool


class ResourcePool(TypedDict, total=False):
    name: str
    generation: int
    resourceSliceCount: int


class ResourceSliceSpec(TypedDict, total=False):
    driver: str
    pool: ResourcePool
    nodeName: str
    nodeSelector: NodeSelector
    allNodes: bool
    devices: list[Device]
    perDeviceNodeSelection: bool
    sharedCounters: list[CounterSet]


class ResourceSlice(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceSliceSpec
