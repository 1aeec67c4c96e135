"""apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision, and the
autoscaling/v1 Scale of their `scale` subresource (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Field, f, struct
from draplane.api.schema.pod import POD_TEMPLATE_SPEC
from draplane.api.schema.volumeclaim import PERSISTENT_VOLUME_CLAIM

APPS = "io.k8s.api.apps.v1."


def _selector(tag: int) -> Field:
    return f(
        "selector", LABEL_SELECTOR, "Label query over the pods it manages.", required=True, tag=tag
    )


def _template(what: str, tag: int) -> Field:
    return f("template", POD_TEMPLATE_SPEC, f"The pods {what} creates.", required=True, tag=tag)


def _conditions(struct_name: str, tag: int) -> Field:
    return f(
        "conditions", Arr(struct_name), "Current observations of its state.", merge="type", tag=tag
    )


def _min_ready_seconds(tag: int) -> Field:
    return f(
        "minReadySeconds",
        "int32",
        "Seconds a new pod must be ready to count as available.",
        tag=tag,
    )


def _spec_status(spec: str, status: str) -> tuple[Field, Field]:
    """A kind's `spec` and `status` (protobuf fields 2 and 3, after metadata)."""
    return (
        f("spec", spec, "Desired state.", emit=True, tag=2),
        f("status", status, "Observed state.", emit=True, tag=3),
    )


def _condition(kind: str, *, last_update: bool = False) -> str:
    """A <kind>Condition; DeploymentCondition alone has lastUpdateTime (6), and its
    lastTransitionTime is field 7, not 3."""
    return struct(
        APPS + kind + "Condition",
        f"The state of a {kind} at a point in time.",
        f("type", "string", "Type of the condition.", required=True, tag=1),
        f("status", "string", "True, False or Unknown.", required=True, tag=2),
        *(
            (f("lastUpdateTime", "time", "When the condition was last probed.", emit=True, tag=6),)
            if last_update
            else ()
        ),
        f(
            "lastTransitionTime",
            "time",
            "When the status last changed.",
            emit=True,
            tag=7 if last_update else 3,
        ),
        f("reason", "string", "Machine-readable reason of the last transition.", tag=4),
        f("message", "string", "Human-readable detail of the last transition.", tag=5),
    )


ROLLING_UPDATE_DEPLOYMENT = struct(
    APPS + "RollingUpdateDeployment",
    "How far a rolling update may go below and above the desired replicas.",
    f(
        "maxUnavailable",
        "intorstring",
        "Most pods unavailable during the update (n or n%).",
        tag=1,
        pointer=True,
    ),
    f(
        "maxSurge",
        "intorstring",
        "Most pods above the desired count during the update.",
        tag=2,
        pointer=True,
    ),
)
DEPLOYMENT_STRATEGY = struct(
    APPS + "DeploymentStrategy",
    "How old pods are replaced by new ones.",
    f("type", "string", "Recreate or RollingUpdate.", enum=("Recreate", "RollingUpdate"), tag=1),
    f("rollingUpdate", ROLLING_UPDATE_DEPLOYMENT, "Parameters of a RollingUpdate.", tag=2),
)
DEPLOYMENT_SPEC = struct(
    APPS + "DeploymentSpec",
    "The desired state of a Deployment.",
    f("replicas", "int32", "Desired number of pods.", tag=1, pointer=True),
    _selector(2),
    _template("the Deployment", 3),
    f(
        "strategy",
        DEPLOYMENT_STRATEGY,
        "How existing pods are replaced.",
        emit=True,
        patch_strategy="retainKeys",
        tag=4,
    ),
    _min_ready_seconds(5),
    f("revisionHistoryLimit", "int32", "Old ReplicaSets kept for rollback.", tag=6, pointer=True),
    f(
        "paused",
        "boolean",
        "The Deployment is paused: template changes are not rolled out.",
        tag=7,
    ),
    f(
        "progressDeadlineSeconds",
        "int32",
        "Seconds before a stalled rollout is reported.",
        tag=9,
        pointer=True,
    ),
)
DEPLOYMENT_STATUS = struct(
    APPS + "DeploymentStatus",
    "The observed state of a Deployment.",
    f("observedGeneration", "int64", "The generation the controller last acted on.", tag=1),
    f("replicas", "int32", "Pods targeted by the Deployment.", tag=2),
    f("updatedReplicas", "int32", "Pods with the current template.", tag=3),
    f("readyReplicas", "int32", "Ready pods.", tag=7),
    f("availableReplicas", "int32", "Pods ready for at least minReadySeconds.", tag=4),
    f("unavailableReplicas", "int32", "Pods still needed for full availability.", tag=5),
    _conditions(_condition("Deployment", last_update=True), 6),
    f(
        "collisionCount",
        "int32",
        "Counts template hash collisions, to name new ReplicaSets.",
        tag=8,
        pointer=True,
    ),
)
DEPLOYMENT = struct(
    APPS + "Deployment",
    "Declarative updates of a replicated set of pods through ReplicaSets.",
    *type_meta(),
    metadata_field(),
    *_spec_status(DEPLOYMENT_SPEC, DEPLOYMENT_STATUS),
)

REPLICA_SET_SPEC = struct(
    APPS + "ReplicaSetSpec",
    "The desired state of a ReplicaSet.",
    f("replicas", "int32", "Desired number of pods.", tag=1, pointer=True),
    _min_ready_seconds(4),
    _selector(2),
    f("template", POD_TEMPLATE_SPEC, "The pods created when too few exist.", emit=True, tag=3),
)
REPLICA_SET_STATUS = struct(
    APPS + "ReplicaSetStatus",
    "The observed state of a ReplicaSet.",
    f("replicas", "int32", "Pods matching the selector.", required=True, tag=1),
    f("fullyLabeledReplicas", "int32", "Pods with the template's labels.", tag=2),
    f("readyReplicas", "int32", "Ready pods.", tag=4),
    f("availableReplicas", "int32", "Pods ready for at least minReadySeconds.", tag=5),
    f("observedGeneration", "int64", "The generation the controller last acted on.", tag=3),
    _conditions(_condition("ReplicaSet"), 6),
)
REPLICA_SET = struct(
    APPS + "ReplicaSet",
    "Keeps a number of pod replicas running.",
    *type_meta(),
    metadata_field(),
    *_spec_status(REPLICA_SET_SPEC, REPLICA_SET_STATUS),
)

STATEFUL_SET_UPDATE_STRATEGY = struct(
    APPS + "StatefulSetUpdateStrategy",
    "How the controller replaces the pods of a StatefulSet.",
    f("type", "string", "RollingUpdate or OnDelete.", enum=("OnDelete", "RollingUpdate"), tag=1),
    f(
        "rollingUpdate",
        struct(
            APPS + "RollingUpdateStatefulSetStrategy",
            "Parameters of a StatefulSet rolling update.",
            f("partition", "int32", "Ordinals at or above it are updated.", tag=1, pointer=True),
            f(
                "maxUnavailable",
                "intorstring",
                "Most pods unavailable during the update.",
                tag=2,
                pointer=True,
            ),
        ),
        "Parameters of a RollingUpdate.",
        tag=2,
    ),
)
STATEFUL_SET_SPEC = struct(
    APPS + "StatefulSetSpec",
    "The desired state of a StatefulSet.",
    f("replicas", "int32", "Desired number of pods.", tag=1, pointer=True),
    _selector(2),
    _template("the StatefulSet", 3),
    f(
        "volumeClaimTemplates",
        Arr(PERSISTENT_VOLUME_CLAIM),
        "Claims each pod gets, one per template, named <template>-<pod>.",
        list_type="atomic",
        tag=4,
    ),
    f(
        "serviceName",
        "string",
        "The governing Service of the pods' DNS names.",
        required=True,
        tag=5,
    ),
    f(
        "podManagementPolicy",
        "string",
        "OrderedReady or Parallel pod creation and deletion.",
        enum=("OrderedReady", "Parallel"),
        tag=6,
    ),
    f("updateStrategy", STATEFUL_SET_UPDATE_STRATEGY, "How pods are updated.", emit=True, tag=7),
    f("revisionHistoryLimit", "int32", "ControllerRevisions kept.", tag=8, pointer=True),
    _min_ready_seconds(9),
    f(
        "persistentVolumeClaimRetentionPolicy",
        struct(
            APPS + "StatefulSetPersistentVolumeClaimRetentionPolicy",
            "What happens to the template claims when the set is deleted or scaled down.",
            f("whenDeleted", "string", "Retain or Delete when the StatefulSet is deleted.", tag=1),
            f("whenScaled", "string", "Retain or Delete when a pod is scaled away.", tag=2),
        ),
        "Lifecycle of the claims created from volumeClaimTemplates.",
        tag=10,
    ),
    f(
        "ordinals",
        struct(
            APPS + "StatefulSetOrdinals",
            "The numbering of the pods.",
            f("start", "int32", "The first ordinal.", emit=True, tag=1),
        ),
        "How pods are numbered.",
        tag=11,
    ),
)
STATEFUL_SET_STATUS = struct(
    APPS + "StatefulSetStatus",
    "The observed state of a StatefulSet.",
    f("observedGeneration", "int64", "The generation the controller last acted on.", tag=1),
    f("replicas", "int32", "Pods created.", required=True, tag=2),
    f("readyReplicas", "int32", "Ready pods.", tag=3),
    f("currentReplicas", "int32", "Pods at currentRevision.", tag=4),
    f("updatedReplicas", "int32", "Pods at updateRevision.", tag=5),
    f("currentRevision", "string", "Revision of the pods before the update.", tag=6),
    f("updateRevision", "string", "Revision the pods are being updated to.", tag=7),
    f("collisionCount", "int32", "Counts revision hash collisions.", tag=9, pointer=True),
    _conditions(_condition("StatefulSet"), 10),
    f(
        "availableReplicas",
        "int32",
        "Pods ready for at least minReadySeconds.",
        emit=True,
        tag=11,
    ),
)
STATEFUL_SET = struct(
    APPS + "StatefulSet",
    "Pods with stable identities and storage, created and updated in order.",
    *type_meta(),
    metadata_field(),
    *_spec_status(STATEFUL_SET_SPEC, STATEFUL_SET_STATUS),
)

DAEMON_SET_UPDATE_STRATEGY = struct(
    APPS + "DaemonSetUpdateStrategy",
    "How the controller replaces the pods of a DaemonSet.",
    f("type", "string", "RollingUpdate or OnDelete.", enum=("OnDelete", "RollingUpdate"), tag=1),
    f(
        "rollingUpdate",
        struct(
            APPS + "RollingUpdateDaemonSet",
            "Parameters of a DaemonSet rolling update.",
            f(
                "maxUnavailable",
                "intorstring",
                "Most nodes without an available pod.",
                tag=1,
                pointer=True,
            ),
            f(
                "maxSurge",
                "intorstring",
                "Most nodes running an old and a new pod at once.",
                tag=2,
                pointer=True,
            ),
        ),
        "Parameters of a RollingUpdate.",
        tag=2,
    ),
)
DAEMON_SET_SPEC = struct(
    APPS + "DaemonSetSpec",
    "The desired state of a DaemonSet.",
    _selector(1),
    _template("the DaemonSet", 2),
    f("updateStrategy", DAEMON_SET_UPDATE_STRATEGY, "How pods are updated.", emit=True, tag=3),
    _min_ready_seconds(4),
    f("revisionHistoryLimit", "int32", "ControllerRevisions kept.", tag=6, pointer=True),
)
DAEMON_SET_STATUS = struct(
    APPS + "DaemonSetStatus",
    "The observed state of a DaemonSet.",
    f(
        "currentNumberScheduled",
        "int32",
        "Nodes running a daemon pod that should.",
        required=True,
        tag=1,
    ),
    f(
        "numberMisscheduled",
        "int32",
        "Nodes running a daemon pod that should not.",
        required=True,
        tag=2,
    ),
    f(
        "desiredNumberScheduled",
        "int32",
        "Nodes that should run the pod.",
        required=True,
        tag=3,
    ),
    f("numberReady", "int32", "Nodes with a ready daemon pod.", required=True, tag=4),
    f("observedGeneration", "int64", "The generation the controller last acted on.", tag=5),
    f("updatedNumberScheduled", "int32", "Nodes running the current template.", tag=6),
    f("numberAvailable", "int32", "Nodes with an available daemon pod.", tag=7),
    f(
        "numberUnavailable",
        "int32",
        "Nodes that should have an available pod and do not.",
        tag=8,
    ),
    f("collisionCount", "int32", "Counts revision hash collisions.", tag=9, pointer=True),
    _conditions(_condition("DaemonSet"), 10),
)
DAEMON_SET = struct(
    APPS + "DaemonSet",
    "Runs a copy of a pod on each eligible node.",
    *type_meta(),
    metadata_field(),
    *_spec_status(DAEMON_SET_SPEC, DAEMON_SET_STATUS),
)

CONTROLLER_REVISION = struct(
    APPS + "ControllerRevision",
    "An immutable snapshot of a StatefulSet's or DaemonSet's template, for rollback.",
    *type_meta(),
    metadata_field(),
    f("data", "object", "The serialized state of the revision.", tag=2, wire="raw"),
    f("revision", "int64", "The revision number.", required=True, tag=3),
)

SCALE = struct(
    "io.k8s.api.autoscaling.v1.Scale",
    "The scale subresource: the desired and observed replicas of a scalable object.",
    *type_meta(),
    metadata_field(),
    f(
        "spec",
        struct(
            "io.k8s.api.autoscaling.v1.ScaleSpec",
            "The desired scale.",
            f("replicas", "int32", "Desired number of instances.", tag=1),
        ),
        "Desired scale.",
        emit=True,
        tag=2,
    ),
    f(
        "status",
        struct(
            "io.k8s.api.autoscaling.v1.ScaleStatus",
            "The observed scale.",
            f("replicas", "int32", "Observed number of instances.", required=True, tag=1),
            f("selector", "string", "Label query over the pods, in label-selector syntax.", tag=2),
        ),
        "Observed scale.",
        emit=True,
        tag=3,
    ),
)
serve("apps", "v1", "Deployment", DEPLOYMENT)
serve("apps", "v1", "ReplicaSet", REPLICA_SET)
serve("apps", "v1", "StatefulSet", STATEFUL_SET)
serve("apps", "v1", "DaemonSet", DAEMON_SET)
serve("apps", "v1", "ControllerRevision", CONTROLLER_REVISION)
serve("autoscaling", "v1", "Scale", SCALE, with_list=False)
