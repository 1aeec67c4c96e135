"""rbac.authorization.k8s.io/v1 defaulting and validation: Role, ClusterRole, RoleBinding and
ClusterRoleBinding, with upstream's field paths and messages."""

from __future__ import annotations

import pytest

from draplane.api import kinds
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.testing import kindrules as validation
from draplane.testing.rbacbuilders import (
    make_cluster_role,
    make_cluster_role_binding,
    make_role,
    make_role_binding,
)

REQ, INV, NOT_SUP, FORB, TYPE = (
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueNotSupported",
    "FieldValueForbidden",
    "FieldValueTypeInvalid",
)
GET_PODS = (["get"], [""], ["pods"])
role = make_role("r", "ns").rule(*GET_PODS)
cluster_role = make_cluster_role("c").rule(*GET_PODS)


def _causes(rt: ResourceType, obj: Obj) -> list[tuple[str, str, str]]:
    obj = deep_copy(obj)
    validation.default(rt, obj)
    return [(e.type, e.field, e.message()) for e in validation.validate_create(rt, obj)]


@pytest.mark.parametrize(
    ("rt", "obj", "causes"),
    [
        pytest.param(kinds.ROLES, role.obj(), [], id="role"),
        pytest.param(kinds.CLUSTER_ROLES, cluster_role.obj(), [], id="cluster-role"),
        pytest.param(
            kinds.ROLES, make_role("Upper:case@x", "ns").obj(), [], id="path-segment-name"
        ),
        pytest.param(
            kinds.ROLES,
            make_role("a/b%", "ns").obj(),
            [
                (INV, "metadata.name", "Invalid value: \"a/b%\": may not contain '/'"),
                (INV, "metadata.name", "Invalid value: \"a/b%\": may not contain '%'"),
            ],
            id="name-slash-percent",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("..").obj(),
            [(INV, "metadata.name", "Invalid value: \"..\": may not be '..'")],
            id="name-dot-dot",
        ),
        pytest.param(
            kinds.ROLES,
            make_role("r", "").obj(),
            [(REQ, "metadata.namespace", "Required value")],
            id="role-needs-namespace",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c").namespace("ns").obj(),
            [(FORB, "metadata.namespace", "Forbidden: not allowed on this type")],
            id="cluster-role-namespace",
        ),
        pytest.param(
            kinds.ROLES,
            make_role("r", "ns").rule([], [""], ["pods"]).obj(),
            [(REQ, "rules[0].verbs", "Required value: verbs must contain at least one value")],
            id="no-verbs",
        ),
        pytest.param(
            kinds.ROLES,
            make_role("r", "ns").rule(["get"]).obj(),
            [
                (
                    REQ,
                    "rules[0].apiGroups",
                    "Required value: resource rules must supply at least one api group",
                ),
                (
                    REQ,
                    "rules[0].resources",
                    "Required value: resource rules must supply at least one resource",
                ),
            ],
            id="resource-rule-needs-groups-and-resources",
        ),
        pytest.param(
            kinds.ROLES,
            make_role("r", "ns").url_rule(["get"], ["/healthz", "/livez"]).obj(),
            [
                (
                    INV,
                    "rules[0].nonResourceURLs",
                    'Invalid value: []string{"/healthz", "/livez"}: '
                    "namespaced rules cannot apply to non-resource URLs",
                )
            ],
            id="namespaced-urls",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c").url_rule(["get"], ["/healthz"]).obj(),
            [],
            id="cluster-urls",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c")
            .rules([{"verbs": ["get"], "resources": ["pods"], "nonResourceURLs": ["/x"]}])
            .obj(),
            [
                (
                    INV,
                    "rules[0].nonResourceURLs",
                    'Invalid value: []string{"/x"}: '
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            ],
            id="urls-mixed-with-resources",
        ),
        pytest.param(
            kinds.ROLES,
            make_role("r", "ns").set("rules", {"verbs": ["get"]}).obj(),
            [(TYPE, "rules", 'Invalid value: {"verbs":["get"]}: must be a list')],
            id="rules-not-a-list",
        ),
        pytest.param(
            kinds.ROLES,
            make_role("r", "ns")
            .rules([{"verbs": [1], "apiGroups": [""], "resources": ["p"]}])
            .obj(),
            [(TYPE, "rules[0].verbs[0]", "Invalid value: 1: must be a string")],
            id="verb-not-a-string",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c").set("aggregationRule", {}).obj(),
            [
                (
                    REQ,
                    "aggregationRule.clusterRoleSelectors",
                    "Required value: at least one clusterRoleSelector required if "
                    "aggregationRule is non-nil",
                )
            ],
            id="aggregation-without-selectors",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c").aggregate({"a": "b"}).obj(),
            [],
            id="aggregation",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c").aggregate({"bad key": "b"}).obj(),
            [
                (
                    INV,
                    "aggregationRule.clusterRoleSelectors[0].matchLabels",
                    'Invalid value: "bad key": name part must consist of alphanumeric '
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                )
            ],
            id="aggregation-bad-label",
        ),
        pytest.param(
            kinds.CLUSTER_ROLES,
            make_cluster_role("c")
            .set(
                "aggregationRule",
                {
                    "clusterRoleSelectors": [
                        {
                            "matchExpressions": [
                                {"key": "a", "operator": "Gt", "values": ["1"]},
                                {"key": "b", "operator": "In"},
                                {"key": "c", "operator": "Exists", "values": ["x"]},
                            ]
                        }
                    ]
                },
            )
            .obj(),
            [
                (
                    INV,
                    "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator",
                    'Invalid value: "Gt": not a valid selector operator',
                ),
                (
                    REQ,
                    "aggregationRule.clusterRoleSelectors[0].matchExpressions[1].values",
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'",
                ),
                (
                    FORB,
                    "aggregationRule.clusterRoleSelectors[0].matchExpressions[2].values",
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ),
            ],
            id="aggregation-expressions",
        ),
    ],
)
def test_validate_roles(rt: ResourceType, obj: Obj, causes: list[tuple[str, str, str]]) -> None:
    assert _causes(rt, obj) == causes


binding = make_role_binding("b", "ns").role("ClusterRole", "c").user("u").group("g")
cluster_binding = make_cluster_role_binding("b").role("ClusterRole", "c").user("u")
RB, CRB = kinds.ROLE_BINDINGS, kinds.CLUSTER_ROLE_BINDINGS


@pytest.mark.parametrize(
    ("rt", "obj", "causes"),
    [
        pytest.param(RB, binding.obj(), [], id="role-binding"),
        pytest.param(RB, make_role_binding("b", "ns").role("Role", "r").obj(), [], id="to-role"),
        pytest.param(CRB, cluster_binding.obj(), [], id="cluster-role-binding"),
        pytest.param(
            RB,
            make_role_binding("b", "ns").set("roleRef", None).obj(),
            [
                (
                    NOT_SUP,
                    "roleRef.kind",
                    'Unsupported value: "": supported values: "Role", "ClusterRole"',
                ),
                (REQ, "roleRef.name", "Required value"),
            ],
            id="role-ref-missing",
        ),
        pytest.param(
            RB,
            make_role_binding("b", "ns")
            .set("roleRef", {"apiGroup": "x", "kind": "Role", "name": "a/b"})
            .obj(),
            [
                (
                    NOT_SUP,
                    "roleRef.apiGroup",
                    'Unsupported value: "x": supported values: "rbac.authorization.k8s.io"',
                ),
                (INV, "roleRef.name", "Invalid value: \"a/b\": may not contain '/'"),
            ],
            id="role-ref-group-and-name",
        ),
        pytest.param(
            CRB,
            make_cluster_role_binding("b").role("Role", "r").obj(),
            [
                (
                    NOT_SUP,
                    "roleRef.kind",
                    'Unsupported value: "Role": supported values: "ClusterRole"',
                )
            ],
            id="cluster-binding-to-role",
        ),
        pytest.param(
            RB,
            make_role_binding("b", "ns").subject({"kind": "Robot", "name": "r2"}).obj(),
            [
                (
                    NOT_SUP,
                    "subjects[0].kind",
                    'Unsupported value: "Robot": supported values: '
                    '"ServiceAccount", "User", "Group"',
                )
            ],
            id="subject-kind",
        ),
        pytest.param(
            RB,
            make_role_binding("b", "ns").user("").obj(),
            [(REQ, "subjects[0].name", "Required value")],
            id="subject-name",
        ),
        pytest.param(
            RB,
            make_role_binding("b", "ns")
            .subject({"kind": "User", "name": "u", "apiGroup": "x"})
            .obj(),
            [
                (
                    NOT_SUP,
                    "subjects[0].apiGroup",
                    'Unsupported value: "x": supported values: "rbac.authorization.k8s.io"',
                )
            ],
            id="user-api-group",
        ),
        pytest.param(
            RB,
            make_role_binding("b", "ns").service_account("sa").obj(),
            [],
            id="sa-in-role-binding",
        ),
        pytest.param(
            CRB,
            make_cluster_role_binding("b").service_account("sa").obj(),
            [(REQ, "subjects[0].namespace", "Required value")],
            id="sa-needs-namespace-in-cluster-binding",
        ),
        pytest.param(
            CRB,
            make_cluster_role_binding("b").service_account("sa", "ns").obj(),
            [],
            id="sa-with-namespace",
        ),
        pytest.param(
            RB,
            make_role_binding("b", "ns")
            .subject({"kind": "ServiceAccount", "name": "Bad_SA", "apiGroup": "v1"})
            .obj(),
            [
                (
                    INV,
                    "subjects[0].name",
                    'Invalid value: "Bad_SA": a lowercase RFC 1123 subdomain must consist of lower '
                    "case alphanumeric characters, '-' or '.', and must start and end with an "
                    "alphanumeric character (e.g. 'example.com', regex used for validation is "
                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ),
                (NOT_SUP, "subjects[0].apiGroup", 'Unsupported value: "v1": supported values: ""'),
            ],
            id="sa-name-and-group",
        ),
    ],
)
def test_validate_bindings(rt: ResourceType, obj: Obj, causes: list[tuple[str, str, str]]) -> None:
    assert _causes(rt, obj) == causes


@pytest.mark.parametrize("rt", [RB, CRB])
def test_role_ref_is_immutable(rt: ResourceType) -> None:
    old = (binding if rt is RB else cluster_binding).obj()
    validation.default(rt, old)
    new = deep_copy(old)
    new["subjects"].append({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "x"})
    assert validation.validate_update(rt, new, old) == []
    new["roleRef"]["name"] = "other"
    assert [(e.type, e.field, e.message()) for e in validation.validate_update(rt, new, old)] == [
        (
            INV,
            "roleRef",
            'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
            'Kind:"ClusterRole", Name:"other"}: cannot change roleRef',
        )
    ]


def test_role_updates_validate_rules_and_metadata() -> None:
    old = role.obj()
    new = make_role("r", "other").rule(["get"]).obj()
    assert [(e.type, e.field) for e in validation.validate_update(kinds.ROLES, new, old)] == [
        (REQ, "rules[0].apiGroups"),
        (REQ, "rules[0].resources"),
        (INV, "metadata.namespace"),
    ]
    old_cluster = cluster_role.obj()
    assert validation.validate_update(kinds.CLUSTER_ROLES, cluster_role.obj(), old_cluster) == []


def test_binding_defaults() -> None:
    obj = make_role_binding("b", "ns").obj()
    obj["roleRef"] = {"kind": "Role", "name": "r"}
    obj["subjects"] = [
        {"kind": "User", "name": "u"},
        {"kind": "Group", "name": "g"},
        {"kind": "ServiceAccount", "name": "sa"},
        {"kind": "User", "name": "v", "apiGroup": "custom"},
    ]
    validation.default(RB, obj)
    assert obj["roleRef"] == {"kind": "Role", "name": "r", "apiGroup": "rbac.authorization.k8s.io"}
    assert [s.get("apiGroup") for s in obj["subjects"]] == [
        "rbac.authorization.k8s.io",
        "rbac.authorization.k8s.io",
        None,
        "custom",
    ]
    malformed: Obj = {"metadata": {"name": "b"}, "roleRef": "x", "subjects": "y"}
    validation.default(CRB, malformed)
    assert validation.validate_create(CRB, malformed)
