"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, f, struct

RBAC = "io.k8s.api.rbac.v1."

POLICY_RULE = struct(
    RBAC + "PolicyRule",
    "Verbs allowed on resources or non-resource URLs.",
    f("verbs", Arr("string"), "Allowed verbs; * is all.", required=True, tag=1),
    f("apiGroups", Arr("string"), "API groups of the resources; empty is the core group.", tag=2),
    f("resources", Arr("string"), "Resources (and resource/subresource); * is all.", tag=3),
    f("resourceNames", Arr("string"), "Object names the rule is limited to.", tag=4),
    f("nonResourceURLs", Arr("string"), "URL paths, for ClusterRoles only.", tag=5),
)
AGGREGATION_RULE = struct(
    RBAC + "AggregationRule",
    "Builds a ClusterRole's rules from other ClusterRoles.",
    f(
        "clusterRoleSelectors",
        Arr(LABEL_SELECTOR),
        "ClusterRoles whose rules are aggregated.",
        tag=1,
    ),
)
SUBJECT = struct(
    RBAC + "Subject",
    "A user, group or service account a binding grants to.",
    f("kind", "string", "User, Group or ServiceAccount.", required=True, tag=1),
    f("apiGroup", "string", "API group of the subject kind.", tag=2),
    f("name", "string", "Name of the subject.", required=True, tag=3),
    f("namespace", "string", "Namespace of a ServiceAccount subject.", tag=4),
)
ROLE_REF = struct(
    RBAC + "RoleRef",
    "The role a binding grants.",
    f("apiGroup", "string", "API group of the role.", required=True, tag=1),
    f("kind", "string", "Role or ClusterRole.", required=True, tag=2),
    f("name", "string", "Name of the role.", required=True, tag=3),
)
ROLE = struct(
    RBAC + "Role",
    "Namespaced permissions, granted by RoleBindings.",
    *type_meta(),
    metadata_field(),
    f("rules", Arr(POLICY_RULE), "The permissions.", tag=2),
)
CLUSTER_ROLE = struct(
    RBAC + "ClusterRole",
    "Cluster-wide permissions, granted by RoleBindings or ClusterRoleBindings.",
    *type_meta(),
    metadata_field(),
    f("rules", Arr(POLICY_RULE), "The permissions.", tag=2),
    f("aggregationRule", AGGREGATION_RULE, "Aggregate the rules of other ClusterRoles.", tag=3),
)


def _binding(name: str, scope: str) -> str:
    return struct(
        RBAC + name,
        f"Grants a role to subjects {scope}.",
        *type_meta(),
        metadata_field(),
        f("subjects", Arr(SUBJECT), "Who gets the role.", tag=2),
        f("roleRef", ROLE_REF, "The role granted; immutable.", required=True, tag=3),
    )


ROLE_BINDING = _binding("RoleBinding", "in a namespace")
CLUSTER_ROLE_BINDING = _binding("ClusterRoleBinding", "cluster-wide")
serve("rbac.authorization.k8s.io", "v1", "Role", ROLE)
serve("rbac.authorization.k8s.io", "v1", "ClusterRole", CLUSTER_ROLE)
serve("rbac.authorization.k8s.io", "v1", "RoleBinding", ROLE_BINDING)
serve("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", CLUSTER_ROLE_BINDING)
