"""core/v1 fields Kubernetes 1.36 serves beyond 1.28's types (the `1.36` mode, `model.extend`).

Containers: `resources.claims[].request` (one request of a claim, DRA 1.32), `lifecycle.sleep`
(PodLifecycleSleepAction) and `lifecycle.stopSignal`, a volume mount's `recursiveReadOnly`.
Pods: pod-level `resources` (PodLevelResources), `hostnameOverride`, an affinity term's
`matchLabelKeys`/`mismatchLabelKeys`, the security context's `supplementalGroupsPolicy` and
`seLinuxChangePolicy`; in the status `observedGeneration` (also per condition), the pod-level
`allocatedResources`/`resources` and per container `volumeMounts`, `user`,
`allocatedResourcesStatus` (device health, ResourceHealthStatus) and `stopSignal`. Nodes: the
runtime handlers and features, swap. Also the AppArmor profiles, a Service's
`trafficDistribution` and load balancer `ipMode`, a PVC's `volumeAttributesClassName`, and an
access review's field and label selectors (AuthorizeWithSelectors; RBAC ignores them), a Job's
`managedBy` (the Job controller leaves Jobs of other managers alone). Field
numbers are upstream's `generated.proto`; 1.28 keeps the base modules' types.
"""

from __future__ import annotations

from draplane.api.schema import podclaims  # noqa: F401  (PodStatus's 1.36 override first)
from draplane.api.schema.affinity import POD_AFFINITY_TERM
from draplane.api.schema.batch import JOB_SPEC
from draplane.api.schema.container import (
    LIFECYCLE,
    LIFECYCLE_HANDLER,
    POD_SECURITY_CONTEXT,
    RESOURCE_CLAIM,
    RESOURCE_REQUIREMENTS,
    SECURITY_CONTEXT,
    VOLUME_MOUNT,
)
from draplane.api.schema.core import NODE_STATUS, NODE_SYSTEM_INFO
from draplane.api.schema.meta import LABEL_SELECTOR_REQUIREMENT
from draplane.api.schema.model import Arr, Map, extend, f, struct
from draplane.api.schema.pod import CORE, POD_SPEC
from draplane.api.schema.podstatus import CONTAINER_STATUS, POD_CONDITION, POD_STATUS
from draplane.api.schema.reviews import AUTHZ, RESOURCE_ATTRIBUTES
from draplane.api.schema.services import SERVICE_SPEC
from draplane.api.schema.volumeclaim import PERSISTENT_VOLUME_CLAIM_SPEC

VERSION = "1.36"

RECURSIVE_READ_ONLY = ("Disabled", "IfPossible", "Enabled")

extend(
    VERSION,
    RESOURCE_CLAIM,
    f(
        "request",
        "string",
        "A request of the claim: only its devices are made available; all of the claim's when "
        "empty.",
        tag=2,
    ),
)
SLEEP_ACTION = struct(
    CORE + "SleepAction",
    "Sleeps for a while.",
    f("seconds", "int64", "Seconds to sleep.", required=True, tag=1),
)
extend(VERSION, LIFECYCLE_HANDLER, f("sleep", SLEEP_ACTION, "Sleep for a while.", tag=4))
extend(
    VERSION,
    LIFECYCLE,
    f("stopSignal", "string", "Signal sent to stop the container.", tag=3, pointer=True),
)
extend(
    VERSION,
    VOLUME_MOUNT,
    f(
        "recursiveReadOnly",
        "string",
        "Whether a read-only mount is read-only recursively.",
        enum=RECURSIVE_READ_ONLY,
        tag=7,
        pointer=True,
    ),
)
extend(
    VERSION,
    POD_AFFINITY_TERM,
    f(
        "matchLabelKeys",
        Arr("string"),
        "Keys of the pod's labels whose values are ANDed (key in (value)) with labelSelector.",
        list_type="atomic",
        tag=5,
    ),
    f(
        "mismatchLabelKeys",
        Arr("string"),
        "Keys of the pod's labels whose values are ANDed (key notin (value)) with labelSelector.",
        list_type="atomic",
        tag=6,
    ),
)
APP_ARMOR_PROFILE = struct(
    CORE + "AppArmorProfile",
    "The AppArmor profile of a pod or container.",
    f(
        "type",
        "string",
        "Localhost, RuntimeDefault or Unconfined.",
        required=True,
        enum=("Localhost", "RuntimeDefault", "Unconfined"),
        tag=1,
    ),
    f("localhostProfile", "string", "A profile loaded on the node.", tag=2, pointer=True),
)
extend(
    VERSION,
    SECURITY_CONTEXT,
    f("appArmorProfile", APP_ARMOR_PROFILE, "The container's AppArmor profile.", tag=12),
)
extend(
    VERSION,
    POD_SECURITY_CONTEXT,
    f("appArmorProfile", APP_ARMOR_PROFILE, "The containers' AppArmor profile.", tag=11),
    f(
        "supplementalGroupsPolicy",
        "string",
        "How the supplemental groups of the first process are computed (Merge or Strict).",
        enum=("Merge", "Strict"),
        tag=12,
        pointer=True,
    ),
    f(
        "seLinuxChangePolicy",
        "string",
        "How the SELinux label is applied to the pod's volumes (MountOption or Recursive).",
        tag=13,
        pointer=True,
    ),
)
extend(
    VERSION,
    POD_SPEC,
    f(
        "resources",
        RESOURCE_REQUIREMENTS,
        "CPU, memory and hugepages for all containers of the pod together (no claims).",
        tag=40,
    ),
    f("hostnameOverride", "string", "The pod's hostname as it sees it.", tag=41, pointer=True),
)
extend(
    VERSION,
    POD_CONDITION,
    f("observedGeneration", "int64", "metadata.generation the condition is based on.", tag=7),
)
IMAGE_VOLUME_STATUS = struct(
    CORE + "ImageVolumeStatus",
    "The image an image volume mounts.",
    f("imageRef", "string", "Digest of the image.", required=True, tag=1),
)
VOLUME_STATUS = struct(
    CORE + "VolumeStatus",
    "Volume-type-specific state of a mounted volume.",
    f("image", IMAGE_VOLUME_STATUS, "Of an image volume.", tag=1),
)
VOLUME_MOUNT_STATUS = struct(
    CORE + "VolumeMountStatus",
    "The state of one volume mount.",
    f("name", "string", "Name of the VolumeMount.", required=True, tag=1),
    f("mountPath", "string", "mountPath of the VolumeMount.", required=True, tag=2),
    f("readOnly", "boolean", "readOnly of the VolumeMount.", tag=3),
    f(
        "recursiveReadOnly",
        "string",
        "Disabled or Enabled (IfPossible resolved); unset for read-write mounts.",
        tag=4,
        pointer=True,
    ),
    f("volumeStatus", VOLUME_STATUS, "Volume-type-specific state.", tag=5),
)
LINUX_CONTAINER_USER = struct(
    CORE + "LinuxContainerUser",
    "The identity of a Linux container's first process.",
    f("uid", "int64", "Primary uid.", required=True, tag=1),
    f("gid", "int64", "Primary gid.", required=True, tag=2),
    f("supplementalGroups", Arr("int64"), "Supplemental groups.", list_type="atomic", tag=3),
)
CONTAINER_USER = struct(
    CORE + "ContainerUser",
    "The identity of a container's first process.",
    f("linux", LINUX_CONTAINER_USER, "On Linux.", tag=1),
)
RESOURCE_HEALTH = struct(
    CORE + "ResourceHealth",
    "The health of one allocated resource (a device).",
    f(
        "resourceID",
        "string",
        "The resource (for DRA: <driver>/<pool>/<device>).",
        required=True,
        tag=1,
    ),
    f("health", "string", "Healthy, Unhealthy or Unknown.", tag=2),
    f(
        "message",
        "string",
        "Context of the health (ResourceHealthStatusMessage).",
        tag=6,
        pointer=True,
    ),
)
RESOURCE_STATUS = struct(
    CORE + "ResourceStatus",
    "The health of the resources allocated to a container under one name.",
    f(
        "name",
        "string",
        "A resource of the pod spec, or claim:<claim>/<request> for DRA devices.",
        required=True,
        tag=1,
    ),
    f(
        "resources",
        Arr(RESOURCE_HEALTH),
        "Health of each resource.",
        list_type="map",
        map_keys=("resourceID",),
        tag=2,
    ),
)
extend(
    VERSION,
    CONTAINER_STATUS,
    f(
        "volumeMounts",
        Arr(VOLUME_MOUNT_STATUS),
        "State of the volume mounts.",
        merge="mountPath",
        list_type="map",
        tag=12,
    ),
    f("user", CONTAINER_USER, "Identity of the first process.", tag=13),
    f(
        "allocatedResourcesStatus",
        Arr(RESOURCE_STATUS),
        "Health of the resources allocated to the container.",
        merge="name",
        list_type="map",
        tag=14,
    ),
    f("stopSignal", "string", "The effective stop signal.", tag=15, pointer=True),
)
extend(
    VERSION,
    POD_STATUS,
    f("observedGeneration", "int64", "metadata.generation the status is based on.", tag=17),
    f(
        "allocatedResources",
        Map("quantity"),
        "Requests the node allocated to the pod as a whole.",
        tag=19,
    ),
    f("resources", RESOURCE_REQUIREMENTS, "Pod-level requests and limits applied.", tag=20),
)
NODE_RUNTIME_HANDLER_FEATURES = struct(
    CORE + "NodeRuntimeHandlerFeatures",
    "What a runtime handler supports.",
    f("recursiveReadOnlyMounts", "boolean", "Recursive read-only mounts.", tag=1, pointer=True),
    f("userNamespaces", "boolean", "User namespaces, volumes included.", tag=2, pointer=True),
)
NODE_RUNTIME_HANDLER = struct(
    CORE + "NodeRuntimeHandler",
    "A runtime handler of the node.",
    f("name", "string", "Name; empty for the default handler.", tag=1),
    f("features", NODE_RUNTIME_HANDLER_FEATURES, "What it supports.", tag=2),
)
NODE_FEATURES = struct(
    CORE + "NodeFeatures",
    "What the node's CRI implementation supports.",
    f(
        "supplementalGroupsPolicy",
        "boolean",
        "SupplementalGroupsPolicy and ContainerUser.",
        tag=1,
        pointer=True,
    ),
)
NODE_SWAP_STATUS = struct(
    CORE + "NodeSwapStatus",
    "The node's swap memory.",
    f("capacity", "int64", "Bytes of swap.", tag=1, pointer=True),
)
extend(
    VERSION,
    NODE_STATUS,
    f(
        "runtimeHandlers",
        Arr(NODE_RUNTIME_HANDLER),
        "The runtime handlers.",
        list_type="atomic",
        tag=12,
    ),
    f("features", NODE_FEATURES, "What the CRI implementation supports.", tag=13),
    f(
        "declaredFeatures",
        Arr("string"),
        "Features the node declares (NodeDeclaredFeatures).",
        list_type="atomic",
        tag=14,
    ),
)
extend(VERSION, NODE_SYSTEM_INFO, f("swap", NODE_SWAP_STATUS, "Swap memory.", tag=11))
extend(
    VERSION,
    CORE + "LoadBalancerIngress",
    f(
        "ipMode",
        "string",
        "How the load balancer IP behaves: VIP or Proxy.",
        enum=("VIP", "Proxy"),
        tag=3,
        pointer=True,
    ),
)
extend(
    VERSION,
    SERVICE_SPEC,
    f(
        "trafficDistribution",
        "string",
        "How traffic is spread over the endpoints (PreferClose, PreferSameZone, ...).",
        tag=23,
        pointer=True,
    ),
)
extend(
    VERSION,
    PERSISTENT_VOLUME_CLAIM_SPEC,
    f(
        "volumeAttributesClassName",
        "string",
        "The VolumeAttributesClass of the claim.",
        tag=9,
        pointer=True,
    ),
)
FIELD_SELECTOR_REQUIREMENT = struct(
    AUTHZ + "FieldSelectorRequirement",
    "One requirement of a field selector.",
    f("key", "string", "The field.", required=True, tag=1),
    f("operator", "string", "In, NotIn, Exists or DoesNotExist.", required=True, tag=2),
    f("values", Arr("string"), "The values (In, NotIn).", list_type="atomic", tag=3),
)


def _selector_attributes(kind: str, requirement: str) -> str:
    return struct(
        AUTHZ + f"{kind}SelectorAttributes",
        f"The {kind.lower()} selector a request is limited to.",
        f("rawSelector", "string", "The selector as a query parameter writes it.", tag=1),
        f(
            "requirements",
            Arr(requirement),
            "The parsed selector.",
            list_type="atomic",
            tag=2,
        ),
    )


extend(
    VERSION,
    RESOURCE_ATTRIBUTES,
    f(
        "fieldSelector",
        _selector_attributes("Field", FIELD_SELECTOR_REQUIREMENT),
        "Limits the access to objects matching a field selector.",
        tag=8,
    ),
    f(
        "labelSelector",
        _selector_attributes("Label", LABEL_SELECTOR_REQUIREMENT),
        "Limits the access to objects matching a label selector.",
        tag=9,
    ),
)
extend(
    VERSION,
    JOB_SPEC,
    f(
        "managedBy",
        "string",
        "The controller that syncs the Job; kubernetes.io/job-controller when unset.",
        tag=15,
        pointer=True,
    ),
)
