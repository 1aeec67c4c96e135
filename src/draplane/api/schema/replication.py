"""core/v1 ReplicationController (k8s.io/api/core/v1), with the protobuf field numbers of its
generated.proto; its pod template is the PodTemplateSpec every workload holds."""

from __future__ import annotations

from draplane.api.schema.meta import metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Map, f, struct
from draplane.api.schema.pod import POD_TEMPLATE_SPEC

CORE = "io.k8s.api.core.v1."

REPLICATION_CONTROLLER_SPEC = struct(
    CORE + "ReplicationControllerSpec",
    "The desired state of a replication controller.",
    f("replicas", "int32", "Desired number of pods (1 when unset).", tag=1, pointer=True),
    f(
        "minReadySeconds",
        "int32",
        "Seconds a new pod must be ready to count as available.",
        tag=4,
    ),
    f(
        "selector",
        Map("string"),
        "Labels of the pods it counts; the template's labels when empty.",
        map_type="atomic",
        tag=2,
    ),
    f("template", POD_TEMPLATE_SPEC, "The pods it creates.", tag=3),
)
REPLICATION_CONTROLLER_CONDITION = struct(
    CORE + "ReplicationControllerCondition",
    "The state of a replication controller at a point in time.",
    f("type", "string", "Type of the condition.", required=True, tag=1),
    f("status", "string", "True, False or Unknown.", required=True, tag=2),
    f("lastTransitionTime", "time", "When the status last changed.", tag=3),
    f("reason", "string", "Machine-readable reason of the last transition.", tag=4),
    f("message", "string", "Human-readable detail of the last transition.", tag=5),
)
REPLICATION_CONTROLLER_STATUS = struct(
    CORE + "ReplicationControllerStatus",
    "The observed state of a replication controller.",
    f("replicas", "int32", "Pods it counts.", required=True, tag=1),
    f("fullyLabeledReplicas", "int32", "Pods with all the template's labels.", tag=2),
    f("readyReplicas", "int32", "Ready pods.", tag=4),
    f("availableReplicas", "int32", "Pods ready for at least minReadySeconds.", tag=5),
    f("observedGeneration", "int64", "The generation the controller last acted on.", tag=3),
    f(
        "conditions",
        Arr(REPLICATION_CONTROLLER_CONDITION),
        "Current observations of its state.",
        merge="type",
        tag=6,
    ),
)
REPLICATION_CONTROLLER = struct(
    CORE + "ReplicationController",
    "Keeps a number of pods of one template running.",
    *type_meta(),
    metadata_field(),
    f("spec", REPLICATION_CONTROLLER_SPEC, "Desired state.", emit=True, tag=2),
    f("status", REPLICATION_CONTROLLER_STATUS, "Observed state.", emit=True, tag=3),
)

serve("", "v1", "ReplicationController", REPLICATION_CONTROLLER)
