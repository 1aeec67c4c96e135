"""apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision, and the
autoscaling/v1 Scale of their `scale` subresource (Kubernetes 1.28)."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, Field, f, struct
from draplane.api.schema.pod import POD_TEMPLATE_SPEC
from draplane.api.schema.volumeclaim import PERSISTENT_VOLUME_CLAIM

APPS = "io.k8s.api.apps.v1."


def _selector() -> Field:
    return f("selector", LABEL_SELECTOR, "Label query over the pods it manages.", required=True)


def _template(what: str) -> Field:
    return f("template", POD_TEMPLATE_SPEC, f"The pods {what} creates.", required=True)


def _conditions(struct_name: str) -> Field:
    return f("conditions", Arr(struct_name), "Current observations of its state.", merge="type")


def _condition(kind: str, *, last_update: bool = False) -> str:
    return struct(
        APPS + kind + "Condition",
        f"The state of a {kind} at a point in time.",
        f("type", "string", "Type of the condition.", required=True),
        f("status", "string", "True, False or Unknown.", required=True),
        *(
            (f("lastUpdateTime", "time", "When the condition was last probed.", emit=True),)
            if last_update
            else ()
        ),
        f("lastTransitionTime", "time", "When the status last changed.", emit=True),
        f("reason", "string", "Machine-readable reason of the last transition."),
        f("message", "string", "Human-readable detail of the last transition."),
    )


ROLLING_UPDATE_DEPLOYMENT = struct(
    APPS + "RollingUpdateDeployment",
    "How far a rolling update may go below and above the desired replicas.",
    f("maxUnavailable", "intorstring", "Most pods unavailable during the update (n or n%)."),
    f("maxSurge", "intorstring", "Most pods above the desired count during the update."),
)
DEPLOYMENT_STRATEGY = struct(
    APPS + "DeploymentStrategy",
    "How old pods are replaced by new ones.",
    f("type", "string", "Recreate or RollingUpdate.", enum=("Recreate", "RollingUpdate")),
    f("rollingUpdate", ROLLING_UPDATE_DEPLOYMENT, "Parameters of a RollingUpdate."),
)
DEPLOYMENT_SPEC = struct(
    APPS + "DeploymentSpec",
    "The desired state of a Deployment.",
    f("replicas", "int32", "Desired number of pods."),
    _selector(),
    _template("the Deployment"),
    f(
        "strategy",
        DEPLOYMENT_STRATEGY,
        "How existing pods are replaced.",
        emit=True,
        patch_strategy="retainKeys",
    ),
    f("minReadySeconds", "int32", "Seconds a new pod must be ready to count as available."),
    f("revisionHistoryLimit", "int32", "Old ReplicaSets kept for rollback."),
    f("paused", "boolean", "The Deployment is paused: template changes are not rolled out."),
    f("progressDeadlineSeconds", "int32", "Seconds before a stalled rollout is reported."),
)
DEPLOYMENT_STATUS = struct(
    APPS + "DeploymentStatus",
    "The observed state of a Deployment.",
    f("observedGeneration", "int64", "The generation the controller last acted on."),
    f("replicas", "int32", "Pods targeted by the Deployment."),
    f("updatedReplicas", "int32", "Pods with the current template."),
    f("readyReplicas", "int32", "Ready pods."),
    f("availableReplicas", "int32", "Pods ready for at least minReadySeconds."),
    f("unavailableReplicas", "int32", "Pods still needed for full availability."),
    _conditions(_condition("Deployment", last_update=True)),
    f("collisionCount", "int32", "Counts template hash collisions, to name new ReplicaSets."),
)
DEPLOYMENT = struct(
    APPS + "Deployment",
    "Declarative updates of a replicated set of pods through ReplicaSets.",
    *type_meta(),
    metadata_field(),
    f("spec", DEPLOYMENT_SPEC, "Desired state.", emit=True),
    f("status", DEPLOYMENT_STATUS, "Observed state.", emit=True),
)

REPLICA_SET_SPEC = struct(
    APPS + "ReplicaSetSpec",
    "The desired state of a ReplicaSet.",
    f("replicas", "int32", "Desired number of pods."),
    f("minReadySeconds", "int32", "Seconds a new pod must be ready to count as available."),
    _selector(),
    f("template", POD_TEMPLATE_SPEC, "The pods created when too few exist.", emit=True),
)
REPLICA_SET_STATUS = struct(
    APPS + "ReplicaSetStatus",
    "The observed state of a ReplicaSet.",
    f("replicas", "int32", "Pods matching the selector.", required=True),
    f("fullyLabeledReplicas", "int32", "Pods with the template's labels."),
    f("readyReplicas", "int32", "Ready pods."),
    f("availableReplicas", "int32", "Pods ready for at least minReadySeconds."),
    f("observedGeneration", "int64", "The generation the controller last acted on."),
    _conditions(_condition("ReplicaSet")),
)
REPLICA_SET = struct(
    APPS + "ReplicaSet",
    "Keeps a number of pod replicas running.",
    *type_meta(),
    metadata_field(),
    f("spec", REPLICA_SET_SPEC, "Desired state.", emit=True),
    f("status", REPLICA_SET_STATUS, "Observed state.", emit=True),
)

STATEFUL_SET_UPDATE_STRATEGY = struct(
    APPS + "StatefulSetUpdateStrategy",
    "How the controller replaces the pods of a StatefulSet.",
    f("type", "string", "RollingUpdate or OnDelete.", enum=("OnDelete", "RollingUpdate")),
    f(
        "rollingUpdate",
        struct(
            APPS + "RollingUpdateStatefulSetStrategy",
            "Parameters of a StatefulSet rolling update.",
            f("partition", "int32", "Ordinals at or above it are updated."),
            f("maxUnavailable", "intorstring", "Most pods unavailable during the update."),
        ),
        "Parameters of a RollingUpdate.",
    ),
)
STATEFUL_SET_SPEC = struct(
    APPS + "StatefulSetSpec",
    "The desired state of a StatefulSet.",
    f("replicas", "int32", "Desired number of pods."),
    _selector(),
    _template("the StatefulSet"),
    f(
        "volumeClaimTemplates",
        Arr(PERSISTENT_VOLUME_CLAIM),
        "Claims each pod gets, one per template, named <template>-<pod>.",
        list_type="atomic",
    ),
    f("serviceName", "string", "The governing Service of the pods' DNS names.", required=True),
    f(
        "podManagementPolicy",
        "string",
        "OrderedReady or Parallel pod creation and deletion.",
        enum=("OrderedReady", "Parallel"),
    ),
    f("updateStrategy", STATEFUL_SET_UPDATE_STRATEGY, "How pods are updated.", emit=True),
    f("revisionHistoryLimit", "int32", "ControllerRevisions kept."),
    f("minReadySeconds", "int32", "Seconds a new pod must be ready to count as available."),
    f(
        "persistentVolumeClaimRetentionPolicy",
        struct(
            APPS + "StatefulSetPersistentVolumeClaimRetentionPolicy",
            "What happens to the template claims when the set is deleted or scaled down.",
            f("whenDeleted", "string", "Retain or Delete when the StatefulSet is deleted."),
            f("whenScaled", "string", "Retain or Delete when a pod is scaled away."),
        ),
        "Lifecycle of the claims created from volumeClaimTemplates.",
    ),
    f(
        "ordinals",
        struct(
            APPS + "StatefulSetOrdinals",
            "The numbering of the pods.",
            f("start", "int32", "The first ordinal.", emit=True),
        ),
        "How pods are numbered.",
    ),
)
STATEFUL_SET_STATUS = struct(
    APPS + "StatefulSetStatus",
    "The observed state of a StatefulSet.",
    f("observedGeneration", "int64", "The generation the controller last acted on."),
    f("replicas", "int32", "Pods created.", required=True),
    f("readyReplicas", "int32", "Ready pods."),
    f("currentReplicas", "int32", "Pods at currentRevision."),
    f("updatedReplicas", "int32", "Pods at updateRevision."),
    f("currentRevision", "string", "Revision of the pods before the update."),
    f("updateRevision", "string", "Revision the pods are being updated to."),
    f("collisionCount", "int32", "Counts revision hash collisions."),
    _conditions(_condition("StatefulSet")),
    f("availableReplicas", "int32", "Pods ready for at least minReadySeconds.", emit=True),
)
STATEFUL_SET = struct(
    APPS + "StatefulSet",
    "Pods with stable identities and storage, created and updated in order.",
    *type_meta(),
    metadata_field(),
    f("spec", STATEFUL_SET_SPEC, "Desired state.", emit=True),
    f("status", STATEFUL_SET_STATUS, "Observed state.", emit=True),
)

DAEMON_SET_UPDATE_STRATEGY = struct(
    APPS + "DaemonSetUpdateStrategy",
    "How the controller replaces the pods of a DaemonSet.",
    f("type", "string", "RollingUpdate or OnDelete.", enum=("OnDelete", "RollingUpdate")),
    f(
        "rollingUpdate",
        struct(
            APPS + "RollingUpdateDaemonSet",
            "Parameters of a DaemonSet rolling update.",
            f("maxUnavailable", "intorstring", "Most nodes without an available pod."),
            f("maxSurge", "intorstring", "Most nodes running an old and a new pod at once."),
        ),
        "Parameters of a RollingUpdate.",
    ),
)
DAEMON_SET_SPEC = struct(
    APPS + "DaemonSetSpec",
    "The desired state of a DaemonSet.",
    _selector(),
    _template("the DaemonSet"),
    f("updateStrategy", DAEMON_SET_UPDATE_STRATEGY, "How pods are updated.", emit=True),
    f("minReadySeconds", "int32", "Seconds a new pod must be ready to count as available."),
    f("revisionHistoryLimit", "int32", "ControllerRevisions kept."),
)
DAEMON_SET_STATUS = struct(
    APPS + "DaemonSetStatus",
    "The observed state of a DaemonSet.",
    f("currentNumberScheduled", "int32", "Nodes running a daemon pod that should.", required=True),
    f("numberMisscheduled", "int32", "Nodes running a daemon pod that should not.", required=True),
    f("desiredNumberScheduled", "int32", "Nodes that should run the pod.", required=True),
    f("numberReady", "int32", "Nodes with a ready daemon pod.", required=True),
    f("observedGeneration", "int64", "The generation the controller last acted on."),
    f("updatedNumberScheduled", "int32", "Nodes running the current template."),
    f("numberAvailable", "int32", "Nodes with an available daemon pod."),
    f("numberUnavailable", "int32", "Nodes that should have an available pod and do not."),
    f("collisionCount", "int32", "Counts revision hash collisions."),
    _conditions(_condition("DaemonSet")),
)
DAEMON_SET = struct(
    APPS + "DaemonSet",
    "Runs a copy of a pod on each eligible node.",
    *type_meta(),
    metadata_field(),
    f("spec", DAEMON_SET_SPEC, "Desired state.", emit=True),
    f("status", DAEMON_SET_STATUS, "Observed state.", emit=True),
)

CONTROLLER_REVISION = struct(
    APPS + "ControllerRevision",
    "An immutable snapshot of a StatefulSet's or DaemonSet's template, for rollback.",
    *type_meta(),
    metadata_field(),
    f("data", "object", "The serialized state of the revision."),
    f("revision", "int64", "The revision number.", required=True),
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
            f("replicas", "int32", "Desired number of instances."),
        ),
        "Desired scale.",
        emit=True,
    ),
    f(
        "status",
        struct(
            "io.k8s.api.autoscaling.v1.ScaleStatus",
            "The observed scale.",
            f("replicas", "int32", "Observed number of instances.", required=True),
            f("selector", "string", "Label query over the pods, in label-selector syntax."),
        ),
        "Observed scale.",
        emit=True,
    ),
)
serve("apps", "v1", "Deployment", DEPLOYMENT)
serve("apps", "v1", "ReplicaSet", REPLICA_SET)
serve("apps", "v1", "StatefulSet", STATEFUL_SET)
serve("apps", "v1", "DaemonSet", DAEMON_SET)
serve("apps", "v1", "ControllerRevision", CONTROLLER_REVISION)
serve("autoscaling", "v1", "Scale", SCALE, with_list=False)
