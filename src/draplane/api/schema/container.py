"""core/v1 Container and what it holds: ports, environment, resources, probes, lifecycle
handlers, mounts and security contexts (Kubernetes 1.28)."""

from __future__ import annotations

from dataclasses import replace

from draplane.api.schema.model import Arr, Field, Map, f, struct

CORE = "io.k8s.api.core.v1."

CONTAINER_PORT = struct(
    CORE + "ContainerPort",
    "A network port a container exposes.",
    f("name", "string", "IANA_SVC_NAME of the port, unique in the pod.", tag=1),
    f("hostPort", "int32", "Port on the host to expose, if any.", tag=2),
    f("containerPort", "int32", "Port number on the pod's IP address.", required=True, tag=3),
    f(
        "protocol",
        "string",
        "UDP, TCP or SCTP; TCP by default.",
        enum=("SCTP", "TCP", "UDP"),
        tag=4,
    ),
    f("hostIP", "string", "Host IP to bind the host port to.", tag=5),
)
OBJECT_FIELD_SELECTOR = struct(
    CORE + "ObjectFieldSelector",
    "Selects a field of the pod.",
    f("apiVersion", "string", "Version of the schema fieldPath is written in.", tag=1),
    f("fieldPath", "string", "Path of the field to select.", required=True, tag=2),
)
RESOURCE_FIELD_SELECTOR = struct(
    CORE + "ResourceFieldSelector",
    "Selects a container resource (limits.cpu, requests.memory, ...).",
    f("containerName", "string", "The container; required for volumes.", tag=1),
    f("resource", "string", "The resource to select.", required=True, tag=2),
    f("divisor", "quantity", "Output unit; 1 by default.", tag=3),
)


def _key_selector(name: str, what: str) -> str:
    return struct(
        CORE + name,
        f"Selects a key of a {what}.",
        f("name", "string", f"Name of the {what}.", tag=1, embedded=1),
        f("key", "string", "The key to select.", required=True, tag=2),
        f(
            "optional",
            "boolean",
            f"Whether the {what} or its key may be missing.",
            tag=3,
            pointer=True,
        ),
    )


def _env_source(name: str, what: str) -> str:
    return struct(
        CORE + name,
        f"Every key of a {what} as environment variables.",
        f("name", "string", f"Name of the {what}.", tag=1, embedded=1),
        f("optional", "boolean", f"Whether the {what} may be missing.", tag=2, pointer=True),
    )


ENV_VAR_SOURCE = struct(
    CORE + "EnvVarSource",
    "Where an environment variable's value comes from.",
    f("fieldRef", OBJECT_FIELD_SELECTOR, "A field of the pod.", tag=1),
    f(
        "resourceFieldRef",
        RESOURCE_FIELD_SELECTOR,
        "A resource limit or request of a container.",
        tag=2,
    ),
    f(
        "configMapKeyRef",
        _key_selector("ConfigMapKeySelector", "ConfigMap"),
        "A ConfigMap key.",
        tag=3,
    ),
    f("secretKeyRef", _key_selector("SecretKeySelector", "Secret"), "A Secret key.", tag=4),
)
ENV_VAR = struct(
    CORE + "EnvVar",
    "An environment variable of a container.",
    f("name", "string", "Name of the variable.", required=True, tag=1),
    f("value", "string", "The value; $(VAR) references are expanded.", tag=2),
    f("valueFrom", ENV_VAR_SOURCE, "Source of the value when value is empty.", tag=3),
)
ENV_FROM_SOURCE = struct(
    CORE + "EnvFromSource",
    "A set of environment variables from a ConfigMap or Secret.",
    f("prefix", "string", "Prefix added to every key.", tag=1),
    f("configMapRef", _env_source("ConfigMapEnvSource", "ConfigMap"), "The ConfigMap.", tag=2),
    f("secretRef", _env_source("SecretEnvSource", "Secret"), "The Secret.", tag=3),
)
RESOURCE_CLAIM = struct(
    CORE + "ResourceClaim",
    "A reference to one entry of the pod's spec.resourceClaims.",
    f("name", "string", "Name of an entry in pod.spec.resourceClaims.", required=True, tag=1),
)
RESOURCE_REQUIREMENTS = struct(
    CORE + "ResourceRequirements",
    "Compute resources a container needs (requests) and may use (limits).",
    f("limits", Map("quantity"), "The most of each resource the container may use.", tag=1),
    f("requests", Map("quantity"), "The least of each resource the container needs.", tag=2),
    f(
        "claims",
        Arr(RESOURCE_CLAIM),
        "Dynamically allocated resources (spec.resourceClaims entries) the container uses.",
        list_type="map",
        map_keys=("name",),
        tag=3,
    ),
)
CONTAINER_RESIZE_POLICY = struct(
    CORE + "ContainerResizePolicy",
    "How a container reacts to a resize of one resource.",
    f("resourceName", "string", "The resource (cpu, memory).", required=True, tag=1),
    f("restartPolicy", "string", "NotRequired or RestartContainer.", required=True, tag=2),
)
VOLUME_MOUNT = struct(
    CORE + "VolumeMount",
    "Mounts a volume in a container.",
    f("name", "string", "The volume's name.", required=True, tag=1),
    f("readOnly", "boolean", "Mount read-only.", tag=2),
    f("mountPath", "string", "Path in the container to mount at.", required=True, tag=3),
    f("subPath", "string", "Path within the volume to mount instead of its root.", tag=4),
    f(
        "mountPropagation",
        "string",
        "How mounts propagate between host and container.",
        tag=5,
        pointer=True,
    ),
    f("subPathExpr", "string", "subPath with $(VAR) expansion.", tag=6),
)
VOLUME_DEVICE = struct(
    CORE + "VolumeDevice",
    "Maps a raw block volume into a container.",
    f("name", "string", "The PersistentVolumeClaim volume's name.", required=True, tag=1),
    f("devicePath", "string", "Device path in the container.", required=True, tag=2),
)
EXEC_ACTION = struct(
    CORE + "ExecAction",
    "Runs a command in the container.",
    f("command", Arr("string"), "Command line; exit status 0 is success.", tag=1),
)
HTTP_HEADER = struct(
    CORE + "HTTPHeader",
    "A custom HTTP header.",
    f("name", "string", "Header name.", required=True, tag=1),
    f("value", "string", "Header value.", required=True, tag=2),
)
HTTP_GET_ACTION = struct(
    CORE + "HTTPGetAction",
    "An HTTP GET request.",
    f("path", "string", "Path on the server.", tag=1),
    f("port", "intorstring", "Port number or name.", required=True, tag=2),
    f("host", "string", "Host to connect to; the pod IP by default.", tag=3),
    f("scheme", "string", "HTTP or HTTPS.", enum=("HTTP", "HTTPS"), tag=4),
    f("httpHeaders", Arr(HTTP_HEADER), "Extra request headers.", tag=5),
)
TCP_SOCKET_ACTION = struct(
    CORE + "TCPSocketAction",
    "Opens a TCP connection.",
    f("port", "intorstring", "Port number or name.", required=True, tag=1),
    f("host", "string", "Host to connect to; the pod IP by default.", tag=2),
)
GRPC_ACTION = struct(
    CORE + "GRPCAction",
    "A gRPC health check.",
    f("port", "int32", "Port of the gRPC service.", required=True, tag=1),
    f("service", "string", "Service name in the health check request.", tag=2, pointer=True),
)


def _handler_fields(embedded: int = 0) -> tuple[Field, ...]:
    """The actions of a LifecycleHandler, or of the ProbeHandler a Probe inlines (`embedded`:
    its protobuf field in the Probe)."""
    return (
        f("exec", EXEC_ACTION, "Run a command.", tag=1, embedded=embedded),
        f("httpGet", HTTP_GET_ACTION, "Send an HTTP GET.", tag=2, embedded=embedded),
        f("tcpSocket", TCP_SOCKET_ACTION, "Open a TCP connection.", tag=3, embedded=embedded),
    )


PROBE = struct(
    CORE + "Probe",
    "A health check of a container and when it runs.",
    *_handler_fields(embedded=1),
    f("grpc", GRPC_ACTION, "Call the gRPC health service.", tag=4, embedded=1),
    f("initialDelaySeconds", "int32", "Seconds after start before the first probe.", tag=2),
    f("timeoutSeconds", "int32", "Seconds before a probe times out.", tag=3),
    f("periodSeconds", "int32", "Seconds between probes.", tag=4),
    f("successThreshold", "int32", "Successes in a row to count as healthy.", tag=5),
    f("failureThreshold", "int32", "Failures in a row to count as failed.", tag=6),
    f(
        "terminationGracePeriodSeconds",
        "int64",
        "Grace period when a failed probe kills.",
        tag=7,
        pointer=True,
    ),
)
LIFECYCLE_HANDLER = struct(
    CORE + "LifecycleHandler",
    "An action run at a container lifecycle event.",
    *_handler_fields(),
)
LIFECYCLE = struct(
    CORE + "Lifecycle",
    "Actions run right after a container starts and before it stops.",
    f("postStart", LIFECYCLE_HANDLER, "Runs right after the container is created.", tag=1),
    f("preStop", LIFECYCLE_HANDLER, "Runs before the container is terminated.", tag=2),
)
CAPABILITIES = struct(
    CORE + "Capabilities",
    "POSIX capabilities added to or dropped from a container.",
    f("add", Arr("string"), "Capabilities to add.", tag=1),
    f("drop", Arr("string"), "Capabilities to drop.", tag=2),
)
SE_LINUX_OPTIONS = struct(
    CORE + "SELinuxOptions",
    "An SELinux label.",
    f("user", "string", "SELinux user.", tag=1),
    f("role", "string", "SELinux role.", tag=2),
    f("type", "string", "SELinux type.", tag=3),
    f("level", "string", "SELinux level.", tag=4),
)
WINDOWS_OPTIONS = struct(
    CORE + "WindowsSecurityContextOptions",
    "Windows-specific security settings.",
    f("gmsaCredentialSpecName", "string", "Name of the GMSA credential spec.", tag=1, pointer=True),
    f("gmsaCredentialSpec", "string", "Contents of the GMSA credential spec.", tag=2, pointer=True),
    f("runAsUserName", "string", "User name to run the entrypoint as.", tag=3, pointer=True),
    f("hostProcess", "boolean", "Run as a host process container.", tag=4, pointer=True),
)
SECCOMP_PROFILE = struct(
    CORE + "SeccompProfile",
    "A seccomp profile.",
    f("type", "string", "Localhost, RuntimeDefault or Unconfined.", required=True, tag=1),
    f(
        "localhostProfile",
        "string",
        "Path of a profile on the node (type Localhost).",
        tag=2,
        pointer=True,
    ),
)
SECURITY_CONTEXT = struct(
    CORE + "SecurityContext",
    "Security settings of one container; they override the pod's.",
    f("capabilities", CAPABILITIES, "Capabilities to add or drop.", tag=1),
    f("privileged", "boolean", "Run as privileged (root on the host).", tag=2, pointer=True),
    f("seLinuxOptions", SE_LINUX_OPTIONS, "SELinux context.", tag=3),
    f("windowsOptions", WINDOWS_OPTIONS, "Windows settings.", tag=10),
    f("runAsUser", "int64", "UID to run the entrypoint as.", tag=4, pointer=True),
    f("runAsGroup", "int64", "GID to run the entrypoint as.", tag=8, pointer=True),
    f("runAsNonRoot", "boolean", "Refuse to start as UID 0.", tag=5, pointer=True),
    f(
        "readOnlyRootFilesystem",
        "boolean",
        "Mount the root filesystem read-only.",
        tag=6,
        pointer=True,
    ),
    f(
        "allowPrivilegeEscalation",
        "boolean",
        "Whether a process may gain privileges.",
        tag=7,
        pointer=True,
    ),
    f("procMount", "string", "Default or Unmasked /proc.", tag=9, pointer=True),
    f("seccompProfile", SECCOMP_PROFILE, "Seccomp profile.", tag=11),
)
SYSCTL = struct(
    CORE + "Sysctl",
    "A kernel parameter to set.",
    f("name", "string", "Parameter name.", required=True, tag=1),
    f("value", "string", "Parameter value.", required=True, tag=2),
)
POD_SECURITY_CONTEXT = struct(
    CORE + "PodSecurityContext",
    "Security settings of every container of a pod.",
    f("seLinuxOptions", SE_LINUX_OPTIONS, "SELinux context.", tag=1),
    f("windowsOptions", WINDOWS_OPTIONS, "Windows settings.", tag=8),
    f("runAsUser", "int64", "UID to run entrypoints as.", tag=2, pointer=True),
    f("runAsGroup", "int64", "GID to run entrypoints as.", tag=6, pointer=True),
    f("runAsNonRoot", "boolean", "Refuse to start containers as UID 0.", tag=3, pointer=True),
    f(
        "supplementalGroups",
        Arr("int64"),
        "Extra groups of each container's first process.",
        tag=4,
    ),
    f("fsGroup", "int64", "Group owning the pod's volumes.", tag=5, pointer=True),
    f("sysctls", Arr(SYSCTL), "Namespaced kernel parameters.", tag=7),
    f("fsGroupChangePolicy", "string", "OnRootMismatch or Always.", tag=9, pointer=True),
    f("seccompProfile", SECCOMP_PROFILE, "Seccomp profile.", tag=10),
)


def container_fields(*, ephemeral: bool = False) -> tuple[Field, ...]:
    """A Container's fields; an EphemeralContainer's are those of the EphemeralContainerCommon
    it inlines (its protobuf field 1) and its targetContainerName (field 2)."""
    out: tuple[Field, ...] = (
        f("name", "string", "Name of the container, unique in the pod.", required=True, tag=1),
        f("image", "string", "Container image name.", tag=2),
        f("command", Arr("string"), "Entrypoint, instead of the image's ENTRYPOINT.", tag=3),
        f("args", Arr("string"), "Arguments, instead of the image's CMD.", tag=4),
        f("workingDir", "string", "Working directory.", tag=5),
        f(
            "ports",
            Arr(CONTAINER_PORT),
            "Ports the container exposes.",
            merge="containerPort",
            list_type="map",
            map_keys=("containerPort", "protocol"),
            tag=6,
        ),
        f(
            "envFrom",
            Arr(ENV_FROM_SOURCE),
            "Environment variables from ConfigMaps or Secrets.",
            tag=19,
        ),
        f("env", Arr(ENV_VAR), "Environment variables.", merge="name", tag=7),
        f("resources", RESOURCE_REQUIREMENTS, "Compute resources.", emit=True, tag=8),
        f(
            "resizePolicy",
            Arr(CONTAINER_RESIZE_POLICY),
            "How each resource is resized.",
            list_type="atomic",
            tag=23,
        ),
        f(
            "restartPolicy",
            "string",
            "Always makes an init container a sidecar.",
            tag=24,
            pointer=True,
        ),
        f("volumeMounts", Arr(VOLUME_MOUNT), "Volumes to mount.", merge="mountPath", tag=9),
        f(
            "volumeDevices",
            Arr(VOLUME_DEVICE),
            "Block devices to map.",
            merge="devicePath",
            tag=21,
        ),
        f("livenessProbe", PROBE, "Restart the container when this fails.", tag=10),
        f("readinessProbe", PROBE, "Remove the pod from endpoints when this fails.", tag=11),
        f("startupProbe", PROBE, "Other probes wait until this succeeds.", tag=22),
        f("lifecycle", LIFECYCLE, "Actions at start and stop.", tag=12),
        f(
            "terminationMessagePath",
            "string",
            "File the termination message is read from.",
            tag=13,
        ),
        f(
            "terminationMessagePolicy",
            "string",
            "How the termination message is filled.",
            enum=("FallbackToLogsOnError", "File"),
            tag=20,
        ),
        f(
            "imagePullPolicy",
            "string",
            "When the image is pulled.",
            enum=("Always", "IfNotPresent", "Never"),
            tag=14,
        ),
        f("securityContext", SECURITY_CONTEXT, "Security settings.", tag=15),
        f("stdin", "boolean", "Allocate a stdin buffer.", tag=16),
        f("stdinOnce", "boolean", "Close stdin after the first attach ends.", tag=17),
        f("tty", "boolean", "Allocate a TTY.", tag=18),
    )
    if ephemeral:
        out = tuple(replace(fld, embedded=1) for fld in out)
        out += (f("targetContainerName", "string", "Container whose namespaces to share.", tag=2),)
    return out


CONTAINER = struct(
    CORE + "Container",
    "A single application container of a pod.",
    *container_fields(),
)
EPHEMERAL_CONTAINER = struct(
    CORE + "EphemeralContainer",
    "A temporary container added to a running pod for debugging.",
    *container_fields(ephemeral=True),
)
