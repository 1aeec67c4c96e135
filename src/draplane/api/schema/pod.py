"""core/v1 Pod: PodSpec (tolerations, volumes, claims; affinity is in `affinity`), PodStatus
and the container statuses, and PodTemplateSpec for the kinds that embed pods (1.28)."""

from __future__ import annotations

from draplane.api.schema.affinity import AFFINITY
from draplane.api.schema.container import (
    CONTAINER,
    EPHEMERAL_CONTAINER,
    POD_SECURITY_CONTEXT,
    RESOURCE_REQUIREMENTS,
)
from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."

TOLERATION = struct(
    CORE + "Toleration",
    "Lets a pod be scheduled on (or stay on) nodes with a matching taint.",
    f("key", "string", "Taint key; empty with Exists matches every taint."),
    f("operator", "string", "Exists or Equal (default).", enum=("Equal", "Exists")),
    f("value", "string", "Taint value to match with Equal."),
    f(
        "effect",
        "string",
        "Taint effect to match; empty matches all.",
        enum=("NoExecute", "NoSchedule", "PreferNoSchedule"),
    ),
    f("tolerationSeconds", "int64", "How long a NoExecute taint is tolerated."),
)
LOCAL_OBJECT_REFERENCE = struct(
    CORE + "LocalObjectReference",
    "Names an object in the same namespace.",
    f("name", "string", "Name of the referent."),
)
HOST_ALIAS = struct(
    CORE + "HostAlias",
    "An /etc/hosts entry.",
    f("ip", "string", "IP address."),
    f("hostnames", Arr("string"), "Host names for the IP."),
)
POD_DNS_CONFIG_OPTION = struct(
    CORE + "PodDNSConfigOption",
    "A resolver option.",
    f("name", "string", "Option name."),
    f("value", "string", "Option value."),
)
POD_DNS_CONFIG = struct(
    CORE + "PodDNSConfig",
    "DNS settings added to those the DNS policy generates.",
    f("nameservers", Arr("string"), "Name server IPs."),
    f("searches", Arr("string"), "Search domains."),
    f("options", Arr(POD_DNS_CONFIG_OPTION), "Resolver options."),
)
TOPOLOGY_SPREAD_CONSTRAINT = struct(
    CORE + "TopologySpreadConstraint",
    "How to spread matching pods over topology domains.",
    f(
        "maxSkew",
        "int32",
        "Most allowed difference of matching pods between domains.",
        required=True,
    ),
    f("topologyKey", "string", "Node label whose value defines the domain.", required=True),
    f(
        "whenUnsatisfiable",
        "string",
        "DoNotSchedule or ScheduleAnyway.",
        required=True,
        enum=("DoNotSchedule", "ScheduleAnyway"),
    ),
    f("labelSelector", LABEL_SELECTOR, "The pods counted in each domain."),
    f("minDomains", "int32", "Least number of eligible domains."),
    f("nodeAffinityPolicy", "string", "Honor or Ignore the pod's node affinity when counting."),
    f("nodeTaintsPolicy", "string", "Honor or Ignore node taints when counting."),
    f("matchLabelKeys", Arr("string"), "Pod label keys added to the selector.", list_type="atomic"),
)
POD_READINESS_GATE = struct(
    CORE + "PodReadinessGate",
    "An extra condition the pod's readiness requires.",
    f("conditionType", "string", "A condition type in the pod's conditions.", required=True),
)
POD_OS = struct(
    CORE + "PodOS",
    "The operating system the pod's containers need.",
    f("name", "string", "linux or windows.", required=True),
)
POD_SCHEDULING_GATE = struct(
    CORE + "PodSchedulingGate",
    "A gate that keeps the pod from being scheduled while present.",
    f("name", "string", "Name of the gate.", required=True),
)
CLAIM_SOURCE = struct(
    CORE + "ClaimSource",
    "Where a pod's resource claim comes from: exactly one field is set.",
    f("resourceClaimName", "string", "An existing ResourceClaim in the pod's namespace."),
    f("resourceClaimTemplateName", "string", "A template a claim is created from for the pod."),
)
POD_RESOURCE_CLAIM = struct(
    CORE + "PodResourceClaim",
    "A named resource claim of the pod that containers refer to.",
    f("name", "string", "Name of this claim in the pod.", required=True),
    f("source", CLAIM_SOURCE, "Where the ResourceClaim comes from.", emit=True),
)
EMPTY_DIR = struct(
    CORE + "EmptyDirVolumeSource",
    "A temporary directory that lives as long as the pod.",
    f("medium", "string", "Storage medium; empty for the node's default, or Memory."),
    f("sizeLimit", "quantity", "Most storage the volume may use."),
)
HOST_PATH = struct(
    CORE + "HostPathVolumeSource",
    "A file or directory on the node.",
    f("path", "string", "Path on the node.", required=True),
    f("type", "string", "What must exist at the path."),
)
PVC_SOURCE = struct(
    CORE + "PersistentVolumeClaimVolumeSource",
    "A PersistentVolumeClaim in the pod's namespace.",
    f("claimName", "string", "Name of the claim.", required=True),
    f("readOnly", "boolean", "Mount read-only."),
)
VOLUME_SOURCES_FREE = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
)
"""Volume sources modelled as free-form objects (docs/fidelity.md)."""

VOLUME = struct(
    CORE + "Volume",
    "A named volume the pod's containers may mount; exactly one source is set.",
    f("name", "string", "Name of the volume, unique in the pod.", required=True),
    f("hostPath", HOST_PATH, "A path on the node."),
    f("emptyDir", EMPTY_DIR, "A temporary directory."),
    f("persistentVolumeClaim", PVC_SOURCE, "A PersistentVolumeClaim."),
    *(f(name, "object", f"The {name} volume source.") for name in VOLUME_SOURCES_FREE),
)
POD_SPEC = struct(
    CORE + "PodSpec",
    "The desired state of a pod.",
    f(
        "volumes",
        Arr(VOLUME),
        "Volumes the containers may mount.",
        merge="name",
        patch_strategy="merge,retainKeys",
    ),
    f("initContainers", Arr(CONTAINER), "Containers run in order before the others.", merge="name"),
    f("containers", Arr(CONTAINER), "The pod's containers.", merge="name", required=True),
    f(
        "ephemeralContainers",
        Arr(EPHEMERAL_CONTAINER),
        "Debugging containers added to the running pod.",
        merge="name",
    ),
    f(
        "restartPolicy",
        "string",
        "Restart policy of the containers.",
        enum=("Always", "Never", "OnFailure"),
    ),
    f("terminationGracePeriodSeconds", "int64", "Seconds to stop gracefully on delete."),
    f("activeDeadlineSeconds", "int64", "Seconds the pod may run before it is failed."),
    f(
        "dnsPolicy",
        "string",
        "How the pod's DNS is configured.",
        enum=("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
    ),
    f("nodeSelector", Map("string"), "Labels a node must have.", map_type="atomic"),
    f("serviceAccountName", "string", "The ServiceAccount the pod runs as."),
    f("serviceAccount", "string", "Deprecated alias of serviceAccountName."),
    f("automountServiceAccountToken", "boolean", "Mount the service account token."),
    f("nodeName", "string", "The node the pod is bound to."),
    f("hostNetwork", "boolean", "Use the node's network namespace."),
    f("hostPID", "boolean", "Use the node's PID namespace."),
    f("hostIPC", "boolean", "Use the node's IPC namespace."),
    f("shareProcessNamespace", "boolean", "One PID namespace for all containers."),
    f("securityContext", POD_SECURITY_CONTEXT, "Pod-level security settings."),
    f(
        "imagePullSecrets",
        Arr(LOCAL_OBJECT_REFERENCE),
        "Secrets used to pull images.",
        merge="name",
    ),
    f("hostname", "string", "Host name; the pod's name by default."),
    f("subdomain", "string", "Subdomain of the fully qualified host name."),
    f("affinity", AFFINITY, "Scheduling constraints."),
    f("schedulerName", "string", "The scheduler that schedules the pod."),
    f("tolerations", Arr(TOLERATION), "Taints the pod tolerates."),
    f("hostAliases", Arr(HOST_ALIAS), "Extra /etc/hosts entries.", merge="ip"),
    f("priorityClassName", "string", "The pod's PriorityClass."),
    f("priority", "int32", "Priority, resolved from the PriorityClass."),
    f("dnsConfig", POD_DNS_CONFIG, "Extra DNS settings."),
    f("readinessGates", Arr(POD_READINESS_GATE), "Extra conditions of readiness."),
    f("runtimeClassName", "string", "The RuntimeClass to run the pod with."),
    f("enableServiceLinks", "boolean", "Inject service environment variables."),
    f(
        "preemptionPolicy",
        "string",
        "Whether the pod may preempt lower-priority pods.",
        enum=("Never", "PreemptLowerPriority"),
    ),
    f("overhead", Map("quantity"), "Resources the pod's sandbox uses."),
    f(
        "topologySpreadConstraints",
        Arr(TOPOLOGY_SPREAD_CONSTRAINT),
        "How the pod spreads over topology domains.",
        merge="topologyKey",
        list_type="map",
        map_keys=("topologyKey", "whenUnsatisfiable"),
    ),
    f("setHostnameAsFQDN", "boolean", "Set the host name to the fully qualified name."),
    f("os", POD_OS, "The operating system of the containers."),
    f("hostUsers", "boolean", "Use the node's user namespace."),
    f(
        "schedulingGates",
        Arr(POD_SCHEDULING_GATE),
        "Gates that keep the pod from being scheduled.",
        merge="name",
        list_type="map",
    ),
    f(
        "resourceClaims",
        Arr(POD_RESOURCE_CLAIM),
        "Resource claims the containers may use (dynamic resource allocation).",
        merge="name",
        patch_strategy="merge,retainKeys",
        list_type="map",
    ),
)
POD_CONDITION = struct(
    CORE + "PodCondition",
    "One aspect of the pod's state.",
    f("type", "string", "The condition (PodScheduled, Ready, ...).", required=True),
    f("status", "string", "True, False or Unknown.", required=True),
    f("lastProbeTime", "time", "When the condition was last probed.", emit=True),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True),
    f("reason", "string", "Machine-readable reason of the last transition."),
    f("message", "string", "Human-readable detail of the last transition."),
)
HOST_IP = struct(CORE + "HostIP", "An IP of the pod's node.", f("ip", "string", "The IP."))
POD_IP = struct(CORE + "PodIP", "An IP of the pod.", f("ip", "string", "The IP."))
STATE_WAITING = struct(
    CORE + "ContainerStateWaiting",
    "The container is not running yet.",
    f("reason", "string", "Why it is waiting."),
    f("message", "string", "Detail of why it is waiting."),
)
STATE_RUNNING = struct(
    CORE + "ContainerStateRunning",
    "The container is running.",
    f("startedAt", "time", "When it last started.", emit=True),
)
STATE_TERMINATED = struct(
    CORE + "ContainerStateTerminated",
    "The container ran and exited.",
    f("exitCode", "int32", "Exit status of the last run.", required=True),
    f("signal", "int32", "Signal that ended it."),
    f("reason", "string", "Why it terminated."),
    f("message", "string", "Detail of why it terminated."),
    f("startedAt", "time", "When it started.", emit=True),
    f("finishedAt", "time", "When it ended.", emit=True),
    f("containerID", "string", "Runtime ID of the container."),
)
CONTAINER_STATE = struct(
    CORE + "ContainerState",
    "Where the container is in its lifecycle; at most one field is set.",
    f("waiting", STATE_WAITING, "Waiting to run."),
    f("running", STATE_RUNNING, "Running."),
    f("terminated", STATE_TERMINATED, "Exited."),
)
CONTAINER_STATUS = struct(
    CORE + "ContainerStatus",
    "The observed state of one container.",
    f("name", "string", "Name of the container.", required=True),
    f("state", CONTAINER_STATE, "Current state.", emit=True),
    f("lastState", CONTAINER_STATE, "State of the previous run.", emit=True),
    f("ready", "boolean", "Passed its readiness probe.", required=True),
    f("restartCount", "int32", "Times the container restarted.", required=True),
    f("image", "string", "Image it runs.", required=True),
    f("imageID", "string", "ID of the image it runs.", required=True),
    f("containerID", "string", "Runtime ID of the container."),
    f("started", "boolean", "Passed its startup probe."),
    f("allocatedResources", Map("quantity"), "Resources the node allocated to it."),
    f("resources", RESOURCE_REQUIREMENTS, "Resources the runtime applied."),
)
POD_RESOURCE_CLAIM_STATUS = struct(
    CORE + "PodResourceClaimStatus",
    "The ResourceClaim that was generated for a pod's claim from a template.",
    f("name", "string", "Name of the entry in spec.resourceClaims.", required=True),
    f("resourceClaimName", "string", "Name of the generated ResourceClaim; unset if none."),
)
POD_STATUS = struct(
    CORE + "PodStatus",
    "The observed state of a pod.",
    f(
        "phase",
        "string",
        "Where the pod is in its lifecycle.",
        enum=("Failed", "Pending", "Running", "Succeeded", "Unknown"),
    ),
    f("conditions", Arr(POD_CONDITION), "Current conditions.", merge="type"),
    f("message", "string", "Why the pod is in this state."),
    f("reason", "string", "Machine-readable reason of the state (Evicted, ...)."),
    f("nominatedNodeName", "string", "Node a preemption made room on."),
    f("hostIP", "string", "IP of the node."),
    f("hostIPs", Arr(HOST_IP), "IPs of the node.", merge="ip", list_type="atomic"),
    f("podIP", "string", "IP of the pod."),
    f("podIPs", Arr(POD_IP), "IPs of the pod.", merge="ip"),
    f("startTime", "time", "When the kubelet accepted the pod."),
    f("initContainerStatuses", Arr(CONTAINER_STATUS), "Init container states."),
    f("containerStatuses", Arr(CONTAINER_STATUS), "Container states."),
    f(
        "qosClass",
        "string",
        "Quality of service class.",
        enum=("BestEffort", "Burstable", "Guaranteed"),
    ),
    f("ephemeralContainerStatuses", Arr(CONTAINER_STATUS), "Ephemeral container states."),
    f("resize", "string", "State of a requested resize."),
    f(
        "resourceClaimStatuses",
        Arr(POD_RESOURCE_CLAIM_STATUS),
        "Names of the ResourceClaims generated for the pod.",
        merge="name",
        patch_strategy="merge,retainKeys",
        list_type="map",
    ),
)
POD = struct(
    CORE + "Pod",
    "A group of containers that run together on one node.",
    *type_meta(),
    metadata_field(),
    f("spec", POD_SPEC, "Desired state.", emit=True),
    f("status", POD_STATUS, "Observed state.", emit=True),
)
POD_TEMPLATE_SPEC = struct(
    CORE + "PodTemplateSpec",
    "The pods a workload creates: their metadata and spec.",
    metadata_field(),
    f("spec", POD_SPEC, "Desired state of the pods.", emit=True),
)
serve("", "v1", "Pod", POD)
