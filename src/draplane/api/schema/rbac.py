"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding."""

from __future__ import annotations

from draplane.api.schema.meta import LABEL_SELECTOR, metadata_field, serve, type_meta
from draplane.api.schema.model import Arr, f, struct

RBAC = "io.k8s.api.rbac.v1."

POLICY_RULE = struct(
    RBAC + "PolicyRule",
    "Verbs allowed on resources or non-resource URLs.",
    f("verbs", Arr("string"), "Allowed verbs; * is all.", required=True),
    f("apiGroups", Arr("string"), "API groups of the resources; empty is the core group."),
    f("resources", Arr("string"), "Resources (and resource/subresource); * is all."),
    f("resourceNames", Arr("string"), "Object names the rule is limited to."),
    f("nonResourceURLs", Arr("string"), "URL paths, for ClusterRoles only."),
)
AGGREGATION_RULE = struct(
    RBAC + "AggregationRule",
    "Builds a ClusterRole's rules from other ClusterRoles.",
    f(
        "clusterRoleSelectors",
        Arr(LABEL_SELECTOR),
        "ClusterRoles whose rules are aggregated.",
    ),
)
SUBJECT = struct(
    RBAC + "Subject",
    "A user, group or service account a binding grants to.",
    f("kind", "string", "User, Group or ServiceAccount.", required=True),
    f("apiGroup", "string", "API group of the subject kind."),
    f("name", "string", "Name of the subject.", required=True),
    f("namespace", "string", "Namespace of a ServiceAccount subject."),
)
ROLE_REF = struct(
    RBAC + "RoleRef",
    "The role a binding grants.",
    f("apiGroup", "string", "API group of the role.", required=True),
    f("kind", "string", "Role or ClusterRole.", required=True),
    f("name", "string", "Name of the role.", required=True),
)
ROLE = struct(
    RBAC + "Role",
    "Namespaced permissions, granted by RoleBindings.",
    *type_meta(),
    metadata_field(),
    f("rules", Arr(POLICY_RULE), "The permissions."),
)
CLUSTER_ROLE = struct(
    RBAC + "ClusterRole",
    "Cluster-wide permissions, granted by RoleBindings or ClusterRoleBindings.",
    *type_meta(),
    metadata_field(),
    f("rules", Arr(POLICY_RULE), "The permissions."),
    f("aggregationRule", AGGREGATION_RULE, "Aggregate the rules of other ClusterRoles."),
)


def _binding(name: str, scope: str) -> str:
    return struct(
        RBAC + name,
        f"Grants a role to subjects {scope}.",
        *type_meta(),
        metadata_field(),
        f("subjects", Arr(SUBJECT), "Who gets the role."),
        f("roleRef", ROLE_REF, "The role granted; immutable.", required=True),
    )


ROLE_BINDING = _binding("RoleBinding", "in a namespace")
CLUSTER_ROLE_BINDING = _binding("ClusterRoleBinding", "cluster-wide")
serve("rbac.authorization.k8s.io", "v1", "Role", ROLE)
serve("rbac.authorization.k8s.io", "v1", "ClusterRole", CLUSTER_ROLE)
serve("rbac.authorization.k8s.io", "v1", "RoleBinding", ROLE_BINDING)
serve("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", CLUSTER_ROLE_BINDING)
