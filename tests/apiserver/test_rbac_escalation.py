"""RBAC escalation prevention: upstream's Covers tests (rows 67-68 of the authz spec's 7.4
among them), the binding rows 57-62, role and aggregationRule checks, and the 403 texts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import kinds
from draplane.api.auth import SYSTEM_MASTERS, UserInfo
from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, deep_copy
from draplane.apiserver.authorization.escalation import _url_covers, check_write, covers
from draplane.apiserver.authorization.rbac import RBACAuthorizer
from draplane.apiserver.authorization.rules import PolicyRule
from draplane.storage.interface import Event
from draplane.testing.rbacbuilders import (
    make_cluster_role,
    make_cluster_role_binding,
    make_role,
    make_role_binding,
)


def r(verbs: str, groups: str = "v1", resources: str = "", names: str = "") -> PolicyRule:
    def split(text: str) -> tuple[str, ...]:
        return tuple(text.split(",")) if text else ()

    return PolicyRule(split(verbs), tuple(groups.split(",")), split(resources), split(names))


def u(verbs: str, urls: str) -> PolicyRule:
    return PolicyRule(tuple(verbs.split(",")), non_resource_urls=tuple(urls.split(",")))


@pytest.mark.parametrize(
    ("owner", "servant", "missing"),
    [
        pytest.param([r("get", "v1", "builds")], [r("get", "v1", "builds")], [], id="exact"),
        pytest.param(
            [r("get", "v1", "*/scale")],
            [r("get", "v1", "foo/scale")],
            [],
            id="row67-subresource-wildcard",
        ),
        pytest.param(
            [
                r("delete", "v1", "deployments"),
                r("delete", "v1", "builds"),
                r("update", "v1", "builds,deployments"),
            ],
            [r("delete,update", "v1", "builds,deployments")],
            [],
            id="multiple-rules-cover-one",
        ),
        pytest.param(
            [r("delete,update", "group1,group2", "builds,deployments")],
            [r("delete", "group1", "deployments"), r("update", "group2", "builds")],
            [],
            id="one-rule-covers-several",
        ),
        pytest.param(
            [r("delete,update", "v1", "builds,deployments"), r("delete", "v1", "pods")],
            [r("delete,update", "v1", "builds,deployments,pods")],
            [r("update", "v1", "pods")],
            id="missing-one-verb-resource",
        ),
        pytest.param(
            [r("get", "*", "roles")], [r("get", "group1,group2", "roles")], [], id="group-star"
        ),
        pytest.param(
            [r("get", "dummy-group", "roles")],
            [r("get", "*", "roles")],
            [r("get", "*", "roles")],
            id="group-enumeration-not-star",
        ),
        pytest.param([r("*", "v1", "roles")], [r("watch,list", "v1", "roles")], [], id="verb-star"),
        pytest.param(
            [r("get,list,watch,create,update,delete,exec", "v1", "roles")],
            [r("*", "v1", "roles")],
            [r("*", "v1", "roles")],
            id="verb-enumeration-not-star",
        ),
        pytest.param(
            [r("get", "v1", "*")],
            [r("get", "v1", "resourcegroup:deployments")],
            [],
            id="resource-star",
        ),
        pytest.param(
            [r("get", "v1", "roles,resourcegroup:deployments")],
            [r("get", "v1", "*")],
            [r("get", "v1", "*")],
            id="resource-enumeration-not-star",
        ),
        pytest.param(
            [r("get", "v1", "pods")],
            [r("get", "v1", "pods", "foo,bar")],
            [],
            id="row68-no-names-covers-names",
        ),
        pytest.param(
            [r("get", "v1", "pods", "foo,bar")],
            [r("get", "v1", "pods")],
            [r("get", "v1", "pods")],
            id="names-do-not-cover-all",
        ),
        pytest.param(
            [r("get", "v1", "pods", "foo")],
            [r("get", "v1", "pods", "foo,bar")],
            [r("get", "v1", "pods", "bar")],
            id="names-cover-listed-only",
        ),
        pytest.param([u("*", "/apis")], [u("*", "/apis")], [], id="urls"),
        pytest.param([u("*", "*")], [u("*", "/apis,/apis/v1,/")], [], id="urls-star"),
        pytest.param(
            [u("*", "/apis/*")],
            [u("get", "/apis,/apis/v1")],
            [u("get", "/apis")],
            id="url-prefix-not-parent",
        ),
        pytest.param([u("*", "/apis/*")], [u("get", "/apis/v1/foo,/apis/v1")], [], id="url-prefix"),
        pytest.param(
            [r("get", "v1", "builds")],
            [PolicyRule(("get",), ("v1",), ("builds",), non_resource_urls=("/apis",))],
            [u("get", "/apis")],
            id="urls-with-other-fields",
        ),
    ],
)
def test_covers(
    owner: list[PolicyRule], servant: list[PolicyRule], missing: list[PolicyRule]
) -> None:
    assert covers(owner, servant) == (not missing, missing)


@pytest.mark.parametrize(
    ("owner", "requested", "covered"),
    [
        ("*", "", True),
        ("*", "/", True),
        ("*", "/api", True),
        ("/*", "", False),
        ("/*", "/", True),
        ("/*", "/foo", True),
        ("/api", "/api", True),
        ("/apis", "/api", False),
        ("/api/v1", "/api", False),
        ("/api/v1", "/api/v1", True),
        ("/api/*", "/api/v1", True),
        ("/api/*", "/api", False),
        ("/api/*/*", "/api/v1", False),
        ("/*/v1/*", "/api/v1", False),
    ],
)
def test_non_resource_url_covers(owner: str, requested: str, covered: bool) -> None:
    assert _url_covers(owner, requested) is covered


# --- storage-time checks ----------------------------------------------------------------------

write_jobs = make_cluster_role("write-jobs").rule(["create", "get", "list"], ["batch"], ["jobs"])
create_rolebindings = make_cluster_role("create-rolebindings").rule(
    ["create"], ["rbac.authorization.k8s.io"], ["rolebindings"]
)
bind_clusterroles = make_cluster_role("bind-any-clusterrole").rule(
    ["bind"], ["rbac.authorization.k8s.io"], ["clusterroles"]
)
bind_write_jobs = make_cluster_role("bind-write-jobs").rule(
    ["bind"], ["rbac.authorization.k8s.io"], ["clusterroles"], ["write-jobs"]
)
escalate_roles = make_cluster_role("escalate-roles").rule(
    ["escalate"], ["rbac.authorization.k8s.io"], ["roles", "clusterroles"]
)
escalate_named = make_cluster_role("escalate-named").rule(
    ["escalate"], ["rbac.authorization.k8s.io"], ["clusterroles"], ["agg"]
)
pod_reader = make_cluster_role("pod-reader").rule(["get"], [""], ["pods"])
full = make_cluster_role("full").rule(["*"], ["*"], ["*"]).url_rule(["*"], ["*"])
POLICY: tuple[Obj, ...] = (
    write_jobs.obj(),
    create_rolebindings.obj(),
    bind_clusterroles.obj(),
    bind_write_jobs.obj(),
    escalate_roles.obj(),
    escalate_named.obj(),
    pod_reader.obj(),
    full.obj(),
    make_role_binding("jobs", "job-namespace")
    .role("ClusterRole", "write-jobs")
    .user("job-writer-namespace")
    .obj(),
    make_cluster_role_binding("bind-any")
    .role("ClusterRole", "bind-any-clusterrole")
    .user("any-rolebinding-writer")
    .obj(),
    make_role_binding("bind-any", "job-namespace")
    .role("ClusterRole", "bind-any-clusterrole")
    .user("any-rolebinding-writer-namespace")
    .obj(),
    make_cluster_role_binding("bind-named")
    .role("ClusterRole", "bind-write-jobs")
    .user("named-binder")
    .obj(),
    make_cluster_role_binding("escalate")
    .role("ClusterRole", "escalate-roles")
    .user("escalator")
    .obj(),
    make_cluster_role_binding("escalate-named")
    .role("ClusterRole", "escalate-named")
    .user("named-escalator")
    .obj(),
    make_role_binding("reader", "ns").role("ClusterRole", "pod-reader").user("reader").obj(),
    make_role_binding("ghost", "ns").role("Role", "ghost").user("reader").obj(),
    make_cluster_role_binding("full").role("ClusterRole", "full").user("root").obj(),
    make_cluster_role_binding("readers")
    .role("ClusterRole", "pod-reader")
    .user("cluster-reader")
    .obj(),
)
_KEYS = {
    "Role": kinds.ROLES.key,
    "ClusterRole": kinds.CLUSTER_ROLES.key,
    "RoleBinding": kinds.ROLE_BINDINGS.key,
    "ClusterRoleBinding": kinds.CLUSTER_ROLE_BINDINGS.key,
}


def policy() -> RBACAuthorizer:
    rbac = RBACAuthorizer()
    for obj in POLICY:
        rbac.observe(Event("ADDED", _KEYS[obj["kind"]], obj, 1))
    return rbac


@dataclass(frozen=True)
class Write:
    user: str
    obj: Obj
    old: Obj | None = None
    error: str = ""
    """The expected StatusError message ("" = allowed)."""
    code: int = 403
    groups: tuple[str, ...] = ("system:authenticated",)


_RT = {
    "Role": kinds.ROLES,
    "ClusterRole": kinds.CLUSTER_ROLES,
    "RoleBinding": kinds.ROLE_BINDINGS,
    "ClusterRoleBinding": kinds.CLUSTER_ROLE_BINDINGS,
}


def _held(user: str) -> str:
    return (
        f'user "{user}" (groups=["system:authenticated"]) is attempting to grant RBAC '
        "permissions not currently held:\n"
    )


JOBS_MISSING = '{APIGroups:["batch"], Resources:["jobs"], Verbs:["create" "get" "list"]}'
bind_to_write_jobs = (
    make_role_binding("b", "job-namespace").role("ClusterRole", "write-jobs").user("x")
)
same_elsewhere = (
    make_role_binding("b", "forbidden-namespace").role("ClusterRole", "write-jobs").user("x")
)


def _with_finalizer(obj: Obj) -> Obj:
    changed = deep_copy(obj)
    changed["metadata"]["finalizers"] = ["example.com/keep"]
    return changed


agg_role = make_cluster_role("agg").aggregate({"a": "b"})

WRITES = [
    pytest.param(
        Write(
            "user-with-no-permissions",
            bind_to_write_jobs.obj(),
            error=f'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f"{_held('user-with-no-permissions')}{JOBS_MISSING}",
        ),
        id="row57-no-permissions",
    ),
    pytest.param(Write("job-writer-namespace", bind_to_write_jobs.obj()), id="row58-covers"),
    pytest.param(
        Write(
            "job-writer-namespace",
            same_elsewhere.obj(),
            error=f'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f"{_held('job-writer-namespace')}{JOBS_MISSING}",
        ),
        id="row59-other-namespace",
    ),
    pytest.param(
        Write(
            "nonescalating-rolebinding-writer",
            bind_to_write_jobs.obj(),
            error=f'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f"{_held('nonescalating-rolebinding-writer')}{JOBS_MISSING}",
        ),
        id="row60-escalation",
    ),
    pytest.param(Write("any-rolebinding-writer", bind_to_write_jobs.obj()), id="row61-bind"),
    pytest.param(
        Write("any-rolebinding-writer-namespace", bind_to_write_jobs.obj()), id="bind-in-namespace"
    ),
    pytest.param(
        Write(
            "any-rolebinding-writer-namespace",
            same_elsewhere.obj(),
            error=f'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f"{_held('any-rolebinding-writer-namespace')}{JOBS_MISSING}",
        ),
        id="row62-bind-only-in-namespace",
    ),
    pytest.param(Write("named-binder", bind_to_write_jobs.obj()), id="bind-by-name"),
    pytest.param(
        Write(
            "named-binder",
            make_role_binding("b", "ns").role("ClusterRole", "pod-reader").obj(),
            error=f'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f'{_held("named-binder")}{{APIGroups:[""], Resources:["pods"], Verbs:["get"]}}',
        ),
        id="bind-other-name",
    ),
    pytest.param(
        Write(
            "cluster-reader", make_cluster_role_binding("c").role("ClusterRole", "pod-reader").obj()
        ),
        id="cluster-binding-covered",
    ),
    pytest.param(
        Write(
            "reader",
            make_cluster_role_binding("c").role("ClusterRole", "pod-reader").obj(),
            error=f'clusterrolebindings.rbac.authorization.k8s.io "c" is forbidden: '
            f'{_held("reader")}{{APIGroups:[""], Resources:["pods"], Verbs:["get"]}}',
        ),
        id="namespace-rules-do-not-cover-cluster-binding",
    ),
    pytest.param(
        Write("admin", bind_to_write_jobs.obj(), groups=(SYSTEM_MASTERS,)), id="system-masters"
    ),
    pytest.param(
        Write(
            "reader",
            make_role_binding("b", "ns").role("Role", "missing").obj(),
            error='roles.rbac.authorization.k8s.io "missing" not found',
            code=404,
        ),
        id="missing-role-not-found",
    ),
    pytest.param(
        Write(
            "any-rolebinding-writer",
            make_role_binding("b", "ns").role("ClusterRole", "missing").obj(),
        ),
        id="bind-allowed-role-need-not-exist",
    ),
    pytest.param(
        Write("nobody", _with_finalizer(bind_to_write_jobs.obj()), old=bind_to_write_jobs.obj()),
        id="binding-finalizer-only-update",
    ),
    # Roles and ClusterRoles.
    pytest.param(
        Write("reader", make_role("r", "ns").rule(["get"], [""], ["pods"]).obj()), id="role-covered"
    ),
    pytest.param(
        Write(
            "reader",
            make_role("r", "ns").rule(["get", "list"], [""], ["pods"]).obj(),
            error=f'roles.rbac.authorization.k8s.io "r" is forbidden: {_held("reader")}'
            '{APIGroups:[""], Resources:["pods"], Verbs:["list"]}; resolution errors: '
            '[role.rbac.authorization.k8s.io "ghost" not found]',
        ),
        id="role-escalation-with-resolution-errors",
    ),
    pytest.param(
        Write(
            "cluster-reader",
            make_role("", "ns").generate_name("r-").rule(["get"], ["apps"], ["deployments"]).obj(),
            error=f"roles.rbac.authorization.k8s.io is forbidden: {_held('cluster-reader')}"
            '{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}',
        ),
        id="role-generate-name",
    ),
    pytest.param(
        Write(
            "reader",
            make_cluster_role("c").rule(["get"], [""], ["pods"]).obj(),
            error=f'clusterroles.rbac.authorization.k8s.io "c" is forbidden: {_held("reader")}'
            '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}',
        ),
        id="cluster-role-needs-cluster-rules",
    ),
    pytest.param(
        Write("escalator", make_role("r", "ns").rule(["*"], ["*"], ["*"]).obj()), id="escalate-verb"
    ),
    pytest.param(
        Write(
            "named-escalator",
            agg_role.obj(),
            error='clusterroles.rbac.authorization.k8s.io "agg" is forbidden: '
            "must have cluster-admin privileges to use the aggregationRule",
        ),
        id="escalate-by-name-not-on-create",
    ),
    pytest.param(
        Write("named-escalator", agg_role.obj(), old=make_cluster_role("agg").obj()),
        id="escalate-by-name-on-update",
    ),
    pytest.param(
        Write(
            "cluster-reader",
            agg_role.obj(),
            error='clusterroles.rbac.authorization.k8s.io "agg" is forbidden: '
            "must have cluster-admin privileges to use the aggregationRule",
        ),
        id="aggregation-rule-needs-full-authority",
    ),
    pytest.param(
        Write(
            "cluster-reader",
            make_cluster_role("agg").rule(["get"], [""], ["pods"]).obj(),
            old=agg_role.obj(),
            error='clusterroles.rbac.authorization.k8s.io "agg" is forbidden: '
            "must have cluster-admin privileges to use the aggregationRule",
        ),
        id="aggregation-rule-removal-checked",
    ),
    pytest.param(Write("root", agg_role.obj()), id="aggregation-rule-with-full-authority"),
    pytest.param(
        Write(
            "nobody",
            _with_finalizer(make_role("r", "ns").rule(["*"], ["*"], ["*"]).obj()),
            old=make_role("r", "ns").rule(["*"], ["*"], ["*"]).obj(),
        ),
        id="role-finalizer-only-update",
    ),
    pytest.param(
        Write(
            "nobody",
            make_role("r", "ns").label("a", "b").rule(["get"], [""], ["pods"]).obj(),
            old=make_role("r", "ns").rule(["get"], [""], ["pods"]).obj(),
            error=f'roles.rbac.authorization.k8s.io "r" is forbidden: {_held("nobody")}'
            '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}',
        ),
        id="label-update-is-checked",
    ),
]


@pytest.mark.parametrize("case", WRITES)
def test_check_write(case: Write) -> None:
    rbac = policy()
    rt: ResourceType = _RT[case.obj["kind"]]
    user = UserInfo(case.user, "", case.groups)

    def run() -> None:
        check_write(
            user, rt, case.obj, case.old, authorizer=rbac, resolver=rbac, get_role=rbac.get_role
        )

    if not case.error:
        run()
        return
    with pytest.raises(StatusError) as raised:
        run()
    err = raised.value
    assert (err.code, err.message) == (case.code, case.error)
    if case.code == 404:
        assert err.details == {"name": "missing", "group": kinds.RBAC_GROUP, "kind": "roles"}
        return
    assert err.reason == "Forbidden"
    expected = {"group": kinds.RBAC_GROUP, "kind": rt.resource}
    if case.obj["metadata"].get("name"):
        expected["name"] = case.obj["metadata"]["name"]
    assert err.details == expected


def test_other_kinds_are_not_checked() -> None:
    rbac = RBACAuthorizer()
    pod: Obj = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    check_write(
        UserInfo("nobody"),
        kinds.PODS,
        pod,
        None,
        authorizer=rbac,
        resolver=rbac,
        get_role=rbac.get_role,
    )
