"""core/v1 PodStatus: conditions, IPs, the container statuses and the generated ResourceClaims
(Kubernetes 1.28; `podclaims` adds 1.36's extendedResourceClaimStatus)."""

from __future__ import annotations

from draplane.api.schema.container import RESOURCE_REQUIREMENTS
from draplane.api.schema.model import Arr, Map, f, struct

CORE = "io.k8s.api.core.v1."

POD_CONDITION = struct(
    CORE + "PodCondition",
    "One aspect of the pod's state.",
    f("type", "string", "The condition (PodScheduled, Ready, ...).", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastProbeTime", "time", "When the condition was last probed.", emit=True, tag=3),
    f("lastTransitionTime", "time", "When the status last changed.", emit=True, tag=4),
    f("reason", "string", "Machine-readable reason of the last transition.", tag=5),
    f("message", "string", "Human-readable detail of the last transition.", tag=6),
)
HOST_IP = struct(CORE + "HostIP", "An IP of the pod's node.", f("ip", "string", "The IP.", tag=1))
POD_IP = struct(CORE + "PodIP", "An IP of the pod.", f("ip", "string", "The IP.", tag=1))
STATE_WAITING = struct(
    CORE + "ContainerStateWaiting",
    "The container is not running yet.",
    f("reason", "string", "Why it is waiting.", tag=1),
    f("message", "string", "Detail of why it is waiting.", tag=2),
)
STATE_RUNNING = struct(
    CORE + "ContainerStateRunning",
    "The container is running.",
    f("startedAt", "time", "When it last started.", emit=True, tag=1),
)
STATE_TERMINATED = struct(
    CORE + "ContainerStateTerminated",
    "The container ran and exited.",
    f("exitCode", "int32", "Exit status of the last run.", required=True, tag=1),
    f("signal", "int32", "Signal that ended it.", tag=2),
    f("reason", "string", "Why it terminated.", tag=3),
    f("message", "string", "Detail of why it terminated.", tag=4),
    f("startedAt", "time", "When it started.", emit=True, tag=5),
    f("finishedAt", "time", "When it ended.", emit=True, tag=6),
    f("containerID", "string", "Runtime ID of the container.", tag=7),
)
CONTAINER_STATE = struct(
    CORE + "ContainerState",
    "Where the container is in its lifecycle; at most one field is set.",
    f("waiting", STATE_WAITING, "Waiting to run.", tag=1),
    f("running", STATE_RUNNING, "Running.", tag=2),
    f("terminated", STATE_TERMINATED, "Exited.", tag=3),
)
CONTAINER_STATUS = struct(
    CORE + "ContainerStatus",
    "The observed state of one container.",
    f("name", "string", "Name of the container.", required=True, tag=1),
    f("state", CONTAINER_STATE, "Current state.", emit=True, tag=2),
    f("lastState", CONTAINER_STATE, "State of the previous run.", emit=True, tag=3),
    f("ready", "boolean", "Passed its readiness probe.", required=True, tag=4),
    f("restartCount", "int32", "Times the container restarted.", required=True, tag=5),
    f("image", "string", "Image it runs.", required=True, tag=6),
    f("imageID", "string", "ID of the image it runs.", required=True, tag=7),
    f("containerID", "string", "Runtime ID of the container.", tag=8),
    f("started", "boolean", "Passed its startup probe.", tag=9, pointer=True),
    f("allocatedResources", Map("quantity"), "Resources the node allocated to it.", tag=10),
    f("resources", RESOURCE_REQUIREMENTS, "Resources the runtime applied.", tag=11),
)
POD_RESOURCE_CLAIM_STATUS = struct(
    CORE + "PodResourceClaimStatus",
    "The ResourceClaim that was generated for a pod's claim from a template.",
    f("name", "string", "Name of the entry in spec.resourceClaims.", required=True, tag=1),
    f(
        "resourceClaimName",
        "string",
        "Name of the generated ResourceClaim; unset if none.",
        tag=2,
        pointer=True,
    ),
)
POD_STATUS = struct(
    CORE + "PodStatus",
    "The observed state of a pod.",
    f(
        "phase",
        "string",
        "Where the pod is in its lifecycle.",
        enum=("Failed", "Pending", "Running", "Succeeded", "Unknown"),
        tag=1,
    ),
    f("conditions", Arr(POD_CONDITION), "Current conditions.", merge="type", tag=2),
    f("message", "string", "Why the pod is in this state.", tag=3),
    f("reason", "string", "Machine-readable reason of the state (Evicted, ...).", tag=4),
    f("nominatedNodeName", "string", "Node a preemption made room on.", tag=11),
    f("hostIP", "string", "IP of the node.", tag=5),
    f("hostIPs", Arr(HOST_IP), "IPs of the node.", merge="ip", list_type="atomic", tag=16),
    f("podIP", "string", "IP of the pod.", tag=6),
    f("podIPs", Arr(POD_IP), "IPs of the pod.", merge="ip", tag=12),
    f("startTime", "time", "When the kubelet accepted the pod.", tag=7),
    f("initContainerStatuses", Arr(CONTAINER_STATUS), "Init container states.", tag=10),
    f("containerStatuses", Arr(CONTAINER_STATUS), "Container states.", tag=8),
    f(
        "qosClass",
        "string",
        "Quality of service class.",
        enum=("BestEffort", "Burstable", "Guaranteed"),
        tag=9,
    ),
    f("ephemeralContainerStatuses", Arr(CONTAINER_STATUS), "Ephemeral container states.", tag=13),
    f("resize", "string", "State of a requested resize.", tag=14),
    f(
        "resourceClaimStatuses",
        Arr(POD_RESOURCE_CLAIM_STATUS),
        "Names of the ResourceClaims generated for the pod.",
        merge="name",
        patch_strategy="merge,retainKeys",
        list_type="map",
        tag=15,
    ),
)
