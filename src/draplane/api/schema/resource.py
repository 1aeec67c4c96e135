"""resource.k8s.io/v1alpha2 (Kubernetes 1.28): ResourceClass, ResourceClaim,
ResourceClaimTemplate and PodSchedulingContext."""

from __future__ import annotations

from draplane.api.schema.affinity import NODE_SELECTOR
from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, f, struct

RES = "io.k8s.api.resource.v1alpha2."

CLASS_PARAMETERS_REFERENCE = struct(
    RES + "ResourceClassParametersReference",
    "The object holding a class's driver-specific parameters.",
    f("apiGroup", "string", "API group of the object; empty for the core group."),
    f("kind", "string", "Kind of the object.", required=True),
    f("name", "string", "Name of the object.", required=True),
    f("namespace", "string", "Namespace of the object; empty for cluster-scoped objects."),
)
RESOURCE_CLASS = struct(
    RES + "ResourceClass",
    "A kind of resource a driver allocates; claims name it.",
    *type_meta(),
    metadata_field(),
    f("driverName", "string", "The driver that handles claims of this class.", required=True),
    f("parametersRef", CLASS_PARAMETERS_REFERENCE, "Driver parameters of the class."),
    f("suitableNodes", NODE_SELECTOR, "Nodes where claims of this class can be allocated."),
)
CLAIM_PARAMETERS_REFERENCE = struct(
    RES + "ResourceClaimParametersReference",
    "The object, in the claim's namespace, holding a claim's driver parameters.",
    f("apiGroup", "string", "API group of the object; empty for the core group."),
    f("kind", "string", "Kind of the object.", required=True),
    f("name", "string", "Name of the object.", required=True),
)
CLAIM_SPEC = struct(
    RES + "ResourceClaimSpec",
    "What a claim asks for.",
    f("resourceClassName", "string", "The ResourceClass to allocate from.", required=True),
    f("parametersRef", CLAIM_PARAMETERS_REFERENCE, "Driver parameters of the claim."),
    f(
        "allocationMode",
        "string",
        "Allocate at once or when the first pod using the claim is scheduled.",
        enum=("Immediate", "WaitForFirstConsumer"),
    ),
)
RESOURCE_HANDLE = struct(
    RES + "ResourceHandle",
    "Data a driver stored at allocation for its kubelet plugin.",
    f("driverName", "string", "The driver whose plugin gets the data."),
    f("data", "string", "Opaque data, up to 16 KiB."),
)
ALLOCATION_RESULT = struct(
    RES + "AllocationResult",
    "What was allocated to a claim.",
    f(
        "resourceHandles",
        Arr(RESOURCE_HANDLE),
        "Data for the kubelet plugins, one entry per driver.",
        list_type="atomic",
    ),
    f("availableOnNodes", NODE_SELECTOR, "Nodes where the allocation can be used."),
    f("shareable", "boolean", "Several pods may use the claim at once."),
)
CONSUMER_REFERENCE = struct(
    RES + "ResourceClaimConsumerReference",
    "An object (usually a pod) that uses a claim.",
    f("apiGroup", "string", "API group of the consumer; empty for the core group."),
    f("resource", "string", "Resource of the consumer, e.g. pods.", required=True),
    f("name", "string", "Name of the consumer.", required=True),
    f("uid", "string", "UID of the consumer.", required=True),
)
CLAIM_STATUS = struct(
    RES + "ResourceClaimStatus",
    "Whether and how a claim was allocated, and who uses it.",
    f("driverName", "string", "The driver that handles the claim, copied from the class."),
    f("allocation", ALLOCATION_RESULT, "Set once the claim is allocated."),
    f(
        "reservedFor",
        Arr(CONSUMER_REFERENCE),
        "The consumers the claim is reserved for.",
        list_type="map",
        map_keys=("uid",),
    ),
    f("deallocationRequested", "boolean", "The driver must deallocate the claim."),
)
RESOURCE_CLAIM = struct(
    RES + "ResourceClaim",
    "A request for a resource, allocated by the class's driver.",
    *type_meta(),
    metadata_field(),
    f("spec", CLAIM_SPEC, "What is asked for; immutable.", required=True),
    f("status", CLAIM_STATUS, "Allocation and reservation state.", emit=True),
)
CLAIM_TEMPLATE_SPEC = struct(
    RES + "ResourceClaimTemplateSpec",
    "The claims created from a template.",
    f(
        "metadata",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "Labels and annotations copied to each claim.",
        emit=True,
    ),
    f("spec", CLAIM_SPEC, "Spec of each claim.", required=True),
)
RESOURCE_CLAIM_TEMPLATE = struct(
    RES + "ResourceClaimTemplate",
    "A template a ResourceClaim is created from for each pod that names it.",
    *type_meta(),
    metadata_field(),
    f("spec", CLAIM_TEMPLATE_SPEC, "The claims to create.", required=True),
)
CLAIM_SCHEDULING_STATUS = struct(
    RES + "ResourceClaimSchedulingStatus",
    "A driver's answer about one claim of the pod.",
    f("name", "string", "Name of the entry in pod.spec.resourceClaims."),
    f(
        "unsuitableNodes",
        Arr("string"),
        "Potential nodes where the claim cannot be allocated.",
        list_type="set",
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
            f("selectedNode", "string", "The node the claims should be allocated for."),
            f(
                "potentialNodes",
                Arr("string"),
                "Nodes that might run the pod.",
                list_type="set",
            ),
        ),
        "Written by the scheduler.",
        required=True,
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
            ),
        ),
        "Written by the drivers.",
        emit=True,
    ),
)
serve("resource.k8s.io", "v1alpha2", "ResourceClass", RESOURCE_CLASS)
serve("resource.k8s.io", "v1alpha2", "ResourceClaim", RESOURCE_CLAIM)
serve("resource.k8s.io", "v1alpha2", "ResourceClaimTemplate", RESOURCE_CLAIM_TEMPLATE)
serve("resource.k8s.io", "v1alpha2", "PodSchedulingContext", POD_SCHEDULING_CONTEXT)
