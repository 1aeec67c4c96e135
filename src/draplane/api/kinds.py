"""The registry of served kinds: group, version, resource, kind, scope and subresources.

Every component names a resource through one of the module-level `ResourceType` constants
(`PODS`, `RESOURCE_CLAIMS`, ...). `SERVED` lists them all, in discovery order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = field(default=ALL_VERBS)
    custom: Any = field(default=None, compare=False, hash=False, repr=False)
    """A custom resource's `draplane.api.crd.CustomKind` (schema, subresources, columns);
    None for built-in kinds."""
    stored_as: str = ""
    """The storage prefix of a kind stored as another group's resource (events.k8s.io/v1
    Events are core/v1 `events`, `draplane.api.conversion`); "" for its own."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Storage prefix: `pods` for core kinds, `resource.k8s.io/resourceclaims` otherwise
        (`stored_as` when set)."""
        if self.stored_as:
            return self.stored_as
        return f"{self.group}/{self.resource}" if self.group else self.resource

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def group_resource(self) -> str:
        """`pods` or `resourceclaims.resource.k8s.io`, as Status messages spell it."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def __str__(self) -> str:
        return self.group_resource


CORE = ""
RESOURCE_GROUP = "resource.k8s.io"
COORDINATION_GROUP = "coordination.k8s.io"
RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHORIZATION_GROUP = "authorization.k8s.io"
AUTHENTICATION_GROUP = "authentication.k8s.io"
APPS_GROUP = "apps"
BATCH_GROUP = "batch"
AUTOSCALING_GROUP = "autoscaling"
DISCOVERY_GROUP = "discovery.k8s.io"
APIEXTENSIONS_GROUP = "apiextensions.k8s.io"
SCHEDULING_GROUP = "scheduling.k8s.io"
STORAGE_GROUP = "storage.k8s.io"
POLICY_GROUP = "policy"
EVENTS_GROUP = "events.k8s.io"
CREATE_ONLY = ("create",)

NAMESPACES = ResourceType(
    CORE,
    "v1",
    "namespaces",
    "Namespace",
    False,
    "namespace",
    ("ns",),
    ("status", "finalize"),
    verbs=tuple(v for v in ALL_VERBS if v != "deletecollection"),
)
PODS = ResourceType(
    CORE, "v1", "pods", "Pod", True, "pod", ("po",), ("status", "binding", "log"), ("all",)
)
NODES = ResourceType(CORE, "v1", "nodes", "Node", False, "node", ("no",), ("status",))
EVENTS = ResourceType(CORE, "v1", "events", "Event", True, "event", ("ev",))
EVENTS_V1 = ResourceType(
    EVENTS_GROUP, "v1", "events", "Event", True, "event", ("ev",), stored_as=EVENTS.key
)
"""events.k8s.io/v1 Events: stored as core/v1 Events, converted on the way in and out
(kube-apiserver stores both as one resource, pkg/apis/events/v1/conversion.go)."""
CONFIGMAPS = ResourceType(CORE, "v1", "configmaps", "ConfigMap", True, "configmap", ("cm",))
LEASES = ResourceType(COORDINATION_GROUP, "v1", "leases", "Lease", True, "lease")
RESOURCE_CLASSES = ResourceType(
    RESOURCE_GROUP, "v1alpha2", "resourceclasses", "ResourceClass", False, "resourceclass"
)
RESOURCE_CLAIMS = ResourceType(
    RESOURCE_GROUP,
    "v1alpha2",
    "resourceclaims",
    "ResourceClaim",
    True,
    "resourceclaim",
    (),
    ("status",),
)
RESOURCE_CLAIM_TEMPLATES = ResourceType(
    RESOURCE_GROUP,
    "v1alpha2",
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    True,
    "resourceclaimtemplate",
)
POD_SCHEDULING_CONTEXTS = ResourceType(
    RESOURCE_GROUP,
    "v1alpha2",
    "podschedulingcontexts",
    "PodSchedulingContext",
    True,
    "podschedulingcontext",
    (),
    ("status",),
)

SERVICE_ACCOUNTS = ResourceType(
    CORE, "v1", "serviceaccounts", "ServiceAccount", True, "serviceaccount", ("sa",), ("token",)
)
ROLES = ResourceType(RBAC_GROUP, "v1", "roles", "Role", True, "role")
CLUSTER_ROLES = ResourceType(RBAC_GROUP, "v1", "clusterroles", "ClusterRole", False, "clusterrole")
ROLE_BINDINGS = ResourceType(RBAC_GROUP, "v1", "rolebindings", "RoleBinding", True, "rolebinding")
CLUSTER_ROLE_BINDINGS = ResourceType(
    RBAC_GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding", False, "clusterrolebinding"
)
# Review kinds: create-only, never stored (the answer is the returned status).
SUBJECT_ACCESS_REVIEWS = ResourceType(
    AUTHORIZATION_GROUP,
    "v1",
    "subjectaccessreviews",
    "SubjectAccessReview",
    False,
    "subjectaccessreview",
    verbs=CREATE_ONLY,
)
SELF_SUBJECT_ACCESS_REVIEWS = ResourceType(
    AUTHORIZATION_GROUP,
    "v1",
    "selfsubjectaccessreviews",
    "SelfSubjectAccessReview",
    False,
    "selfsubjectaccessreview",
    verbs=CREATE_ONLY,
)
LOCAL_SUBJECT_ACCESS_REVIEWS = ResourceType(
    AUTHORIZATION_GROUP,
    "v1",
    "localsubjectaccessreviews",
    "LocalSubjectAccessReview",
    True,
    "localsubjectaccessreview",
    verbs=CREATE_ONLY,
)
SELF_SUBJECT_RULES_REVIEWS = ResourceType(
    AUTHORIZATION_GROUP,
    "v1",
    "selfsubjectrulesreviews",
    "SelfSubjectRulesReview",
    False,
    "selfsubjectrulesreview",
    verbs=CREATE_ONLY,
)
TOKEN_REVIEWS = ResourceType(
    AUTHENTICATION_GROUP,
    "v1",
    "tokenreviews",
    "TokenReview",
    False,
    "tokenreview",
    verbs=CREATE_ONLY,
)
SELF_SUBJECT_REVIEWS = ResourceType(
    AUTHENTICATION_GROUP,
    "v1",
    "selfsubjectreviews",
    "SelfSubjectReview",
    False,
    "selfsubjectreview",
    verbs=CREATE_ONLY,
)
# kubectl 1.27 asks for v1beta1 (then v1alpha1); same schema.
SELF_SUBJECT_REVIEWS_V1BETA1 = ResourceType(
    AUTHENTICATION_GROUP,
    "v1beta1",
    "selfsubjectreviews",
    "SelfSubjectReview",
    False,
    "selfsubjectreview",
    verbs=CREATE_ONLY,
)
CUSTOM_RESOURCE_DEFINITIONS = ResourceType(
    APIEXTENSIONS_GROUP,
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    False,
    "customresourcedefinition",
    ("crd", "crds"),
    ("status",),
    ("api-extensions",),
)

# Workloads (apps/v1, batch/v1).
_WORKLOAD_SUBRESOURCES = ("status", "scale")
DEPLOYMENTS = ResourceType(
    APPS_GROUP,
    "v1",
    "deployments",
    "Deployment",
    True,
    "deployment",
    ("deploy",),
    _WORKLOAD_SUBRESOURCES,
    ("all",),
)
REPLICA_SETS = ResourceType(
    APPS_GROUP,
    "v1",
    "replicasets",
    "ReplicaSet",
    True,
    "replicaset",
    ("rs",),
    _WORKLOAD_SUBRESOURCES,
    ("all",),
)
STATEFUL_SETS = ResourceType(
    APPS_GROUP,
    "v1",
    "statefulsets",
    "StatefulSet",
    True,
    "statefulset",
    ("sts",),
    _WORKLOAD_SUBRESOURCES,
    ("all",),
)
DAEMON_SETS = ResourceType(
    APPS_GROUP, "v1", "daemonsets", "DaemonSet", True, "daemonset", ("ds",), ("status",), ("all",)
)
CONTROLLER_REVISIONS = ResourceType(
    APPS_GROUP, "v1", "controllerrevisions", "ControllerRevision", True, "controllerrevision"
)
JOBS = ResourceType(BATCH_GROUP, "v1", "jobs", "Job", True, "job", (), ("status",), ("all",))
CRON_JOBS = ResourceType(
    BATCH_GROUP, "v1", "cronjobs", "CronJob", True, "cronjob", ("cj",), ("status",), ("all",)
)
# Services and their backends; secrets.
SECRETS = ResourceType(CORE, "v1", "secrets", "Secret", True, "secret")
SERVICES = ResourceType(
    CORE, "v1", "services", "Service", True, "service", ("svc",), ("status",), ("all",)
)
ENDPOINTS = ResourceType(CORE, "v1", "endpoints", "Endpoints", True, "endpoints", ("ep",))
ENDPOINT_SLICES = ResourceType(
    DISCOVERY_GROUP, "v1", "endpointslices", "EndpointSlice", True, "endpointslice"
)

PRIORITY_CLASSES = ResourceType(
    SCHEDULING_GROUP, "v1", "priorityclasses", "PriorityClass", False, "priorityclass", ("pc",)
)
# Volumes (core/v1 and storage.k8s.io/v1), ReplicationControllers and PodDisruptionBudgets:
# what kube-scheduler's informers read.
PERSISTENT_VOLUMES = ResourceType(
    CORE,
    "v1",
    "persistentvolumes",
    "PersistentVolume",
    False,
    "persistentvolume",
    ("pv",),
    ("status",),
)
PERSISTENT_VOLUME_CLAIMS = ResourceType(
    CORE,
    "v1",
    "persistentvolumeclaims",
    "PersistentVolumeClaim",
    True,
    "persistentvolumeclaim",
    ("pvc",),
    ("status",),
)
REPLICATION_CONTROLLERS = ResourceType(
    CORE,
    "v1",
    "replicationcontrollers",
    "ReplicationController",
    True,
    "replicationcontroller",
    ("rc",),
    ("status", "scale"),
    ("all",),
)
STORAGE_CLASSES = ResourceType(
    STORAGE_GROUP, "v1", "storageclasses", "StorageClass", False, "storageclass", ("sc",)
)
CSI_DRIVERS = ResourceType(STORAGE_GROUP, "v1", "csidrivers", "CSIDriver", False, "csidriver")
CSI_NODES = ResourceType(STORAGE_GROUP, "v1", "csinodes", "CSINode", False, "csinode")
CSI_STORAGE_CAPACITIES = ResourceType(
    STORAGE_GROUP,
    "v1",
    "csistoragecapacities",
    "CSIStorageCapacity",
    True,
    "csistoragecapacity",
)
VOLUME_ATTACHMENTS = ResourceType(
    STORAGE_GROUP,
    "v1",
    "volumeattachments",
    "VolumeAttachment",
    False,
    "volumeattachment",
    (),
    ("status",),
)
POD_DISRUPTION_BUDGETS = ResourceType(
    POLICY_GROUP,
    "v1",
    "poddisruptionbudgets",
    "PodDisruptionBudget",
    True,
    "poddisruptionbudget",
    ("pdb",),
    ("status",),
)
RESOURCE_QUOTAS = ResourceType(
    CORE, "v1", "resourcequotas", "ResourceQuota", True, "resourcequota", ("quota",), ("status",)
)
LIMIT_RANGES = ResourceType(
    CORE, "v1", "limitranges", "LimitRange", True, "limitrange", ("limits",)
)

SERVED: tuple[ResourceType, ...] = (
    NAMESPACES,
    PODS,
    NODES,
    EVENTS,
    CONFIGMAPS,
    LEASES,
    EVENTS_V1,
    RESOURCE_CLASSES,
    RESOURCE_CLAIMS,
    RESOURCE_CLAIM_TEMPLATES,
    POD_SCHEDULING_CONTEXTS,
    SERVICE_ACCOUNTS,
    ROLES,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    CLUSTER_ROLE_BINDINGS,
    SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_ACCESS_REVIEWS,
    LOCAL_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_RULES_REVIEWS,
    TOKEN_REVIEWS,
    SELF_SUBJECT_REVIEWS,
    SELF_SUBJECT_REVIEWS_V1BETA1,
    DEPLOYMENTS,
    REPLICA_SETS,
    STATEFUL_SETS,
    DAEMON_SETS,
    CONTROLLER_REVISIONS,
    JOBS,
    CRON_JOBS,
    SECRETS,
    SERVICES,
    ENDPOINTS,
    ENDPOINT_SLICES,
    PRIORITY_CLASSES,
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    REPLICATION_CONTROLLERS,
    STORAGE_CLASSES,
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    VOLUME_ATTACHMENTS,
    POD_DISRUPTION_BUDGETS,
    RESOURCE_QUOTAS,
    LIMIT_RANGES,
    CUSTOM_RESOURCE_DEFINITIONS,
)


# Structured parameters (resource.k8s.io/v1 and its beta versions), served in the 1.36 mode
# (`draplane.api.versions`) instead of the v1alpha2 kinds above. v1 is the storage version; the
# beta versions share its storage keys and are converted (`draplane.api.resourcev1.conversion`).
def _structured(version: str) -> tuple[ResourceType, ...]:
    return (
        ResourceType(RESOURCE_GROUP, version, "deviceclasses", "DeviceClass", False, "deviceclass"),
        ResourceType(
            RESOURCE_GROUP,
            version,
            "resourceclaims",
            "ResourceClaim",
            True,
            "resourceclaim",
            (),
            ("status",),
        ),
        ResourceType(
            RESOURCE_GROUP,
            version,
            "resourceclaimtemplates",
            "ResourceClaimTemplate",
            True,
            "resourceclaimtemplate",
        ),
        ResourceType(
            RESOURCE_GROUP, version, "resourceslices", "ResourceSlice", False, "resourceslice"
        ),
    )


DEVICE_CLASSES, RESOURCE_CLAIMS_V1, RESOURCE_CLAIM_TEMPLATES_V1, RESOURCE_SLICES = _structured("v1")
STRUCTURED_V1BETA2 = _structured("v1beta2")
STRUCTURED_V1BETA1 = _structured("v1beta1")
DEVICE_TAINT_RULES = ResourceType(
    RESOURCE_GROUP, "v1beta2", "devicetaintrules", "DeviceTaintRule", False, "devicetaintrule"
)
CLASSIC_DRA: tuple[ResourceType, ...] = (
    RESOURCE_CLASSES,
    RESOURCE_CLAIMS,
    RESOURCE_CLAIM_TEMPLATES,
    POD_SCHEDULING_CONTEXTS,
)
"""The v1alpha2 kinds of the 1.28 mode."""
STRUCTURED_DRA: tuple[ResourceType, ...] = (
    DEVICE_CLASSES,
    RESOURCE_CLAIMS_V1,
    RESOURCE_CLAIM_TEMPLATES_V1,
    RESOURCE_SLICES,
    *STRUCTURED_V1BETA2,
    DEVICE_TAINT_RULES,
    *STRUCTURED_V1BETA1,
)
"""The resource.k8s.io kinds of the 1.36 mode, v1 first (discovery's preferred version)."""
_AT = SERVED.index(RESOURCE_CLASSES)
STRUCTURED_SERVED: tuple[ResourceType, ...] = (
    *SERVED[:_AT],
    *STRUCTURED_DRA,
    *(r for r in SERVED[_AT:] if r not in CLASSIC_DRA),
)
"""`SERVED` of the 1.36 mode: the structured kinds where the v1alpha2 ones are."""

STORED: tuple[ResourceType, ...] = tuple(r for r in SERVED if "list" in r.verbs and not r.stored_as)
"""The served kinds that are stored, each resource once (the review kinds are create-only;
events.k8s.io/v1 Events are core/v1 Events)."""

SUBRESOURCE_KINDS: dict[str, tuple[str, str, str]] = {
    "binding": (CORE, "v1", "Binding"),
    "token": (AUTHENTICATION_GROUP, "v1", "TokenRequest"),
    "scale": (AUTOSCALING_GROUP, "v1", "Scale"),
}
"""Subresources whose body is another kind than their parent: (group, version, kind)."""

_EVERY = (*SERVED, *STRUCTURED_DRA)
"""Both modes' kinds: module lookups find either mode's kinds (their group/versions differ; a
storage key shared by both names the 1.28 kind here, the catalog resolves it by mode)."""
_BY_GVR = {(r.group, r.version, r.resource): r for r in _EVERY}
_BY_KIND = {(r.api_version, r.kind): r for r in _EVERY}
_BY_KEY: dict[str, ResourceType] = {}
for _r in _EVERY:
    _BY_KEY.setdefault(_r.key, _r)


def lookup(group: str, version: str, resource: str) -> ResourceType | None:
    return _BY_GVR.get((group, version, resource))


def for_kind(api_version: str, kind: str) -> ResourceType | None:
    return _BY_KIND.get((api_version, kind))


def for_key(key: str) -> ResourceType:
    return _BY_KEY[key]


def group_versions(served: tuple[ResourceType, ...] = SERVED) -> dict[str, list[str]]:
    """Group name -> served versions ("" is the core group)."""
    out: dict[str, list[str]] = {}
    for r in served:
        versions = out.setdefault(r.group, [])
        if r.version not in versions:
            versions.append(r.version)
    return out
