"""core/v1 Node, Namespace, ConfigMap, Event, ServiceAccount and Binding, and
coordination.k8s.io/v1 Lease (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct
from draplane.api.schema.volumes import LOCAL_OBJECT_REFERENCE

CORE = "io.k8s.api.core.v1."

OBJECT_REFERENCE = struct(
    CORE + "ObjectReference",
    "A reference to any object, by kind, namespace, name and UID.",
    f("kind", "string", "Kind of the referent."),
    f("namespace", "string", "Namespace of the referent."),
    f("name", "string", "Name of the referent."),
    f("uid", "string", "UID of the referent."),
    f("apiVersion", "string", "API version of the referent."),
    f("resourceVersion", "string", "The referent's version this reference was made at."),
    f("fieldPath", "string", "A field of the referent, e.g. spec.containers{name}."),
)
TAINT = struct(
    CORE + "Taint",
    "Repels pods that do not tolerate it from the node.",
    f("key", "string", "Taint key.", required=True),
    f("value", "string", "Taint value."),
    f(
        "effect",
        "string",
        "What happens to pods that do not tolerate the taint.",
        required=True,
        enum=("NoExecute", "NoSchedule", "PreferNoSchedule"),
    ),
    f("timeAdded", "time", "When a NoExecute taint was added."),
)
NODE_SPEC = struct(
    CORE + "NodeSpec",
    "How a node is configured.",
    f("podCIDR", "string", "Pod IP range of the node."),
    f(
        "podCIDRs",
        Arr("string"),
        "Pod IP ranges of the node, per IP family.",
        patch_strategy="merge",
    ),
    f("providerID", "string", "The cloud provider's ID of the node."),
    f("unschedulable", "boolean", "Keep new pods off the node."),
    f("taints", Arr(TAINT), "Taints of the node."),
    f("configSource", "object", "Deprecated dynamic kubelet configuration."),
    f("externalID", "string", "Deprecated."),
)
NODE_CONDITION = struct(
    CORE + "NodeCondition",
    "One aspect of the node's state.",
    f("type", "string", "The condition (Ready, MemoryPressure, ...).", required=True),
    f("status", "string", "True, False or Unknown.", required=True),
    f("lastHeartbeatTime", "time", "When the kubelet last reported it.", emit=True),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True),
    f("reason", "string", "Machine-readable reason of the last transition."),
    f("message", "string", "Human-readable detail of the last transition."),
)
NODE_ADDRESS = struct(
    CORE + "NodeAddress",
    "An address of the node.",
    f("type", "string", "Hostname, InternalIP, ExternalIP, ...", required=True),
    f("address", "string", "The address.", required=True),
)
DAEMON_ENDPOINT = struct(
    CORE + "DaemonEndpoint",
    "A port a node daemon listens on.",
    f("Port", "int32", "Port number.", required=True),
)
NODE_DAEMON_ENDPOINTS = struct(
    CORE + "NodeDaemonEndpoints",
    "Ports of the daemons on the node.",
    f("kubeletEndpoint", DAEMON_ENDPOINT, "The kubelet's port.", emit=True),
)
NODE_SYSTEM_INFO = struct(
    CORE + "NodeSystemInfo",
    "What the node runs: identifiers and versions.",
    *(
        f(name, "string", text, required=True)
        for name, text in (
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
        )
    ),
)
CONTAINER_IMAGE = struct(
    CORE + "ContainerImage",
    "An image present on the node.",
    f("names", Arr("string"), "Names of the image."),
    f("sizeBytes", "int64", "Size of the image."),
)
ATTACHED_VOLUME = struct(
    CORE + "AttachedVolume",
    "A volume attached to the node.",
    f("name", "string", "Name of the volume.", required=True),
    f("devicePath", "string", "Where it is available.", required=True),
)
NODE_STATUS = struct(
    CORE + "NodeStatus",
    "The observed state of a node.",
    f("capacity", Map("quantity"), "Total resources of the node."),
    f("allocatable", Map("quantity"), "Resources available to pods."),
    f("phase", "string", "Deprecated node phase.", enum=("Pending", "Running", "Terminated")),
    f("conditions", Arr(NODE_CONDITION), "Current conditions.", merge="type"),
    f("addresses", Arr(NODE_ADDRESS), "Addresses of the node.", merge="type"),
    f("daemonEndpoints", NODE_DAEMON_ENDPOINTS, "Ports of the node daemons.", emit=True),
    f("nodeInfo", NODE_SYSTEM_INFO, "Identifiers and versions.", emit=True),
    f("images", Arr(CONTAINER_IMAGE), "Images on the node."),
    f("volumesInUse", Arr("string"), "Volumes in use."),
    f("volumesAttached", Arr(ATTACHED_VOLUME), "Volumes attached."),
    f("config", "object", "Deprecated dynamic kubelet configuration status."),
)
NODE = struct(
    CORE + "Node",
    "A worker machine pods run on.",
    *type_meta(),
    metadata_field(),
    f("spec", NODE_SPEC, "How the node is configured.", emit=True),
    f("status", NODE_STATUS, "Observed state.", emit=True),
)
NAMESPACE_CONDITION = struct(
    CORE + "NamespaceCondition",
    "One aspect of the namespace's state.",
    f("type", "string", "The condition.", required=True),
    f("status", "string", "True, False or Unknown.", required=True),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True),
    f("reason", "string", "Machine-readable reason."),
    f("message", "string", "Human-readable detail."),
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
            f("finalizers", Arr("string"), "Finalizers that must empty before removal."),
        ),
        "Desired state.",
        emit=True,
    ),
    f(
        "status",
        struct(
            CORE + "NamespaceStatus",
            "The observed state of a namespace.",
            f("phase", "string", "Active or Terminating.", enum=("Active", "Terminating")),
            f("conditions", Arr(NAMESPACE_CONDITION), "Current conditions.", merge="type"),
        ),
        "Observed state.",
        emit=True,
    ),
)
CONFIG_MAP = struct(
    CORE + "ConfigMap",
    "Configuration data as keys and values.",
    *type_meta(),
    metadata_field(),
    f("immutable", "boolean", "Data can no longer be changed once true."),
    f("data", Map("string"), "UTF-8 values."),
    f("binaryData", Map("byte"), "Binary values, base64 encoded."),
)
EVENT_SOURCE = struct(
    CORE + "EventSource",
    "The component that reported an event.",
    f("component", "string", "The component."),
    f("host", "string", "The node it runs on."),
)
EVENT_SERIES = struct(
    CORE + "EventSeries",
    "Repetitions of an event.",
    f("count", "int32", "Occurrences so far."),
    f("lastObservedTime", "microtime", "When it was last seen.", emit=True),
)
EVENT = struct(
    CORE + "Event",
    "A report of something that happened to an object.",
    *type_meta(),
    metadata_field(),
    f("involvedObject", OBJECT_REFERENCE, "The object the event is about.", required=True),
    f("reason", "string", "Machine-readable reason."),
    f("message", "string", "Human-readable description."),
    f("source", EVENT_SOURCE, "Who reported it.", emit=True),
    f("firstTimestamp", "time", "When it was first recorded.", emit=True),
    f("lastTimestamp", "time", "When it was last recorded.", emit=True),
    f("count", "int32", "Times it occurred."),
    f("type", "string", "Normal or Warning."),
    f("eventTime", "microtime", "When it first occurred.", emit=True),
    f("series", EVENT_SERIES, "Its repetitions."),
    f("action", "string", "What was done or failed."),
    f("related", OBJECT_REFERENCE, "A second object involved."),
    f("reportingComponent", "string", "The controller that emitted it.", emit=True),
    f("reportingInstance", "string", "The instance of that controller.", emit=True),
)
SERVICE_ACCOUNT = struct(
    CORE + "ServiceAccount",
    "An identity for processes in pods.",
    *type_meta(),
    metadata_field(),
    f("secrets", Arr(OBJECT_REFERENCE), "Secrets pods of this account may use.", merge="name"),
    f("imagePullSecrets", Arr(LOCAL_OBJECT_REFERENCE), "Secrets used to pull images."),
    f("automountServiceAccountToken", "boolean", "Mount the token in pods by default."),
)
BINDING = struct(
    CORE + "Binding",
    "Binds a pod to a node (the pods/binding subresource).",
    *type_meta(),
    metadata_field(),
    f("target", OBJECT_REFERENCE, "The node to bind to.", required=True),
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
            f("holderIdentity", "string", "Who holds the lease."),
            f("leaseDurationSeconds", "int32", "How long the holder may go without renewing."),
            f("acquireTime", "microtime", "When the current holder acquired it."),
            f("renewTime", "microtime", "When the holder last renewed it."),
            f("leaseTransitions", "int32", "Times the lease changed hands."),
        ),
        "The lease's holder and timing.",
        emit=True,
    ),
)
serve("", "v1", "Node", NODE)
serve("", "v1", "Namespace", NAMESPACE)
serve("", "v1", "ConfigMap", CONFIG_MAP)
serve("", "v1", "Event", EVENT)
serve("", "v1", "ServiceAccount", SERVICE_ACCOUNT)
serve("", "v1", "Binding", BINDING, with_list=False)
serve("coordination.k8s.io", "v1", "Lease", LEASE)
