"""Protobuf schemas (k8s.io/api generated.proto field numbers) of the core, RBAC and review kinds
kubectl 1.32 posts as `application/vnd.kubernetes.protobuf`: Namespace, ConfigMap,
ServiceAccount, Role/ClusterRole, RoleBinding/ClusterRoleBinding, the review kinds of `auth
whoami` and `auth can-i`, and TokenRequest; and the core/v1 and events.k8s.io/v1 Events the
event recorders of kube-scheduler and kube-controller-manager post. The kinds' declarations
name them (`draplane.apiserver.strategies`); `draplane.apiserver.protobuf` decodes with them.
"""

from __future__ import annotations

from draplane.apiserver.protobuf import OBJECT_META, F, Schema

_NAMESPACE_CONDITION: Schema = {
    1: F("type", "string"),
    2: F("status", "string"),
    4: F("lastTransitionTime", "time"),
    5: F("reason", "string"),
    6: F("message", "string"),
}
NAMESPACE: Schema = {
    1: F("metadata", OBJECT_META),
    2: F("spec", {1: F("finalizers", "string", repeated=True)}),
    3: F(
        "status",
        {1: F("phase", "string"), 2: F("conditions", _NAMESPACE_CONDITION, repeated=True)},
    ),
}
CONFIG_MAP: Schema = {
    1: F("metadata", OBJECT_META),
    2: F("data", "map"),
    3: F("binaryData", "map_bytes"),
    4: F("immutable", "bool"),
}
SELF_SUBJECT_REVIEW: Schema = {1: F("metadata", OBJECT_META)}
_RESOURCE_ATTRIBUTES: Schema = {
    1: F("namespace", "string"),
    2: F("verb", "string"),
    3: F("group", "string"),
    4: F("version", "string"),
    5: F("resource", "string"),
    6: F("subresource", "string"),
    7: F("name", "string"),
}
SELF_SUBJECT_ACCESS_REVIEW: Schema = {
    1: F("metadata", OBJECT_META),
    2: F(
        "spec",
        {
            1: F("resourceAttributes", _RESOURCE_ATTRIBUTES),
            2: F("nonResourceAttributes", {1: F("path", "string"), 2: F("verb", "string")}),
        },
    ),
}
SELF_SUBJECT_RULES_REVIEW: Schema = {
    1: F("metadata", OBJECT_META),
    2: F("spec", {1: F("namespace", "string")}),
}
TOKEN_REQUEST: Schema = {
    1: F("metadata", OBJECT_META),
    2: F(
        "spec",
        {
            1: F("audiences", "string", repeated=True),
            3: F(
                "boundObjectRef",
                {
                    1: F("kind", "string"),
                    2: F("apiVersion", "string"),
                    3: F("name", "string"),
                    4: F("uid", "string"),
                },
            ),
            4: F("expirationSeconds", "int"),
        },
    ),
}
_POLICY_RULE: Schema = {
    1: F("verbs", "string", repeated=True),
    2: F("apiGroups", "string", repeated=True),
    3: F("resources", "string", repeated=True),
    4: F("resourceNames", "string", repeated=True),
    5: F("nonResourceURLs", "string", repeated=True),
}
ROLE: Schema = {1: F("metadata", OBJECT_META), 2: F("rules", _POLICY_RULE, repeated=True)}
BINDING: Schema = {
    1: F("metadata", OBJECT_META),
    2: F(
        "subjects",
        {
            1: F("kind", "string"),
            2: F("apiGroup", "string"),
            3: F("name", "string"),
            4: F("namespace", "string"),
        },
        repeated=True,
    ),
    3: F("roleRef", {1: F("apiGroup", "string"), 2: F("kind", "string"), 3: F("name", "string")}),
}
SERVICE_ACCOUNT: Schema = {
    1: F("metadata", OBJECT_META),
    4: F("automountServiceAccountToken", "bool"),
}
# Events, as client-go's event recorders post them (core/v1 and events.k8s.io/v1).
_OBJECT_REFERENCE: Schema = {
    1: F("kind", "string"),
    2: F("namespace", "string"),
    3: F("name", "string"),
    4: F("uid", "string"),
    5: F("apiVersion", "string"),
    6: F("resourceVersion", "string"),
    7: F("fieldPath", "string"),
}
_EVENT_SOURCE: Schema = {1: F("component", "string"), 2: F("host", "string")}
_EVENT_SERIES: Schema = {1: F("count", "int"), 2: F("lastObservedTime", "microtime")}
EVENT: Schema = {
    1: F("metadata", OBJECT_META),
    2: F("involvedObject", _OBJECT_REFERENCE),
    3: F("reason", "string"),
    4: F("message", "string"),
    5: F("source", _EVENT_SOURCE),
    6: F("firstTimestamp", "time"),
    7: F("lastTimestamp", "time"),
    8: F("count", "int"),
    9: F("type", "string"),
    10: F("eventTime", "microtime"),
    11: F("series", _EVENT_SERIES),
    12: F("action", "string"),
    13: F("related", _OBJECT_REFERENCE),
    14: F("reportingComponent", "string"),
    15: F("reportingInstance", "string"),
}
EVENT_V1: Schema = {
    1: F("metadata", OBJECT_META),
    2: F("eventTime", "microtime"),
    3: F("series", _EVENT_SERIES),
    4: F("reportingController", "string"),
    5: F("reportingInstance", "string"),
    6: F("action", "string"),
    7: F("reason", "string"),
    8: F("regarding", _OBJECT_REFERENCE),
    9: F("related", _OBJECT_REFERENCE),
    10: F("note", "string"),
    11: F("type", "string"),
    12: F("deprecatedSource", _EVENT_SOURCE),
    13: F("deprecatedFirstTimestamp", "time"),
    14: F("deprecatedLastTimestamp", "time"),
    15: F("deprecatedCount", "int"),
}
