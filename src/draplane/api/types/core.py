"""core/v1 shapes the scheduler, the DRA code and the simulated kubelet read: Pod (PodSpec,
Container, PodStatus, PodResourceClaim, PodResourceClaimStatus) and Node (NodeSpec, NodeStatus),
with the scheduling constraints they carry (Toleration, Taint, NodeSelector, NodeAffinity).

`PodResourceClaim` has both shapes draplane serves: `source` (1.28) and the fields directly on
the entry (core/v1 since 1.31, the 1.36 mode); `PodStatus.extendedResourceClaimStatus` is 1.36's.
Fields draplane does not read stay out (a TypedDict need not list every key of the object).
"""

from __future__ import annotations

from typing import Any, TypedDict

from draplane.api.types.meta import ObjectMeta


class NodeSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: list[str]


class NodeSelectorTerm(TypedDict, total=False):
    matchExpressions: list[NodeSelectorRequirement]
    matchFields: list[NodeSelectorRequirement]


class NodeSelector(TypedDict, total=False):
    nodeSelectorTerms: list[NodeSelectorTerm]


class PreferredSchedulingTerm(TypedDict, total=False):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(TypedDict, total=False):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector
    preferredDuringSchedulingIgnoredDuringExecution: list[PreferredSchedulingTerm]


class Affinity(TypedDict, total=False):
    nodeAffinity: NodeAffinity
    podAffinity: dict[str, Any]
    podAntiAffinity: dict[str, Any]


class Toleration(TypedDict, total=False):
    key: str
    operator: str
    value: str
    effect: str
    tolerationSeconds: int


class Taint(TypedDict, total=False):
    key: str
    value: str
    effect: str
    timeAdded: str | None


class ResourceClaim(TypedDict, total=False):
    """A container's use of one of the pod's claims (core/v1 ResourceClaim, not the DRA kind)."""

    name: str


class ResourceRequirements(TypedDict, total=False):
    limits: dict[str, str]
    requests: dict[str, str]
    claims: list[ResourceClaim]


class Container(TypedDict, total=False):
    name: str
    image: str
    command: list[str]
    args: list[str]
    env: list[dict[str, Any]]
    resources: ResourceRequirements
    restartPolicy: str


class ClaimSource(TypedDict, total=False):
    resourceClaimName: str
    resourceClaimTemplateName: str


class PodResourceClaim(TypedDict, total=False):
    name: str
    source: ClaimSource
    resourceClaimName: str
    resourceClaimTemplateName: str


class PodSchedulingGate(TypedDict, total=False):
    name: str


class PodReadinessGate(TypedDict, total=False):
    conditionType: str


class PodSpec(TypedDict, total=False):
    volumes: list[dict[str, Any]]
    initContainers: list[Container]
    containers: list[Container]
    restartPolicy: str
    terminationGracePeriodSeconds: int
    nodeSelector: dict[str, str]
    serviceAccountName: str
    nodeName: str
    affinity: Affinity
    schedulerName: str
    tolerations: list[Toleration]
    priorityClassName: str
    priority: int
    preemptionPolicy: str
    overhead: dict[str, str]
    readinessGates: list[PodReadinessGate]
    schedulingGates: list[PodSchedulingGate]
    resourceClaims: list[PodResourceClaim]


class PodCondition(TypedDict, total=False):
    type: str
    status: str
    lastProbeTime: str | None
    lastTransitionTime: str | None
    reason: str
    message: str


class PodResourceClaimStatus(TypedDict, total=False):
    name: str
    resourceClaimName: str | None


class ContainerExtendedResourceRequest(TypedDict, total=False):
    containerName: str
    resourceName: str
    requestName: str


class PodExtendedResourceClaimStatus(TypedDict, total=False):
    requestMappings: list[ContainerExtendedResourceRequest]
    resourceClaimName: str


class PodStatus(TypedDict, total=False):
    phase: str
    conditions: list[PodCondition]
    message: str
    reason: str
    nominatedNodeName: str
    hostIP: str
    podIP: str
    startTime: str | None
    initContainerStatuses: list[dict[str, Any]]
    containerStatuses: list[dict[str, Any]]
    qosClass: str
    resourceClaimStatuses: list[PodResourceClaimStatus]
    extendedResourceClaimStatus: PodExtendedResourceClaimStatus


class Pod(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: PodSpec
    status: PodStatus


class NodeSpec(TypedDict, total=False):
    podCIDR: str
    providerID: str
    unschedulable: bool
    taints: list[Taint]


class NodeCondition(TypedDict, total=False):
    type: str
    status: str
    lastHeartbeatTime: str | None
    lastTransitionTime: str | None
    reason: str
    message: str


class NodeAddress(TypedDict, total=False):
    type: str
    address: str


class NodeStatus(TypedDict, total=False):
    capacity: dict[str, str]
    allocatable: dict[str, str]
    phase: str
    conditions: list[NodeCondition]
    addresses: list[NodeAddress]
    daemonEndpoints: dict[str, Any]
    nodeInfo: dict[str, Any]


class Node(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: NodeSpec
    status: NodeStatus
