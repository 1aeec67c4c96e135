"""Protobuf schemas of the kinds `kubectl create deployment|job|cronjob|secret|service` posts
as `application/vnd.kubernetes.protobuf` (k8s.io/api generated.proto field numbers), named by
the kinds' declarations (`draplane.apiserver.strategies`): the parts of a pod template kubectl
fills in (containers, ports, env, resources, restartPolicy), Deployment/Job/CronJob specs,
Secret and Service.
Unknown fields are skipped; `int0`/`bool0` keep a zero that was sent (pointer fields).
"""

from __future__ import annotations

from draplane.apiserver.protobuf import OBJECT_META, F, Schema

_SELECTOR: Schema = {
    1: F("matchLabels", "map"),
    2: F(
        "matchExpressions",
        {
            1: F("key", "string"),
            2: F("operator", "string"),
            3: F("values", "string", repeated=True),
        },
        repeated=True,
    ),
}
_CONTAINER: Schema = {
    1: F("name", "string"),
    2: F("image", "string"),
    3: F("command", "string", repeated=True),
    4: F("args", "string", repeated=True),
    5: F("workingDir", "string"),
    6: F(
        "ports",
        {
            1: F("name", "string"),
            2: F("hostPort", "int"),
            3: F("containerPort", "int"),
            4: F("protocol", "string"),
            5: F("hostIP", "string"),
        },
        repeated=True,
    ),
    7: F("env", {1: F("name", "string"), 2: F("value", "string")}, repeated=True),
    8: F("resources", {1: F("limits", "map_quantity"), 2: F("requests", "map_quantity")}),
    13: F("terminationMessagePath", "string"),
    14: F("imagePullPolicy", "string"),
    16: F("stdin", "bool"),
    18: F("tty", "bool"),
    20: F("terminationMessagePolicy", "string"),
}
_POD_SPEC: Schema = {
    2: F("containers", _CONTAINER, repeated=True),
    3: F("restartPolicy", "string"),
    4: F("terminationGracePeriodSeconds", "int0"),
    6: F("dnsPolicy", "string"),
    7: F("nodeSelector", "map"),
    8: F("serviceAccountName", "string"),
    19: F("schedulerName", "string"),
    20: F("initContainers", _CONTAINER, repeated=True),
}
_TEMPLATE: Schema = {1: F("metadata", OBJECT_META), 2: F("spec", _POD_SPEC)}
DEPLOYMENT: Schema = {
    1: F("metadata", OBJECT_META),
    2: F(
        "spec",
        {
            1: F("replicas", "int0"),
            2: F("selector", _SELECTOR),
            3: F("template", _TEMPLATE),
            4: F("strategy", {1: F("type", "string")}),
            5: F("minReadySeconds", "int"),
            6: F("revisionHistoryLimit", "int0"),
            7: F("paused", "bool"),
            9: F("progressDeadlineSeconds", "int0"),
        },
    ),
}
_JOB_SPEC: Schema = {
    1: F("parallelism", "int0"),
    2: F("completions", "int0"),
    3: F("activeDeadlineSeconds", "int0"),
    4: F("selector", _SELECTOR),
    5: F("manualSelector", "bool0"),
    6: F("template", _TEMPLATE),
    7: F("backoffLimit", "int0"),
    8: F("ttlSecondsAfterFinished", "int0"),
    9: F("completionMode", "string"),
    10: F("suspend", "bool0"),
}
JOB: Schema = {1: F("metadata", OBJECT_META), 2: F("spec", _JOB_SPEC)}
CRON_JOB: Schema = {
    1: F("metadata", OBJECT_META),
    2: F(
        "spec",
        {
            1: F("schedule", "string"),
            2: F("startingDeadlineSeconds", "int0"),
            3: F("concurrencyPolicy", "string"),
            4: F("suspend", "bool0"),
            5: F("jobTemplate", {1: F("metadata", OBJECT_META), 2: F("spec", _JOB_SPEC)}),
            6: F("successfulJobsHistoryLimit", "int0"),
            7: F("failedJobsHistoryLimit", "int0"),
            8: F("timeZone", "string"),
        },
    ),
}
SECRET: Schema = {
    1: F("metadata", OBJECT_META),
    2: F("data", "map_bytes"),
    3: F("type", "string"),
    4: F("stringData", "map"),
    5: F("immutable", "bool0"),
}
_SERVICE_PORT: Schema = {
    1: F("name", "string"),
    2: F("protocol", "string"),
    3: F("port", "int"),
    4: F("targetPort", "intstr"),
    5: F("nodePort", "int"),
    6: F("appProtocol", "string"),
}
SERVICE: Schema = {
    1: F("metadata", OBJECT_META),
    2: F(
        "spec",
        {
            1: F("ports", _SERVICE_PORT, repeated=True),
            2: F("selector", "map"),
            3: F("clusterIP", "string"),
            4: F("type", "string"),
            5: F("externalIPs", "string", repeated=True),
            7: F("sessionAffinity", "string"),
            10: F("externalName", "string"),
            18: F("clusterIPs", "string", repeated=True),
        },
    ),
}
