"""Extended resources backed by DRA (DRAExtendedResource, beta and on in 1.36): which container
requests a DeviceClass can serve, and the claim the scheduler makes for them.

A DeviceClass serves the extended resource named by its `spec.extendedResourceName` and, for
every class, `deviceclass.resource.kubernetes.io/<class>`. A container's
`resources.requests[<name>]` of such a resource becomes one ExactCount request of the pod's
extended-resource claim, named `container-<i>-request-<j>` (i: the container's index over init
containers then containers; j: the resource's index in the container's sorted request names), as
the scheduler's DynamicResources plugin builds it; `pod.status.extendedResourceClaimStatus`
records the claim and the mapping, which the kubelet and the node authorizer follow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from draplane.api import meta
from draplane.api.meta import Obj, ObjLike
from draplane.api.quantity import parse_quantity
from draplane.api.types import (
    ContainerExtendedResourceRequest,
    DeviceClass,
    DeviceRequest,
    Pod,
    PodResourceClaim,
)

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
SPECIAL_CLAIM_NAME = "<extended-resources>"
"""The name of the in-memory claim and of its pod-claim entry in the components' views."""


@dataclass(frozen=True, slots=True)
class ExtendedRequest:
    """One container's request of one DRA-backed extended resource."""

    container_name: str
    resource_name: str
    request_name: str
    device_class: str
    count: int


def class_mapping(classes: Iterable[DeviceClass | Obj]) -> dict[str, str]:
    """Extended resource name -> DeviceClass name. Several classes naming one resource: the one
    created last wins (ties: the first name)."""
    explicit: dict[str, tuple[str, str]] = {}
    out: dict[str, str] = {}
    for cls in classes:
        md = meta.metadata(cls)
        name = str(md.get("name") or "")
        if not name:
            continue
        out[IMPLICIT_PREFIX + name] = name
        resource = (cls.get("spec") or {}).get("extendedResourceName")
        if isinstance(resource, str) and resource:
            created = str(md.get("creationTimestamp") or "")
            current = explicit.get(resource)
            if current is None or (created, current[1]) > (current[0], name):
                explicit[resource] = (created, name)
    out.update((resource, name) for resource, (_, name) in explicit.items())
    return out


def _count(value: object) -> int:
    try:
        quantity = parse_quantity(str(value))
    except ValueError:
        return 0
    return int(quantity) if quantity == int(quantity) and quantity > Fraction(0) else 0


def extended_requests(pod: Pod | Obj, mapping: Mapping[str, str]) -> list[ExtendedRequest]:
    """The pod's container requests a DeviceClass in `mapping` serves, sorted by request name
    (createRequestsAndMappings); whole positive quantities only."""
    spec = meta.pod_spec(pod)
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    out: list[ExtendedRequest] = []
    for i, container in enumerate(containers):
        requests = (container.get("resources") or {}).get("requests") or {}
        keys = sorted(requests)
        for j, resource in enumerate(keys):
            device_class = mapping.get(resource)
            count = _count(requests[resource]) if device_class else 0
            if device_class and count:
                out.append(
                    ExtendedRequest(
                        str(container.get("name") or ""),
                        resource,
                        f"container-{i}-request-{j}",
                        device_class,
                        count,
                    )
                )
    out.sort(key=lambda r: r.request_name)
    return out


def device_requests(requests: Iterable[ExtendedRequest]) -> list[DeviceRequest]:
    """`spec.devices.requests` of the extended-resource claim."""
    return [
        {
            "name": r.request_name,
            "exactly": {
                "deviceClassName": r.device_class,
                "allocationMode": "ExactCount",
                "count": r.count,
            },
        }
        for r in requests
    ]


def request_mappings(
    requests: Iterable[ExtendedRequest],
) -> list[ContainerExtendedResourceRequest]:
    """`status.extendedResourceClaimStatus.requestMappings`."""
    return [
        {
            "containerName": r.container_name,
            "resourceName": r.resource_name,
            "requestName": r.request_name,
        }
        for r in requests
    ]


def claim_name(pod: Pod | Obj) -> str | None:
    """The pod's extended-resource claim as its status records it."""
    status = meta.pod_status(pod).get("extendedResourceClaimStatus") or {}
    name = status.get("resourceClaimName")
    return str(name) if name else None


def pod_claim(pod: Pod | Obj) -> PodResourceClaim | None:
    """The extended-resource claim as a pod-claim entry (`{name, resourceClaimName}`), for
    components that walk a pod's claims: the kubelet prepares it, the node authorizer lets the
    node read it."""
    name = claim_name(pod)
    return {"name": SPECIAL_CLAIM_NAME, "resourceClaimName": name} if name else None


def is_extended_claim(claim: ObjLike) -> bool:
    return meta.annotations(claim).get(EXTENDED_CLAIM_ANNOTATION) == "true"
