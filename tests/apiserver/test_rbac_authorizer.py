"""RBACAuthorizer: upstream TestAuthorizer, the authorization rows 52-56 and 63 of the authz spec's
7.4, allow reasons, missing-role reasons, ServiceAccount subjects, the index following the store,
and rules_for."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from draplane.api import kinds
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver.authorization import (
    Attributes,
    Decision,
    NonResourceRule,
    ResourceRule,
    Result,
)
from draplane.apiserver.authorization.rbac import RBACAuthorizer
from draplane.storage.interface import Event
from draplane.testing.rbacbuilders import (
    make_cluster_role,
    make_cluster_role_binding,
    make_role,
    make_role_binding,
    rule,
)

ALLOW, NO_OPINION = Decision.ALLOW, Decision.NO_OPINION
_KEYS = {
    "Role": kinds.ROLES.key,
    "ClusterRole": kinds.CLUSTER_ROLES.key,
    "RoleBinding": kinds.ROLE_BINDINGS.key,
    "ClusterRoleBinding": kinds.CLUSTER_ROLE_BINDINGS.key,
}


def event(obj: Obj, type_: str = "ADDED") -> Event:
    return Event(type_, _KEYS[obj["kind"]], obj, 1)  # type: ignore[arg-type]


def authorizer(*objects: Obj) -> RBACAuthorizer:
    rbac = RBACAuthorizer()
    for obj in objects:
        rbac.observe(event(obj))
    return rbac


def req(
    user: str,
    verb: str,
    res: str,
    namespace: str = "",
    *,
    groups: tuple[str, ...] = (),
    group: str = "",
    sub: str = "",
    name: str = "",
) -> Attributes:
    return Attributes(
        UserInfo(user, "", groups),
        verb,
        api_group=group,
        resource=res,
        subresource=sub,
        namespace=namespace,
        name=name,
    )


def url(user: str, verb: str, path: str, *, groups: tuple[str, ...] = ()) -> Attributes:
    return Attributes(UserInfo(user, "", groups), verb, resource_request=False, path=path)


@dataclass(frozen=True)
class Case:
    objects: tuple[Obj, ...]
    allowed: tuple[Attributes, ...] = ()
    denied: tuple[Attributes, ...] = ()
    reasons: dict[int, str] = field(default_factory=dict)
    """Expected reason of the n-th request of allowed + denied."""


everything = make_cluster_role("admin").rules(
    [{**rule(["*"], ["*"], ["*"]), "nonResourceURLs": ["*"]}]
)
admin_in_ns1 = (
    make_role_binding("admin", "ns1").role("ClusterRole", "admin").user("admin").group("admins")
)
url_getter = make_cluster_role("non-resource-url-getter").url_rule(["get"], ["/apis"])
url_all = make_cluster_role("non-resource-url").url_rule(["*"], ["/apis"])
url_prefix = make_cluster_role("non-resource-url-prefix").url_rule(["get"], ["/apis/*"])

CASES = [
    pytest.param(
        Case(
            (everything.obj(), admin_in_ns1.obj()),
            allowed=(
                req("admin", "get", "Pods", "ns1"),
                req("admin", "watch", "Pods", "ns1"),
                req("admin", "watch", "Foobar", "ns1", groups=("group1",)),
                req("joe", "watch", "Foobar", "ns1", groups=("admins",)),
                req("joe", "watch", "Foobar", "ns1", groups=("group1", "admins")),
            ),
            denied=(
                req("admin", "GET", "Pods", "ns2"),
                req("admin", "GET", "Nodes"),
                req("admin", "GET", "Pods", "ns2", groups=("admins",)),
                req("admin", "GET", "Nodes", groups=("admins",)),
            ),
            reasons={
                0: 'RBAC: allowed by RoleBinding "admin/ns1" of ClusterRole "admin" '
                'to User "admin"',
                3: 'RBAC: allowed by RoleBinding "admin/ns1" of ClusterRole "admin" '
                'to Group "admins"',
                5: "",
            },
        ),
        id="upstream-rolebinding-to-star-row63",
    ),
    pytest.param(
        Case(
            (
                url_getter.obj(),
                url_all.obj(),
                url_prefix.obj(),
                make_cluster_role_binding("getter")
                .role("ClusterRole", "non-resource-url-getter")
                .user("foo")
                .group("bar")
                .obj(),
                make_cluster_role_binding("all")
                .role("ClusterRole", "non-resource-url")
                .user("admin")
                .group("admin")
                .obj(),
                make_cluster_role_binding("prefix")
                .role("ClusterRole", "non-resource-url-prefix")
                .user("prefixed")
                .group("prefixed")
                .obj(),
            ),
            allowed=(
                url("foo", "get", "/apis"),
                url("", "get", "/apis", groups=("bar",)),
                url("admin", "get", "/apis"),
                url("", "get", "/apis", groups=("admin",)),
                url("admin", "watch", "/apis"),
                url("", "watch", "/apis", groups=("admin",)),
                url("prefixed", "get", "/apis/v1"),
                url("", "get", "/apis/v1", groups=("prefixed",)),
                url("prefixed", "get", "/apis/v1/foobar"),
            ),
            denied=(
                url("foo", "watch", "/apis"),
                url("", "watch", "/apis", groups=("bar",)),
                url("foo", "get", "/api/v1"),
                url("admin", "get", "/api/v1"),
                url("", "get", "/api/v1", groups=("admin",)),
                url("prefixed", "get", "/api/v1"),
                url("prefixed", "get", "/apis"),
            ),
            reasons={
                0: 'RBAC: allowed by ClusterRoleBinding "getter" of ClusterRole '
                '"non-resource-url-getter" to User "foo"'
            },
        ),
        id="upstream-non-resource-urls-row66",
    ),
    pytest.param(
        Case(
            (
                make_cluster_role("admin").rule(["*"], ["*"], ["pods"]).obj(),
                admin_in_ns1.obj(),
            ),
            allowed=(req("admin", "get", "pods", "ns1"),),
            denied=(req("admin", "get", "pods", "ns1", sub="status"),),
        ),
        id="upstream-pods-not-status-row64",
    ),
    pytest.param(
        Case(
            (
                make_cluster_role("admin").rule(["*"], ["*"], ["pods/status"]).obj(),
                admin_in_ns1.obj(),
            ),
            allowed=(req("admin", "get", "pods", "ns1", sub="status"),),
            denied=(req("admin", "get", "pods", "ns1"),),
        ),
        id="upstream-status-not-pods-row64",
    ),
    pytest.param(
        Case(
            (
                make_cluster_role("limitrange-updater")
                .rule(["update"], [""], ["limitranges"])
                .obj(),
                make_cluster_role("limitrange-patcher")
                .rule(["patch"], [""], ["limitranges"])
                .obj(),
                make_role_binding("u", "ns")
                .role("ClusterRole", "limitrange-updater")
                .user("u")
                .obj(),
                make_role_binding("p", "ns")
                .role("ClusterRole", "limitrange-patcher")
                .user("p")
                .obj(),
            ),
            allowed=(
                req("u", "update", "limitranges", "ns", name="l"),
                req("p", "patch", "limitranges", "ns", name="l"),
            ),
            # A PUT or apply PATCH that creates also needs `create`.
            denied=(
                req("u", "create", "limitranges", "ns", name="l"),
                req("p", "create", "limitranges", "ns", name="l"),
            ),
        ),
        id="rows52-53-update-and-patch-do-not-create",
    ),
    pytest.param(
        Case(
            (
                make_cluster_role("pod-reader")
                .rule(["get", "list", "watch"], [""], ["pods"])
                .obj(),
                make_cluster_role_binding("read-pods")
                .role("ClusterRole", "pod-reader")
                .user("pod-reader")
                .obj(),
                make_cluster_role("write-jobs")
                .rule(["create", "get", "list"], ["batch"], ["jobs"])
                .obj(),
                make_role_binding("jobs", "job-namespace")
                .role("ClusterRole", "write-jobs")
                .user("job-writer-namespace")
                .obj(),
            ),
            allowed=(
                req("pod-reader", "list", "pods"),
                req("pod-reader", "get", "pods", "default", name="p"),
                req("job-writer-namespace", "create", "jobs", "job-namespace", group="batch"),
            ),
            denied=(
                req("bob", "list", "pods"),
                req("pod-reader", "create", "pods", "default"),
                req("job-writer-namespace", "get", "jobs", "forbidden-namespace", group="batch"),
            ),
            reasons={3: ""},
        ),
        id="rows54-56",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_authorize(case: Case) -> None:
    rbac = authorizer(*case.objects)
    requests = (*case.allowed, *case.denied)
    for i, attrs in enumerate(requests):
        result = rbac.authorize(attrs)
        assert result.decision is (ALLOW if i < len(case.allowed) else NO_OPINION), attrs
        if i in case.reasons:
            assert result.reason == case.reasons[i]


sa_reader = make_cluster_role("reader").rule(["get"], [""], ["pods"])


@pytest.mark.parametrize(
    ("binding", "user", "result"),
    [
        pytest.param(
            make_cluster_role_binding("b")
            .role("ClusterRole", "reader")
            .service_account("sa", "ns"),
            "system:serviceaccount:ns:sa",
            Result(
                ALLOW,
                'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "reader" to '
                'ServiceAccount "sa/ns"',
            ),
            id="cluster-binding-sa",
        ),
        pytest.param(
            make_cluster_role_binding("b").role("ClusterRole", "reader").service_account("sa"),
            "system:serviceaccount:ns:sa",
            Result(NO_OPINION),
            id="cluster-binding-sa-without-namespace-matches-nobody",
        ),
        pytest.param(
            make_role_binding("b", "ns").role("ClusterRole", "reader").service_account("sa"),
            "system:serviceaccount:ns:sa",
            Result(
                ALLOW,
                'RBAC: allowed by RoleBinding "b/ns" of ClusterRole "reader" to '
                'ServiceAccount "sa/ns"',
            ),
            id="role-binding-sa-defaults-to-binding-namespace",
        ),
        pytest.param(
            make_role_binding("b", "ns")
            .role("ClusterRole", "reader")
            .service_account("sa", "other"),
            "system:serviceaccount:ns:sa",
            Result(NO_OPINION),
            id="role-binding-sa-of-other-namespace",
        ),
        pytest.param(
            make_role_binding("b", "ns").role("ClusterRole", "reader").group("g").user("u"),
            "u",
            Result(
                ALLOW, 'RBAC: allowed by RoleBinding "b/ns" of ClusterRole "reader" to User "u"'
            ),
            id="first-applying-subject-named",
        ),
    ],
)
def test_subjects(binding: object, user: str, result: Result) -> None:
    rbac = authorizer(sa_reader.obj(), binding.obj())  # type: ignore[attr-defined]
    assert rbac.authorize(req(user, "get", "pods", "ns", name="p")) == result


@pytest.mark.parametrize(
    ("objects", "reason"),
    [
        pytest.param(
            (make_role_binding("b", "ns").role("Role", "ghost").user("u").obj(),),
            'RBAC: role.rbac.authorization.k8s.io "ghost" not found',
            id="missing-role",
        ),
        pytest.param(
            (
                make_cluster_role_binding("a").role("ClusterRole", "ghost").user("u").obj(),
                make_role_binding("b", "ns").role("Role", "ghost").group("g").obj(),
            ),
            'RBAC: [clusterrole.rbac.authorization.k8s.io "ghost" not found, '
            'role.rbac.authorization.k8s.io "ghost" not found]',
            id="several-missing",
        ),
        pytest.param(
            (make_role_binding("b", "ns").role("Thing", "x").user("u").obj(),),
            'RBAC: unsupported role reference kind: "Thing"',
            id="unsupported-kind",
        ),
        pytest.param(
            (
                make_cluster_role_binding("a").role("ClusterRole", "ghost").user("u").obj(),
                sa_reader.obj(),
                make_role_binding("b", "ns").role("ClusterRole", "reader").user("u").obj(),
            ),
            "",
            id="allowed-despite-missing",
        ),
    ],
)
def test_missing_roles(objects: tuple[Obj, ...], reason: str) -> None:
    result = authorizer(*objects).authorize(req("u", "get", "pods", "ns", groups=("g",)))
    assert result.decision is (ALLOW if not reason else NO_OPINION)
    if reason:
        assert result.reason == reason
    assert result.error == ""


def test_index_follows_changes() -> None:
    role = make_role("r", "ns").rule(["get"], [""], ["pods"]).obj()
    binding = make_role_binding("b", "ns").role("Role", "r").user("alice").obj()
    rbac = RBACAuthorizer()
    rbac.load(kinds.ROLES.key, [role])
    rbac.load(kinds.ROLE_BINDINGS.key, [binding])
    alice, bob = req("alice", "get", "pods", "ns"), req("bob", "get", "pods", "ns")
    assert rbac.authorize(alice).decision is ALLOW

    moved = make_role_binding("b", "ns").role("Role", "r").user("bob").obj()
    rbac.observe(event(moved, "MODIFIED"))
    assert rbac.authorize(alice).decision is NO_OPINION
    assert rbac.authorize(bob).decision is ALLOW

    rbac.observe(event(role, "DELETED"))
    assert rbac.authorize(bob).reason == 'RBAC: role.rbac.authorization.k8s.io "r" not found'
    rbac.observe(event(role))
    rbac.observe(event(moved, "DELETED"))
    assert rbac.authorize(bob) == Result(NO_OPINION)
    assert rbac.get_role("Role", "ns", "r") == role
    assert rbac.get_role("ClusterRole", "", "r") is None
    # Other resources are ignored.
    rbac.observe(Event("ADDED", kinds.PODS.key, {"metadata": {"name": "p"}}, 2))


def test_visits_cluster_bindings_then_role_bindings_in_name_order() -> None:
    reader = sa_reader.obj()
    rbac = authorizer(
        reader,
        make_role_binding("a", "ns").role("ClusterRole", "reader").user("u").obj(),
        make_cluster_role_binding("z").role("ClusterRole", "reader").group("g").obj(),
        make_cluster_role_binding("m").role("ClusterRole", "reader").user("u").obj(),
        make_cluster_role_binding("other").role("ClusterRole", "reader").user("v").obj(),
        make_role_binding("b", "elsewhere").role("ClusterRole", "reader").user("u").obj(),
    )
    visited = [item[0].name for item in rbac.visit(UserInfo("u", "", ("g",)), "ns")]  # type: ignore[index]
    assert visited == ["m", "z", "a"]


def test_rules_for() -> None:
    rbac = authorizer(
        make_cluster_role("c").rule(["get"], [""], ["pods"]).url_rule(["get"], ["/healthz"]).obj(),
        make_cluster_role_binding("c").role("ClusterRole", "c").group("g").obj(),
        make_role("r", "ns").rule(["list"], ["apps"], ["deployments"], ["d"]).obj(),
        make_role_binding("r", "ns").role("Role", "r").user("u").obj(),
        make_role_binding("ghost", "ns").role("Role", "ghost").user("u").obj(),
    )
    rules = rbac.rules_for(UserInfo("u", "", ("g",)), "ns")
    assert rules.resource_rules == (
        ResourceRule(("get",), ("",), ("pods",)),
        ResourceRule(("list",), ("apps",), ("deployments",), ("d",)),
    )
    assert rules.non_resource_rules == (NonResourceRule(("get",), ("/healthz",)),)
    assert rules.incomplete
    assert rules.error == 'role.rbac.authorization.k8s.io "ghost" not found'
    cluster_only = rbac.rules_for(UserInfo("u", "", ("g",)), "")
    assert len(cluster_only.resource_rules) == 1
    assert not cluster_only.incomplete
