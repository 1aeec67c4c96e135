"""core/v1 Container and what it holds: ports, environment, resources, probes, lifecycle
handlers, mounts and security contexts (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.model import Arr, Field, Map, f, struct

CORE = "io.k8s.api.core.v1."

CONTAINER_PORT = struct(
    CORE + "ContainerPort",
    "A network port a container exposes.",
    f("name", "string", "IANA_SVC_NAME of the port, unique in the pod."),
    f("hostPort", "int32", "Port on the host to expose, if any."),
    f("containerPort", "int32", "Port number on the pod's IP address.", required=True),
    f("protocol", "string", "UDP, TCP or SCTP; TCP by default.", enum=("SCTP", "TCP", "UDP")),
    f("hostIP", "string", "Host IP to bind the host port to."),
)
OBJECT_FIELD_SELECTOR = struct(
    CORE + "ObjectFieldSelector",
    "Selects a field of the pod.",
    f("apiVersion", "string", "Version of the schema fieldPath is written in."),
    f("fieldPath", "string", "Path of the field to select.", required=True),
)
RESOURCE_FIELD_SELECTOR = struct(
    CORE + "ResourceFieldSelector",
    "Selects a container resource (limits.cpu, requests.memory, ...).",
    f("containerName", "string", "The container; required for volumes."),
    f("resource", "string", "The resource to select.", required=True),
    f("divisor", "quantity", "Output unit; 1 by default."),
)


def _key_selector(name: str, what: str) -> str:
    return struct(
        CORE + name,
        f"Selects a key of a {what}.",
        f("name", "string", f"Name of the {what}."),
        f("key", "string", "The key to select.", required=True),
        f("optional", "boolean", f"Whether the {what} or its key may be missing."),
    )


def _env_source(name: str, what: str) -> str:
    return struct(
        CORE + name,
        f"Every key of a {what} as environment variables.",
        f("name", "string", f"Name of the {what}."),
        f("optional", "boolean", f"Whether the {what} may be missing."),
    )


ENV_VAR_SOURCE = struct(
    CORE + "EnvVarSource",
    "Where an environment variable's value comes from.",
    f("fieldRef", OBJECT_FIELD_SELECTOR, "A field of the pod."),
    f("resourceFieldRef", RESOURCE_FIELD_SELECTOR, "A resource limit or request of a container."),
    f("configMapKeyRef", _key_selector("ConfigMapKeySelector", "ConfigMap"), "A ConfigMap key."),
    f("secretKeyRef", _key_selector("SecretKeySelector", "Secret"), "A Secret key."),
)
ENV_VAR = struct(
    CORE + "EnvVar",
    "An environment variable of a container.",
    f("name", "string", "Name of the variable.", required=True),
    f("value", "string", "The value; $(VAR) references are expanded."),
    f("valueFrom", ENV_VAR_SOURCE, "Source of the value when value is empty."),
)
ENV_FROM_SOURCE = struct(
    CORE + "EnvFromSource",
    "A set of environment variables from a ConfigMap or Secret.",
    f("prefix", "string", "Prefix added to every key."),
    f("configMapRef", _env_source("ConfigMapEnvSource", "ConfigMap"), "The ConfigMap."),
    f("secretRef", _env_source("SecretEnvSource", "Secret"), "The Secret."),
)
RESOURCE_CLAIM = struct(
    CORE + "ResourceClaim",
    "A reference to one entry of the pod's spec.resourceClaims.",
    f("name", "string", "Name of an entry in pod.spec.resourceClaims.", required=True),
)
RESOURCE_REQUIREMENTS = struct(
    CORE + "ResourceRequirements",
    "Compute resources a container needs (requests) and may use (limits).",
    f("limits", Map("quantity"), "The most of each resource the container may use."),
    f("requests", Map("quantity"), "The least of each resource the container needs."),
    f(
        "claims",
        Arr(RESOURCE_CLAIM),
        "Dynamically allocated resources (spec.resourceClaims entries) the container uses.",
        list_type="map",
        map_keys=("name",),
    ),
)
CONTAINER_RESIZE_POLICY = struct(
    CORE + "ContainerResizePolicy",
    "How a container reacts to a resize of one resource.",
    f("resourceName", "string", "The resource (cpu, memory).", required=True),
    f("restartPolicy", "string", "NotRequired or RestartContainer.", required=True),
)
VOLUME_MOUNT = struct(
    CORE + "VolumeMount",
    "Mounts a volume in a container.",
    f("name", "string", "The volume's name.", required=True),
    f("readOnly", "boolean", "Mount read-only."),
    f("mountPath", "string", "Path in the container to mount at.", required=True),
    f("subPath", "string", "Path within the volume to mount instead of its root."),
    f("mountPropagation", "string", "How mounts propagate between host and container."),
    f("subPathExpr", "string", "subPath with $(VAR) expansion."),
)
VOLUME_DEVICE = struct(
    CORE + "VolumeDevice",
    "Maps a raw block volume into a container.",
    f("name", "string", "The PersistentVolumeClaim volume's name.", required=True),
    f("devicePath", "string", "Device path in the container.", required=True),
)
EXEC_ACTION = struct(
    CORE + "ExecAction",
    "Runs a command in the container.",
    f("command", Arr("string"), "Command line; exit status 0 is success."),
)
HTTP_HEADER = struct(
    CORE + "HTTPHeader",
    "A custom HTTP header.",
    f("name", "string", "Header name.", required=True),
    f("value", "string", "Header value.", required=True),
)
HTTP_GET_ACTION = struct(
    CORE + "HTTPGetAction",
    "An HTTP GET request.",
    f("path", "string", "Path on the server."),
    f("port", "intorstring", "Port number or name.", required=True),
    f("host", "string", "Host to connect to; the pod IP by default."),
    f("scheme", "string", "HTTP or HTTPS.", enum=("HTTP", "HTTPS")),
    f("httpHeaders", Arr(HTTP_HEADER), "Extra request headers."),
)
TCP_SOCKET_ACTION = struct(
    CORE + "TCPSocketAction",
    "Opens a TCP connection.",
    f("port", "intorstring", "Port number or name.", required=True),
    f("host", "string", "Host to connect to; the pod IP by default."),
)
GRPC_ACTION = struct(
    CORE + "GRPCAction",
    "A gRPC health check.",
    f("port", "int32", "Port of the gRPC service.", required=True),
    f("service", "string", "Service name in the health check request."),
)


def _handler_fields() -> tuple[Field, ...]:
    return (
        f("exec", EXEC_ACTION, "Run a command."),
        f("httpGet", HTTP_GET_ACTION, "Send an HTTP GET."),
        f("tcpSocket", TCP_SOCKET_ACTION, "Open a TCP connection."),
    )


PROBE = struct(
    CORE + "Probe",
    "A health check of a container and when it runs.",
    *_handler_fields(),
    f("grpc", GRPC_ACTION, "Call the gRPC health service."),
    f("initialDelaySeconds", "int32", "Seconds after start before the first probe."),
    f("timeoutSeconds", "int32", "Seconds before a probe times out."),
    f("periodSeconds", "int32", "Seconds between probes."),
    f("successThreshold", "int32", "Successes in a row to count as healthy."),
    f("failureThreshold", "int32", "Failures in a row to count as failed."),
    f("terminationGracePeriodSeconds", "int64", "Grace period when a failed probe kills."),
)
LIFECYCLE_HANDLER = struct(
    CORE + "LifecycleHandler",
    "An action run at a container lifecycle event.",
    *_handler_fields(),
)
LIFECYCLE = struct(
    CORE + "Lifecycle",
    "Actions run right after a container starts and before it stops.",
    f("postStart", LIFECYCLE_HANDLER, "Runs right after the container is created."),
    f("preStop", LIFECYCLE_HANDLER, "Runs before the container is terminated."),
)
CAPABILITIES = struct(
    CORE + "Capabilities",
    "POSIX capabilities added to or dropped from a container.",
    f("add", Arr("string"), "Capabilities to add."),
    f("drop", Arr("string"), "Capabilities to drop."),
)
SE_LINUX_OPTIONS = struct(
    CORE + "SELinuxOptions",
    "An SELinux label.",
    f("user", "string", "SELinux user."),
    f("role", "string", "SELinux role."),
    f("type", "string", "SELinux type."),
    f("level", "string", "SELinux level."),
)
WINDOWS_OPTIONS = struct(
    CORE + "WindowsSecurityContextOptions",
    "Windows-specific security settings.",
    f("gmsaCredentialSpecName", "string", "Name of the GMSA credential spec."),
    f("gmsaCredentialSpec", "string", "Contents of the GMSA credential spec."),
    f("runAsUserName", "string", "User name to run the entrypoint as."),
    f("hostProcess", "boolean", "Run as a host process container."),
)
SECCOMP_PROFILE = struct(
    CORE + "SeccompProfile",
    "A seccomp profile.",
    f("type", "string", "Localhost, RuntimeDefault or Unconfined.", required=True),
    f("localhostProfile", "string", "Path of a profile on the node (type Localhost)."),
)
SECURITY_CONTEXT = struct(
    CORE + "SecurityContext",
    "Security settings of one container; they override the pod's.",
    f("capabilities", CAPABILITIES, "Capabilities to add or drop."),
    f("privileged", "boolean", "Run as privileged (root on the host)."),
    f("seLinuxOptions", SE_LINUX_OPTIONS, "SELinux context."),
    f("windowsOptions", WINDOWS_OPTIONS, "Windows settings."),
    f("runAsUser", "int64", "UID to run the entrypoint as."),
    f("runAsGroup", "int64", "GID to run the entrypoint as."),
    f("runAsNonRoot", "boolean", "Refuse to start as UID 0."),
    f("readOnlyRootFilesystem", "boolean", "Mount the root filesystem read-only."),
    f("allowPrivilegeEscalation", "boolean", "Whether a process may gain privileges."),
    f("procMount", "string", "Default or Unmasked /proc."),
    f("seccompProfile", SECCOMP_PROFILE, "Seccomp profile."),
)
SYSCTL = struct(
    CORE + "Sysctl",
    "A kernel parameter to set.",
    f("name", "string", "Parameter name.", required=True),
    f("value", "string", "Parameter value.", required=True),
)
POD_SECURITY_CONTEXT = struct(
    CORE + "PodSecurityContext",
    "Security settings of every container of a pod.",
    f("seLinuxOptions", SE_LINUX_OPTIONS, "SELinux context."),
    f("windowsOptions", WINDOWS_OPTIONS, "Windows settings."),
    f("runAsUser", "int64", "UID to run entrypoints as."),
    f("runAsGroup", "int64", "GID to run entrypoints as."),
    f("runAsNonRoot", "boolean", "Refuse to start containers as UID 0."),
    f("supplementalGroups", Arr("int64"), "Extra groups of each container's first process."),
    f("fsGroup", "int64", "Group owning the pod's volumes."),
    f("sysctls", Arr(SYSCTL), "Namespaced kernel parameters."),
    f("fsGroupChangePolicy", "string", "OnRootMismatch or Always."),
    f("seccompProfile", SECCOMP_PROFILE, "Seccomp profile."),
)


def container_fields(*, ephemeral: bool = False) -> tuple[Field, ...]:
    out: tuple[Field, ...] = (
        f("name", "string", "Name of the container, unique in the pod.", required=True),
        f("image", "string", "Container image name."),
        f("command", Arr("string"), "Entrypoint, instead of the image's ENTRYPOINT."),
        f("args", Arr("string"), "Arguments, instead of the image's CMD."),
        f("workingDir", "string", "Working directory."),
        f(
            "ports",
            Arr(CONTAINER_PORT),
            "Ports the container exposes.",
            merge="containerPort",
            list_type="map",
            map_keys=("containerPort", "protocol"),
        ),
        f("envFrom", Arr(ENV_FROM_SOURCE), "Environment variables from ConfigMaps or Secrets."),
        f("env", Arr(ENV_VAR), "Environment variables.", merge="name"),
        f("resources", RESOURCE_REQUIREMENTS, "Compute resources.", emit=True),
        f(
            "resizePolicy",
            Arr(CONTAINER_RESIZE_POLICY),
            "How each resource is resized.",
            list_type="atomic",
        ),
        f("restartPolicy", "string", "Always makes an init container a sidecar."),
        f("volumeMounts", Arr(VOLUME_MOUNT), "Volumes to mount.", merge="mountPath"),
        f("volumeDevices", Arr(VOLUME_DEVICE), "Block devices to map.", merge="devicePath"),
        f("livenessProbe", PROBE, "Restart the container when this fails."),
        f("readinessProbe", PROBE, "Remove the pod from endpoints when this fails."),
        f("startupProbe", PROBE, "Other probes wait until this succeeds."),
        f("lifecycle", LIFECYCLE, "Actions at start and stop."),
        f("terminationMessagePath", "string", "File the termination message is read from."),
        f(
            "terminationMessagePolicy",
            "string",
            "How the termination message is filled.",
            enum=("FallbackToLogsOnError", "File"),
        ),
        f(
            "imagePullPolicy",
            "string",
            "When the image is pulled.",
            enum=("Always", "IfNotPresent", "Never"),
        ),
        f("securityContext", SECURITY_CONTEXT, "Security settings."),
        f("stdin", "boolean", "Allocate a stdin buffer."),
        f("stdinOnce", "boolean", "Close stdin after the first attach ends."),
        f("tty", "boolean", "Allocate a TTY."),
    )
    if ephemeral:
        out += (f("targetContainerName", "string", "Container whose namespaces to share."),)
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
