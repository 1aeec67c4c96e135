"""core/v1 Pod as Kubernetes 1.36 serves it (the `1.36` mode's overrides, `model.override`).

Since 1.31 a `PodResourceClaim` names its ResourceClaim or ResourceClaimTemplate directly
(`resourceClaimName`, `resourceClaimTemplateName`; `ClaimSource` and `source` are gone), and
with DRAExtendedResource (beta, on in 1.36) `PodStatus` records the claim the scheduler created
for the pod's extended resources in `extendedResourceClaimStatus`. 1.28 keeps `pod.py`'s types.
"""

from __future__ import annotations

from draplane.api.schema.model import Arr, f, override, struct, structs
from draplane.api.schema.pod import CORE, POD_RESOURCE_CLAIM
from draplane.api.schema.podstatus import POD_STATUS

VERSION = "1.36"

override(
    VERSION,
    POD_RESOURCE_CLAIM,
    "References exactly one ResourceClaim, directly or through a ResourceClaimTemplate turned "
    "into a ResourceClaim for the pod, under a name containers refer to.",
    f("name", "string", "Name of this claim in the pod (a DNS label).", required=True, tag=1),
    f(
        "resourceClaimName",
        "string",
        "An existing ResourceClaim in the pod's namespace; exactly one of the two is set.",
        tag=3,
        pointer=True,
    ),
    f(
        "resourceClaimTemplateName",
        "string",
        "A ResourceClaimTemplate a claim is created from for the pod; exactly one of the two "
        "is set.",
        tag=4,
        pointer=True,
    ),
)
CONTAINER_EXTENDED_RESOURCE_REQUEST = struct(
    CORE + "ContainerExtendedResourceRequest",
    "Which request of the extended-resource claim serves one container's extended resource.",
    f(
        "containerName",
        "string",
        "Name of the container requesting the resource.",
        required=True,
        tag=1,
    ),
    f("resourceName", "string", "Name of the extended resource.", required=True, tag=2),
    f("requestName", "string", "Name of the request in the ResourceClaim.", required=True, tag=3),
)
POD_EXTENDED_RESOURCE_CLAIM_STATUS = struct(
    CORE + "PodExtendedResourceClaimStatus",
    "The ResourceClaim the scheduler created for the pod's extended resources backed by DRA.",
    f(
        "requestMappings",
        Arr(CONTAINER_EXTENDED_RESOURCE_REQUEST),
        "Container name and resource name to the claim's request name.",
        required=True,
        list_type="atomic",
        tag=1,
    ),
    f("resourceClaimName", "string", "Name of the ResourceClaim.", required=True, tag=2),
)
_BASE_STATUS = structs()[POD_STATUS]
override(
    VERSION,
    POD_STATUS,
    _BASE_STATUS.description,
    *_BASE_STATUS.fields,
    f(
        "extendedResourceClaimStatus",
        POD_EXTENDED_RESOURCE_CLAIM_STATUS,
        "The ResourceClaim backing the pod's extended resources (DRAExtendedResource).",
        tag=18,
    ),
)
