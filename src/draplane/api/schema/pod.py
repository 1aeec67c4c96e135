"""core/v1 Pod: PodSpec (tolerations, claims; volumes are in `volumes`, affinity in
`affinity`, PodStatus in `podstatus`, whose structs are re-exported here) and PodTemplateSpec for
the kinds that embed pods (1.28)."""

from __future__ import annotations

from draplane.api.schema.affinity import AFFINITY
from draplane.api.schema.container import (
    CONTAINER,
    EPHEMERAL_CONTAINER,
    POD_SECURITY_CONTEXT,
)
from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct
from draplane.api.schema.podstatus import POD_STATUS as POD_STATUS
from draplane.api.schema.volumes import (
    EMPTY_DIR as EMPTY_DIR,
    HOST_PATH as HOST_PATH,
    LOCAL_OBJECT_REFERENCE as LOCAL_OBJECT_REFERENCE,
    PVC_SOURCE as PVC_SOURCE,
    VOLUME as VOLUME,
)

CORE = "io.k8s.api.core.v1."

TOLERATION = struct(
    CORE + "Toleration",
    "Lets a pod be scheduled on (or stay on) nodes with a matching taint.",
    f("key", "string", "Taint key; empty with Exists matches every taint.", tag=1),
    f("operator", "string", "Exists or Equal (default).", enum=("Equal", "Exists"), tag=2),
    f("value", "string", "Taint value to match with Equal.", tag=3),
    f(
        "effect",
        "string",
        "Taint effect to match; empty matches all.",
        enum=("NoExecute", "NoSchedule", "PreferNoSchedule"),
        tag=4,
    ),
    f(
        "tolerationSeconds",
        "int64",
        "How long a NoExecute taint is tolerated.",
        tag=5,
        pointer=True,
    ),
)
HOST_ALIAS = struct(
    CORE + "HostAlias",
    "An /etc/hosts entry.",
    f("ip", "string", "IP address.", tag=1),
    f("hostnames", Arr("string"), "Host names for the IP.", tag=2),
)
POD_DNS_CONFIG_OPTION = struct(
    CORE + "PodDNSConfigOption",
    "A resolver option.",
    f("name", "string", "Option name.", tag=1),
    f("value", "string", "Option value.", tag=2, pointer=True),
)
POD_DNS_CONFIG = struct(
    CORE + "PodDNSConfig",
    "DNS settings added to those the DNS policy generates.",
    f("nameservers", Arr("string"), "Name server IPs.", tag=1),
    f("searches", Arr("string"), "Search domains.", tag=2),
    f("options", Arr(POD_DNS_CONFIG_OPTION), "Resolver options.", tag=3),
)
TOPOLOGY_SPREAD_CONSTRAINT = struct(
    CORE + "TopologySpreadConstraint",
    "How to spread matching pods over topology domains.",
    f(
        "maxSkew",
        "int32",
        "Most allowed difference of matching pods between domains.",
        required=True,
        tag=1,
    ),
    f("topologyKey", "string", "Node label whose value defines the domain.", required=True, tag=2),
    f(
        "whenUnsatisfiable",
        "string",
        "DoNotSchedule or ScheduleAnyway.",
        required=True,
        enum=("DoNotSchedule", "ScheduleAnyway"),
        tag=3,
    ),
    f("labelSelector", LABEL_SELECTOR, "The pods counted in each domain.", tag=4),
    f("minDomains", "int32", "Least number of eligible domains.", tag=5, pointer=True),
    f(
        "nodeAffinityPolicy",
        "string",
        "Honor or Ignore the pod's node affinity when counting.",
        tag=6,
        pointer=True,
    ),
    f(
        "nodeTaintsPolicy",
        "string",
        "Honor or Ignore node taints when counting.",
        tag=7,
        pointer=True,
    ),
    f(
        "matchLabelKeys",
        Arr("string"),
        "Pod label keys added to the selector.",
        list_type="atomic",
        tag=8,
    ),
)
POD_READINESS_GATE = struct(
    CORE + "PodReadinessGate",
    "An extra condition the pod's readiness requires.",
    f("conditionType", "string", "A condition type in the pod's conditions.", required=True, tag=1),
)
POD_OS = struct(
    CORE + "PodOS",
    "The operating system the pod's containers need.",
    f("name", "string", "linux or windows.", required=True, tag=1),
)
POD_SCHEDULING_GATE = struct(
    CORE + "PodSchedulingGate",
    "A gate that keeps the pod from being scheduled while present.",
    f("name", "string", "Name of the gate.", required=True, tag=1),
)
CLAIM_SOURCE = struct(
    CORE + "ClaimSource",
    "Where a pod's resource claim comes from: exactly one field is set.",
    f(
        "resourceClaimName",
        "string",
        "An existing ResourceClaim in the pod's namespace.",
        tag=1,
        pointer=True,
    ),
    f(
        "resourceClaimTemplateName",
        "string",
        "A template a claim is created from for the pod.",
        tag=2,
        pointer=True,
    ),
)
POD_RESOURCE_CLAIM = struct(
    CORE + "PodResourceClaim",
    "A named resource claim of the pod that containers refer to.",
    f("name", "string", "Name of this claim in the pod.", required=True, tag=1),
    f("source", CLAIM_SOURCE, "Where the ResourceClaim comes from.", emit=True, tag=2),
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
        tag=1,
    ),
    f(
        "initContainers",
        Arr(CONTAINER),
        "Containers run in order before the others.",
        merge="name",
        tag=20,
    ),
    f("containers", Arr(CONTAINER), "The pod's containers.", merge="name", required=True, tag=2),
    f(
        "ephemeralContainers",
        Arr(EPHEMERAL_CONTAINER),
        "Debugging containers added to the running pod.",
        merge="name",
        tag=34,
    ),
    f(
        "restartPolicy",
        "string",
        "Restart policy of the containers.",
        enum=("Always", "Never", "OnFailure"),
        tag=3,
    ),
    f(
        "terminationGracePeriodSeconds",
        "int64",
        "Seconds to stop gracefully on delete.",
        tag=4,
        pointer=True,
    ),
    f(
        "activeDeadlineSeconds",
        "int64",
        "Seconds the pod may run before it is failed.",
        tag=5,
        pointer=True,
    ),
    f(
        "dnsPolicy",
        "string",
        "How the pod's DNS is configured.",
        enum=("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
        tag=6,
    ),
    f("nodeSelector", Map("string"), "Labels a node must have.", map_type="atomic", tag=7),
    f("serviceAccountName", "string", "The ServiceAccount the pod runs as.", tag=8),
    f("serviceAccount", "string", "Deprecated alias of serviceAccountName.", tag=9),
    f(
        "automountServiceAccountToken",
        "boolean",
        "Mount the service account token.",
        tag=21,
        pointer=True,
    ),
    f("nodeName", "string", "The node the pod is bound to.", tag=10),
    f("hostNetwork", "boolean", "Use the node's network namespace.", tag=11),
    f("hostPID", "boolean", "Use the node's PID namespace.", tag=12),
    f("hostIPC", "boolean", "Use the node's IPC namespace.", tag=13),
    f(
        "shareProcessNamespace",
        "boolean",
        "One PID namespace for all containers.",
        tag=27,
        pointer=True,
    ),
    f("securityContext", POD_SECURITY_CONTEXT, "Pod-level security settings.", tag=14),
    f(
        "imagePullSecrets",
        Arr(LOCAL_OBJECT_REFERENCE),
        "Secrets used to pull images.",
        merge="name",
        tag=15,
    ),
    f("hostname", "string", "Host name; the pod's name by default.", tag=16),
    f("subdomain", "string", "Subdomain of the fully qualified host name.", tag=17),
    f("affinity", AFFINITY, "Scheduling constraints.", tag=18),
    f("schedulerName", "string", "The scheduler that schedules the pod.", tag=19),
    f("tolerations", Arr(TOLERATION), "Taints the pod tolerates.", tag=22),
    f("hostAliases", Arr(HOST_ALIAS), "Extra /etc/hosts entries.", merge="ip", tag=23),
    f("priorityClassName", "string", "The pod's PriorityClass.", tag=24),
    f("priority", "int32", "Priority, resolved from the PriorityClass.", tag=25, pointer=True),
    f("dnsConfig", POD_DNS_CONFIG, "Extra DNS settings.", tag=26),
    f("readinessGates", Arr(POD_READINESS_GATE), "Extra conditions of readiness.", tag=28),
    f("runtimeClassName", "string", "The RuntimeClass to run the pod with.", tag=29, pointer=True),
    f(
        "enableServiceLinks",
        "boolean",
        "Inject service environment variables.",
        tag=30,
        pointer=True,
    ),
    f(
        "preemptionPolicy",
        "string",
        "Whether the pod may preempt lower-priority pods.",
        enum=("Never", "PreemptLowerPriority"),
        tag=31,
        pointer=True,
    ),
    f("overhead", Map("quantity"), "Resources the pod's sandbox uses.", tag=32),
    f(
        "topologySpreadConstraints",
        Arr(TOPOLOGY_SPREAD_CONSTRAINT),
        "How the pod spreads over topology domains.",
        merge="topologyKey",
        list_type="map",
        map_keys=("topologyKey", "whenUnsatisfiable"),
        tag=33,
    ),
    f(
        "setHostnameAsFQDN",
        "boolean",
        "Set the host name to the fully qualified name.",
        tag=35,
        pointer=True,
    ),
    f("os", POD_OS, "The operating system of the containers.", tag=36),
    f("hostUsers", "boolean", "Use the node's user namespace.", tag=37, pointer=True),
    f(
        "schedulingGates",
        Arr(POD_SCHEDULING_GATE),
        "Gates that keep the pod from being scheduled.",
        merge="name",
        list_type="map",
        tag=38,
    ),
    f(
        "resourceClaims",
        Arr(POD_RESOURCE_CLAIM),
        "Resource claims the containers may use (dynamic resource allocation).",
        merge="name",
        patch_strategy="merge,retainKeys",
        list_type="map",
        tag=39,
    ),
)
POD = struct(
    CORE + "Pod",
    "A group of containers that run together on one node.",
    *type_meta(),
    metadata_field(),
    f("spec", POD_SPEC, "Desired state.", emit=True, tag=2),
    f("status", POD_STATUS, "Observed state.", emit=True, tag=3),
)
POD_TEMPLATE_SPEC = struct(
    CORE + "PodTemplateSpec",
    "The pods a workload creates: their metadata and spec.",
    metadata_field(),
    f("spec", POD_SPEC, "Desired state of the pods.", emit=True, tag=2),
)
serve("", "v1", "Pod", POD)
