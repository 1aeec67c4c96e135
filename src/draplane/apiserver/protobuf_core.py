"""Protobuf schemas (k8s.io/api generated.proto field numbers) of the core, RBAC and review kinds
kubectl 1.32 posts as `application/vnd.kubernetes.protobuf`: Namespace, ConfigMap,
ServiceAccount, Role/ClusterRole, RoleBinding/ClusterRoleBinding, the review kinds of `auth
whoami` and `auth can-i`, and TokenRequest. The kinds' declarations name them
(`draplane.apiserver.strategies`); `draplane.apiserver.protobuf` decodes with them.
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
