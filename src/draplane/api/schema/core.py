"""core/v1 Node, Namespace, ConfigMap, Event, ServiceAccount and Binding, and
coordination.k8s.io/v1 Lease (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.intree import LOCAL_OBJECT_REFERENCE
from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."

OBJECT_REFERENCE = struct(
    CORE + "ObjectReference",
    "A reference to any object, by kind, namespace, name and UID.",
    f("kind", "string", "Kind of the referent.", tag=1),
    f("namespace", "string", "Namespace of the referent.", tag=2),
    f("name", "string", "Name of the referent.", tag=3),
    f("uid", "string", "UID of the referent.", tag=4),
    f("apiVersion", "string", "API version of the referent.", tag=5),
    f("resourceVersion", "string", "The referent's version this reference was made at.", tag=6),
    f("fieldPath", "string", "A field of the referent, e.g. spec.containers{name}.", tag=7),
)
TAINT = struct(
    CORE + "Taint",
    "Repels pods that do not tolerate it from the node.",
    f("key", "string", "Taint key.", required=True, tag=1),
    f("value", "string", "Taint value.", tag=2),
    f(
        "effect",
        "string",
        "What happens to pods that do not tolerate the taint.",
        required=True,
        enum=("NoExecute", "NoSchedule", "PreferNoSchedule"),
        tag=3,
    ),
    f("timeAdded", "time", "When a NoExecute taint was added.", tag=4),
)
CONFIG_MAP_NODE_CONFIG_SOURCE = struct(
    CORE + "ConfigMapNodeConfigSource",
    "A ConfigMap holding a node's kubelet configuration (deprecated since 1.22).",
    f("namespace", "string", "Namespace of the ConfigMap.", required=True, tag=1),
    f("name", "string", "Name of the ConfigMap.", required=True, tag=2),
    f("uid", "string", "UID of the ConfigMap (status only).", tag=3),
    f("resourceVersion", "string", "resourceVersion of the ConfigMap (status only).", tag=4),
    f("kubeletConfigKey", "string", "The key holding the configuration.", required=True, tag=5),
)
NODE_CONFIG_SOURCE = struct(
    CORE + "NodeConfigSource",
    "Where a node's configuration comes from (deprecated dynamic kubelet configuration).",
    f("configMap", CONFIG_MAP_NODE_CONFIG_SOURCE, "A ConfigMap.", tag=2),
)
NODE_CONFIG_STATUS = struct(
    CORE + "NodeConfigStatus",
    "The state of a node's dynamic kubelet configuration (deprecated).",
    f("assigned", NODE_CONFIG_SOURCE, "The configuration the node will use.", tag=1),
    f("active", NODE_CONFIG_SOURCE, "The configuration the node uses.", tag=2),
    f("lastKnownGood", NODE_CONFIG_SOURCE, "The configuration it falls back to.", tag=3),
    f("error", "string", "Why reconciling the configuration failed.", tag=4),
)
NODE_SPEC = struct(
    CORE + "NodeSpec",
    "How a node is configured.",
    f("podCIDR", "string", "Pod IP range of the node.", tag=1),
    f(
        "podCIDRs",
        Arr("string"),
        "Pod IP ranges of the node, per IP family.",
        patch_strategy="merge",
        tag=7,
    ),
    f("providerID", "string", "The cloud provider's ID of the node.", tag=3),
    f("unschedulable", "boolean", "Keep new pods off the node.", tag=4),
    f("taints", Arr(TAINT), "Taints of the node.", tag=5),
    f("configSource", NODE_CONFIG_SOURCE, "Deprecated dynamic kubelet configuration.", tag=6),
    f("externalID", "string", "Deprecated.", tag=2),
)
NODE_CONDITION = struct(
    CORE + "NodeCondition",
    "One aspect of the node's state.",
    f("type", "string", "The condition (Ready, MemoryPressure, ...).", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastHeartbeatTime", "time", "When the kubelet last reported it.", emit=True, tag=3),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True, tag=4),
    f("reason", "string", "Machine-readable reason of the last transition.", tag=5),
    f("message", "string", "Human-readable detail of the last transition.", tag=6),
)
NODE_ADDRESS = struct(
    CORE + "NodeAddress",
    "An address of the node.",
    f("type", "string", "Hostname, InternalIP, ExternalIP, ...", required=True, tag=1),
    f("address", "string", "The address.", required=True, tag=2),
)
DAEMON_ENDPOINT = struct(
    CORE + "DaemonEndpoint",
    "A port a node daemon listens on.",
    f("Port", "int32", "Port number.", required=True, tag=1),
)
NODE_DAEMON_ENDPOINTS = struct(
    CORE + "NodeDaemonEndpoints",
    "Ports of the daemons on the node.",
    f("kubeletEndpoint", DAEMON_ENDPOINT, "The kubelet's port.", emit=True, tag=1),
)
NODE_SYSTEM_INFO = struct(
    CORE + "NodeSystemInfo",
    "What the node runs: identifiers and versions.",
    *(
        f(name, "string", text, required=True, tag=tag)
        for tag, (name, text) in enumerate(
            (
                ("machineID", "Machine ID."),
                ("systemUUID", "System UUID."),
                ("bootID", "Boot ID."),
                ("kernelVersion", "Kernel version."),
                ("osImage", "OS image."),
                ("containerRuntimeVersion", "Container runtime and version."),
                ("kubeletVersion", "Kubelet version."),
                ("kubeProxyVersion", "Kube-proxy version."),
                ("operatingSystem", "Operating system."),
                ("architecture", "CPU architecture."),
            ),
            start=1,
        )
    ),
)
CONTAINER_IMAGE = struct(
    CORE + "ContainerImage",
    "An image present on the node.",
    f("names", Arr("string"), "Names of the image.", tag=1),
    f("sizeBytes", "int64", "Size of the image.", tag=2),
)
ATTACHED_VOLUME = struct(
    CORE + "AttachedVolume",
    "A volume attached to the node.",
    f("name", "string", "Name of the volume.", required=True, tag=1),
    f("devicePath", "string", "Where it is available.", required=True, tag=2),
)
NODE_STATUS = struct(
    CORE + "NodeStatus",
    "The observed state of a node.",
    f("capacity", Map("quantity"), "Total resources of the node.", tag=1),
    f("allocatable", Map("quantity"), "Resources available to pods.", tag=2),
    f(
        "phase",
        "string",
        "Deprecated node phase.",
        enum=("Pending", "Running", "Terminated"),
        tag=3,
    ),
    f("conditions", Arr(NODE_CONDITION), "Current conditions.", merge="type", tag=4),
    f("addresses", Arr(NODE_ADDRESS), "Addresses of the node.", merge="type", tag=5),
    f("daemonEndpoints", NODE_DAEMON_ENDPOINTS, "Ports of the node daemons.", emit=True, tag=6),
    f("nodeInfo", NODE_SYSTEM_INFO, "Identifiers and versions.", emit=True, tag=7),
    f("images", Arr(CONTAINER_IMAGE), "Images on the node.", tag=8),
    f("volumesInUse", Arr("string"), "Volumes in use.", tag=9),
    f("volumesAttached", Arr(ATTACHED_VOLUME), "Volumes attached.", tag=10),
    f("config", NODE_CONFIG_STATUS, "Deprecated dynamic kubelet configuration status.", tag=11),
)
NODE = struct(
    CORE + "Node",
    "A worker machine pods run on.",
    *type_meta(),
    metadata_field(),
    f("spec", NODE_SPEC, "How the node is configured.", emit=True, tag=2),
    f("status", NODE_STATUS, "Observed state.", emit=True, tag=3),
)
NAMESPACE_CONDITION = struct(
    CORE + "NamespaceCondition",
    "One aspect of the namespace's state.",
    f("type", "string", "The condition.", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True, tag=4),
    f("reason", "string", "Machine-readable reason.", tag=5),
    f("message", "string", "Human-readable detail.", tag=6),
)
NAMESPACE = struct(
    CORE + "Namespace",
    "A scope for names; deleting it deletes everything in it.",
    *type_meta(),
    metadata_field(),
    f(
        "spec",
        struct(
            CORE + "NamespaceSpec",
            "What a namespace needs before it is removed.",
            f("finalizers", Arr("string"), "Finalizers that must empty before removal.", tag=1),
        ),
        "Desired state.",
        emit=True,
        tag=2,
    ),
    f(
        "status",
        struct(
            CORE + "NamespaceStatus",
            "The observed state of a namespace.",
            f("phase", "string", "Active or Terminating.", enum=("Active", "Terminating"), tag=1),
            f("conditions", Arr(NAMESPACE_CONDITION), "Current conditions.", merge="type", tag=2),
        ),
        "Observed state.",
        emit=True,
        tag=3,
    ),
)
CONFIG_MAP = struct(
    CORE + "ConfigMap",
    "Configuration data as keys and values.",
    *type_meta(),
    metadata_field(),
    f("immutable", "boolean", "Data can no longer be changed once true.", tag=4, pointer=True),
    f("data", Map("string"), "UTF-8 values.", tag=2),
    f("binaryData", Map("byte"), "Binary values, base64 encoded.", tag=3),
)
EVENT_SOURCE = struct(
    CORE + "EventSource",
    "The component that reported an event.",
    f("component", "string", "The component.", tag=1),
    f("host", "string", "The node it runs on.", tag=2),
)
EVENT_SERIES = struct(
    CORE + "EventSeries",
    "Repetitions of an event.",
    f("count", "int32", "Occurrences so far.", tag=1),
    f("lastObservedTime", "microtime", "When it was last seen.", emit=True, tag=2),
)
EVENT = struct(
    CORE + "Event",
    "A report of something that happened to an object.",
    *type_meta(),
    metadata_field(),
    f("involvedObject", OBJECT_REFERENCE, "The object the event is about.", required=True, tag=2),
    f("reason", "string", "Machine-readable reason.", tag=3),
    f("message", "string", "Human-readable description.", tag=4),
    f("source", EVENT_SOURCE, "Who reported it.", emit=True, tag=5),
    f("firstTimestamp", "time", "When it was first recorded.", emit=True, tag=6),
    f("lastTimestamp", "time", "When it was last recorded.", emit=True, tag=7),
    f("count", "int32", "Times it occurred.", tag=8),
    f("type", "string", "Normal or Warning.", tag=9),
    f("eventTime", "microtime", "When it first occurred.", emit=True, tag=10),
    f("series", EVENT_SERIES, "Its repetitions.", tag=11),
    f("action", "string", "What was done or failed.", tag=12),
    f("related", OBJECT_REFERENCE, "A second object involved.", tag=13),
    f("reportingComponent", "string", "The controller that emitted it.", emit=True, tag=14),
    f("reportingInstance", "string", "The instance of that controller.", emit=True, tag=15),
)
SERVICE_ACCOUNT = struct(
    CORE + "ServiceAccount",
    "An identity for processes in pods.",
    *type_meta(),
    metadata_field(),
    f(
        "secrets",
        Arr(OBJECT_REFERENCE),
        "Secrets pods of this account may use.",
        merge="name",
        tag=2,
    ),
    f("imagePullSecrets", Arr(LOCAL_OBJECT_REFERENCE), "Secrets used to pull images.", tag=3),
    f(
        "automountServiceAccountToken",
        "boolean",
        "Mount the token in pods by default.",
        tag=4,
        pointer=True,
    ),
)
BINDING = struct(
    CORE + "Binding",
    "Binds a pod to a node (the pods/binding subresource).",
    *type_meta(),
    metadata_field(),
    f("target", OBJECT_REFERENCE, "The node to bind to.", required=True, tag=2),
)
LEASE = struct(
    "io.k8s.api.coordination.v1.Lease",
    "A lease: who holds it and until when.",
    *type_meta(),
    metadata_field(),
    f(
        "spec",
        struct(
            "io.k8s.api.coordination.v1.LeaseSpec",
            "The holder and timing of a lease.",
            f("holderIdentity", "string", "Who holds the lease.", tag=1, pointer=True),
            f(
                "leaseDurationSeconds",
                "int32",
                "How long the holder may go without renewing.",
                tag=2,
                pointer=True,
            ),
            f("acquireTime", "microtime", "When the current holder acquired it.", tag=3),
            f("renewTime", "microtime", "When the holder last renewed it.", tag=4),
            f("leaseTransitions", "int32", "Times the lease changed hands.", tag=5, pointer=True),
        ),
        "The lease's holder and timing.",
        emit=True,
        tag=2,
    ),
)
serve("", "v1", "Node", NODE)
serve("", "v1", "Namespace", NAMESPACE)
serve("", "v1", "ConfigMap", CONFIG_MAP)
serve("", "v1", "Event", EVENT)
serve("", "v1", "ServiceAccount", SERVICE_ACCOUNT)
serve("", "v1", "Binding", BINDING, with_list=False)
serve("coordination.k8s.io", "v1", "Lease", LEASE)
