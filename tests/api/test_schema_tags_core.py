"""Protobuf field numbers of the core/v1 schemas (and the discovery/v1, coordination/v1,
events.k8s.io/v1 and meta/v1 Condition structs served beside them) are upstream's
`generated.proto` (Kubernetes 1.36), by a sample of them and of the Go pointers. That every
field is numbered, and uniquely, is tests/apiserver/test_protobuf_kinds.py and
test_protobuf_field_numbers.py, over every served kind."""

from __future__ import annotations

import pytest

from draplane.api.schema import meta, schemas_for

CORE = "io.k8s.api.core.v1."
DISCOVERY = "io.k8s.api.discovery.v1."
COORDINATION = "io.k8s.api.coordination.v1."
EVENTS = "io.k8s.api.events.v1."

SPOT = [
    # (version, upstream message, field, tag, embedded)
    ("", "PodSpec", "volumes", 1, 0),
    ("", "PodSpec", "initContainers", 20, 0),
    ("", "PodSpec", "ephemeralContainers", 34, 0),
    ("", "PodSpec", "tolerations", 22, 0),
    ("", "PodSpec", "topologySpreadConstraints", 33, 0),
    ("", "PodSpec", "schedulingGates", 38, 0),
    ("", "PodSpec", "resourceClaims", 39, 0),
    ("", "PodStatus", "nominatedNodeName", 11, 0),
    ("", "PodStatus", "resourceClaimStatuses", 15, 0),
    ("1.36", "PodStatus", "extendedResourceClaimStatus", 18, 0),
    ("", "PodResourceClaim", "source", 2, 0),
    ("1.36", "PodResourceClaim", "resourceClaimName", 3, 0),
    ("1.36", "PodResourceClaim", "resourceClaimTemplateName", 4, 0),
    ("", "ClaimSource", "resourceClaimTemplateName", 2, 0),
    ("", "Container", "envFrom", 19, 0),
    ("", "Container", "resources", 8, 0),
    ("", "Container", "resizePolicy", 23, 0),
    ("", "Container", "restartPolicy", 24, 0),
    ("", "Container", "startupProbe", 22, 0),
    ("", "ContainerStatus", "allocatedResources", 10, 0),
    ("", "EphemeralContainer", "tty", 18, 1),
    ("", "EphemeralContainer", "targetContainerName", 2, 0),
    ("", "ResourceRequirements", "claims", 3, 0),
    ("", "ResourceClaim", "name", 1, 0),
    ("", "Probe", "grpc", 4, 1),
    ("", "Probe", "terminationGracePeriodSeconds", 7, 0),
    ("", "SecurityContext", "seccompProfile", 11, 0),
    ("", "PodSecurityContext", "windowsOptions", 8, 0),
    ("", "ConfigMapKeySelector", "name", 1, 1),
    ("", "ConfigMapKeySelector", "key", 2, 0),
    ("", "VolumeMount", "mountPath", 3, 0),
    ("", "Volume", "hostPath", 1, 2),
    ("", "Volume", "persistentVolumeClaim", 10, 2),
    ("", "Volume", "projected", 26, 2),
    ("", "Volume", "ephemeral", 29, 2),
    ("", "NodeSpec", "podCIDRs", 7, 0),
    ("", "NodeSpec", "taints", 5, 0),
    ("", "NodeSpec", "externalID", 2, 0),
    ("", "NodeStatus", "volumesAttached", 10, 0),
    ("", "NamespaceCondition", "lastTransitionTime", 4, 0),
    ("", "ConfigMap", "immutable", 4, 0),
    ("", "Secret", "stringData", 4, 0),
    ("", "EndpointAddress", "targetRef", 2, 0),
    ("", "ServiceSpec", "clusterIPs", 18, 0),
    ("", "ServiceSpec", "ipFamilyPolicy", 17, 0),
    ("", "ServicePort", "appProtocol", 6, 0),
    ("", "Event", "reportingInstance", 15, 0),
    ("", "PersistentVolumeClaimSpec", "selector", 4, 0),
    ("", "discovery.v1.EndpointSlice", "addressType", 4, 0),
    ("", "discovery.v1.Endpoint", "hints", 8, 0),
    ("", "coordination.v1.LeaseSpec", "leaseTransitions", 5, 0),
    ("", "meta.v1.Condition", "observedGeneration", 3, 0),
    ("", "ResourceQuotaSpec", "scopeSelector", 3, 0),
    ("", "ResourceQuotaStatus", "used", 2, 0),
    ("", "ScopedResourceSelectorRequirement", "values", 3, 0),
    ("", "LimitRangeItem", "defaultRequest", 5, 0),
    ("", "LimitRangeItem", "maxLimitRequestRatio", 6, 0),
    ("", "events.v1.Event", "eventTime", 2, 0),
    ("", "events.v1.Event", "reportingController", 4, 0),
    ("", "events.v1.Event", "regarding", 8, 0),
    ("", "events.v1.Event", "note", 10, 0),
    ("", "events.v1.Event", "deprecatedSource", 12, 0),
    ("", "events.v1.Event", "deprecatedCount", 15, 0),
    ("", "events.v1.EventSeries", "lastObservedTime", 2, 0),
]


def _struct_name(message: str) -> str:
    if message.startswith("meta.v1."):
        return meta.META + message.removeprefix("meta.v1.")
    if message.startswith(("discovery.", "coordination.", "events.")):
        return "io.k8s.api." + message
    return CORE + message


@pytest.mark.parametrize(("version", "message", "name", "tag", "embedded"), SPOT)
def test_field_numbers_are_upstreams(
    version: str, message: str, name: str, tag: int, embedded: int
) -> None:
    fld = schemas_for(version).get(_struct_name(message)).by_name[name]
    assert (fld.tag, fld.embedded) == (tag, embedded)


POINTERS = [
    ("PodSpec", "terminationGracePeriodSeconds", True),
    ("PodSpec", "priority", True),
    ("PodSpec", "preemptionPolicy", True),
    ("PodSpec", "hostNetwork", False),
    ("Toleration", "tolerationSeconds", True),
    ("SecurityContext", "runAsUser", True),
    ("ConfigMapKeySelector", "optional", True),
    ("ContainerStatus", "started", True),
    ("ContainerStatus", "ready", False),
    ("ServiceSpec", "allocateLoadBalancerNodePorts", True),
    ("ServiceSpec", "externalTrafficPolicy", False),
    ("discovery.v1.EndpointConditions", "ready", True),
]


@pytest.mark.parametrize(("message", "name", "pointer"), POINTERS)
def test_go_pointer_scalars_are_marked(message: str, name: str, pointer: bool) -> None:
    assert schemas_for().get(_struct_name(message)).by_name[name].pointer is pointer
