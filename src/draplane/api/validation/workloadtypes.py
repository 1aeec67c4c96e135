"""The JSON types of the apps/v1 and batch/v1 kinds' fields (the `fieldtypes` tables for the
workloads), registered into `fieldtypes.KIND_FIELDS` by `draplane.api.validation`.

`replicas`, counters and seconds are integers; `maxSurge`/`maxUnavailable` are int-or-string
and checked by validation; templates are checked with the pod spec's table.
"""

from __future__ import annotations

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.validation.fieldtypes import (
    _CONDITION,
    _LABEL_SELECTOR,
    _POD_SPEC,
    _STRINGS,
    _TOP,
    BOOLEAN,
    INTEGER,
    OBJECT,
    OBJECT_META,
    STRING,
    TIME,
    Spec,
)

_TEMPLATE: Spec = {"metadata": OBJECT_META, "spec": _POD_SPEC}
_WORKLOAD_CONDITIONS: Spec = [{**_CONDITION, "lastUpdateTime": TIME}]


def _ints(*fields: str) -> Spec:
    return dict.fromkeys(fields, INTEGER)


_DEPLOYMENT: Spec = {
    **_TOP,
    "spec": {
        **_ints("replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"),
        "selector": _LABEL_SELECTOR,
        "template": _TEMPLATE,
        "strategy": {"type": STRING, "rollingUpdate": OBJECT},
        "paused": BOOLEAN,
    },
    "status": {
        **_ints(
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "terminatingReplicas",
            "collisionCount",
        ),
        "conditions": _WORKLOAD_CONDITIONS,
    },
}
_REPLICA_SET: Spec = {
    **_TOP,
    "spec": {
        **_ints("replicas", "minReadySeconds"),
        "selector": _LABEL_SELECTOR,
        "template": _TEMPLATE,
    },
    "status": {
        **_ints(
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "terminatingReplicas",
            "observedGeneration",
        ),
        "conditions": [_CONDITION],
    },
}
_STATEFUL_SET: Spec = {
    **_TOP,
    "spec": {
        **_ints("replicas", "minReadySeconds", "revisionHistoryLimit"),
        "selector": _LABEL_SELECTOR,
        "template": _TEMPLATE,
        "serviceName": STRING,
        "podManagementPolicy": STRING,
        "updateStrategy": {"type": STRING, "rollingUpdate": {"partition": INTEGER}},
        "volumeClaimTemplates": [{"metadata": OBJECT_META, "spec": OBJECT}],
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": STRING, "whenScaled": STRING},
        "ordinals": {"start": INTEGER},
    },
    "status": {
        **_ints(
            "observedGeneration",
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "collisionCount",
        ),
        "currentRevision": STRING,
        "updateRevision": STRING,
        "conditions": [_CONDITION],
    },
}
_DAEMON_SET: Spec = {
    **_TOP,
    "spec": {
        **_ints("minReadySeconds", "revisionHistoryLimit", "templateGeneration"),
        "selector": _LABEL_SELECTOR,
        "template": _TEMPLATE,
        "updateStrategy": {"type": STRING, "rollingUpdate": OBJECT},
    },
    "status": {
        **_ints(
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ),
        "conditions": [_CONDITION],
    },
}
_JOB_SPEC: Spec = {
    **_ints(
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
        "ttlSecondsAfterFinished",
    ),
    "selector": _LABEL_SELECTOR,
    "manualSelector": BOOLEAN,
    "template": _TEMPLATE,
    "completionMode": STRING,
    "suspend": BOOLEAN,
    "podReplacementPolicy": STRING,
    "managedBy": STRING,
    "podFailurePolicy": {"rules": [OBJECT]},
    "successPolicy": {"rules": [OBJECT]},
}
_JOB: Spec = {
    **_TOP,
    "spec": _JOB_SPEC,
    "status": {
        **_ints("active", "succeeded", "failed", "ready", "terminating"),
        "startTime": TIME,
        "completionTime": TIME,
        "completedIndexes": STRING,
        "failedIndexes": STRING,
        "conditions": [_CONDITION],
        "uncountedTerminatedPods": {"succeeded": _STRINGS, "failed": _STRINGS},
    },
}
_CRON_JOB: Spec = {
    **_TOP,
    "spec": {
        "schedule": STRING,
        "timeZone": STRING,
        "startingDeadlineSeconds": INTEGER,
        "concurrencyPolicy": STRING,
        "suspend": BOOLEAN,
        "jobTemplate": {"metadata": OBJECT_META, "spec": _JOB_SPEC},
        **_ints("successfulJobsHistoryLimit", "failedJobsHistoryLimit"),
    },
    "status": {
        "active": [{"kind": STRING, "namespace": STRING, "name": STRING, "uid": STRING}],
        "lastScheduleTime": TIME,
        "lastSuccessfulTime": TIME,
    },
}

WORKLOAD_FIELDS: dict[ResourceType, Spec] = {
    kinds.DEPLOYMENTS: _DEPLOYMENT,
    kinds.REPLICA_SETS: _REPLICA_SET,
    kinds.STATEFUL_SETS: _STATEFUL_SET,
    kinds.DAEMON_SETS: _DAEMON_SET,
    kinds.CONTROLLER_REVISIONS: {**_TOP, "revision": INTEGER},
    kinds.JOBS: _JOB,
    kinds.CRON_JOBS: _CRON_JOB,
}
