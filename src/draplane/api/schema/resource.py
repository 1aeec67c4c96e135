"""resource.k8s.io/v1alpha2 (Kubernetes 1.28): ResourceClass, ResourceClaim,
ResourceClaimTemplate and PodSchedulingContext. Field numbers (`tag`) are those of upstream's
resource/v1alpha2/generated.proto of 1.28-1.30 (ResourceClaimConsumerReference skips 2)."""

from __future__ import annotations

from draplane.api.schema.affinity import NODE_SELECTOR
from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, f, struct

RES = "io.k8s.api.resource.v1alpha2."

CLASS_PARAMETERS_REFERENCE = struct(
    RES + "ResourceClassParametersReference",
    "The object holding a class's driver-specific parameters.",
    f("apiGroup", "string", "API group of the object; empty for the core group.", tag=1),
    f("kind", "string", "Kind of the object.", required=True, tag=2),
    f("name", "string", "Name of the object.", required=True, tag=3),
    f("namespace", "string", "Namespace of the object; empty for cluster-scoped.", tag=4),
)
RESOURCE_CLASS = struct(
    RES + "ResourceClass",
    "A kind of resource a driver allocates; claims name it.",
    *type_meta(),
    metadata_field(),
    f(
        "driverName",
        "string",
        "The driver that handles claims of this class.",
        required=True,
        tag=2,
    ),
    f("parametersRef", CLASS_PARAMETERS_REFERENCE, "Driver parameters of the class.", tag=3),
    f(
        "suitableNodes",
        NODE_SELECTOR,
        "Nodes where claims of this class can be allocated.",
        tag=4,
    ),
)
CLAIM_PARAMETERS_REFERENCE = struct(
    RES + "ResourceClaimParametersReference",
    "The object, in the claim's namespace, holding a claim's driver parameters.",
    f("apiGroup", "string", "API group of the object; empty for the core group.", tag=1),
    f("kind", "string", "Kind of the object.", required=True, tag=2),
    f("name", "string", "Name of the object.", required=True, tag=3),
)
CLAIM_SPEC = struct(
    RES + "ResourceClaimSpec",
    "What a claim asks for.",
    f(
        "resourceClassName",
        "string",
        "The ResourceClass to allocate from.",
        required=True,
        tag=1,
    ),
    f("parametersRef", CLAIM_PARAMETERS_REFERENCE, "Driver parameters of the claim.", tag=2),
    f(
        "allocationMode",
        "string",
        "Allocate at once or when the first pod using the claim is scheduled.",
        enum=("Immediate", "WaitForFirstConsumer"),
        tag=3,
    ),
)
RESOURCE_HANDLE = struct(
    RES + "ResourceHandle",
    "Data a driver stored at allocation for its kubelet plugin.",
    f("driverName", "string", "The driver whose plugin gets the data.", tag=1),
    f("data", "string", "Opaque data, up to 16 KiB.", tag=2),
)
ALLOCATION_RESULT = struct(
    RES + "AllocationResult",
    "What was allocated to a claim.",
    f(
        "resourceHandles",
        Arr(RESOURCE_HANDLE),
        "Data for the kubelet plugins, one entry per driver.",
        list_type="atomic",
        tag=1,
    ),
    f("availableOnNodes", NODE_SELECTOR, "Nodes where the allocation can be used.", tag=2),
    f("shareable", "boolean", "Several pods may use the claim at once.", tag=3),
)
CONSUMER_REFERENCE = struct(
    RES + "ResourceClaimConsumerReference",
    "An object (usually a pod) that uses a claim.",
    f("apiGroup", "string", "API group of the consumer; empty for the core group.", tag=1),
    f("resource", "string", "Resource of the consumer, e.g. pods.", required=True, tag=3),
    f("name", "string", "Name of the consumer.", required=True, tag=4),
    f("uid", "string", "UID of the consumer.", required=True, tag=5),
)
CLAIM_STATUS = struct(
    RES + "ResourceClaimStatus",
    "Whether and how a claim was allocated, and who uses it.",
    f(
        "driverName",
        "string",
        "The driver that handles the claim, copied from the class.",
        tag=1,
    ),
    f("allocation", ALLOCATION_RESULT, "Set once the claim is allocated.", tag=2),
    f(
        "reservedFor",
        Arr(CONSUMER_REFERENCE),
        "The consumers the claim is reserved for.",
        list_type="map",
        map_keys=("uid",),
        tag=3,
    ),
    f("deallocationRequested", "boolean", "The driver must deallocate the claim.", tag=4),
)
RESOURCE_CLAIM = struct(
    RES + "ResourceClaim",
    "A request for a resource, allocated by the class's driver.",
    *type_meta(),
    metadata_field(),
    f("spec", CLAIM_SPEC, "What is asked for; immutable.", required=True, tag=2),
    f("status", CLAIM_STATUS, "Allocation and reservation state.", emit=True, tag=3),
)
CLAIM_TEMPLATE_SPEC = struct(
    RES + "ResourceClaimTemplateSpec",
    "The claims created from a template.",
    f(
        "metadata",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "Labels and annotations copied to each claim.",
        emit=True,
        tag=1,
    ),
    f("spec", CLAIM_SPEC, "Spec of each claim.", required=True, tag=2),
)
RESOURCE_CLAIM_TEMPLATE = struct(
    RES + "ResourceClaimTemplate",
    "A template a ResourceClaim is created from for each pod that names it.",
    *type_meta(),
    metadata_field(),
    f("spec", CLAIM_TEMPLATE_SPEC, "The claims to create.", required=True, tag=2),
)
CLAIM_SCHEDULING_STATUS = struct(
    RES + "ResourceClaimSchedulingStatus",
    "A driver's answer about one claim of the pod.",
    f("name", "string", "Name of the entry in pod.spec.resourceClaims.", tag=1),
    f(
        "unsuitableNodes",
        Arr("string"),
        "Potential nodes where the claim cannot be allocated.",
        list_type="set",
        tag=2,
    ),
)
POD_SCHEDULING_CONTEXT = struct(
    RES + "PodSchedulingContext",
    "Where the scheduler and the drivers negotiate a node for a pod with claims.",
    *type_meta(),
    metadata_field(),
    f(
        "spec",
        struct(
            RES + "PodSchedulingContextSpec",
            "The scheduler's side.",
            f("selectedNode", "string", "The node the claims should be allocated for.", tag=1),
            f(
                "potentialNodes",
                Arr("string"),
                "Nodes that might run the pod.",
                list_type="set",
                tag=2,
            ),
        ),
        "Written by the scheduler.",
        required=True,
        tag=2,
    ),
    f(
        "status",
        struct(
            RES + "PodSchedulingContextStatus",
            "The drivers' side.",
            f(
                "resourceClaims",
                Arr(CLAIM_SCHEDULING_STATUS),
                "One entry per claim that waits for the first consumer.",
                list_type="map",
                map_keys=("name",),
                tag=1,
            ),
        ),
        "Written by the drivers.",
        emit=True,
        tag=3,
    ),
)
serve("resource.k8s.io", "v1alpha2", "ResourceClass", RESOURCE_CLASS)
serve("resource.k8s.io", "v1alpha2", "ResourceClaim", RESOURCE_CLAIM)
serve("resource.k8s.io", "v1alpha2", "ResourceClaimTemplate", RESOURCE_CLAIM_TEMPLATE)
serve("resource.k8s.io", "v1alpha2", "PodSchedulingContext", POD_SCHEDULING_CONTEXT)
