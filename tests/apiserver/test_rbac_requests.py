"""RBAC through the in-process request path: the registry with RBAC as its authorizer and rule
resolver, RBAC objects validated by their strategies, and the escalation check run before a
role or binding is stored (the binding rows 57-62 of the authz spec's 7.4, as upstream's
TestRBAC runs them)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import errors, kinds
from draplane.api.auth import SYSTEM_AUTHENTICATED, UserInfo
from draplane.api.meta import Obj
from draplane.apiserver.authorization import SystemMasters, Union
from draplane.apiserver.authorization.rbac import RBACAuthorizer
from draplane.testing.cluster import Cluster
from draplane.testing.rbacbuilders import (
    make_cluster_role,
    make_cluster_role_binding,
    make_role,
    make_role_binding,
)

RB, CRB, CR, ROLES = (
    kinds.ROLE_BINDINGS,
    kinds.CLUSTER_ROLE_BINDINGS,
    kinds.CLUSTER_ROLES,
    kinds.ROLES,
)
RBAC_GROUP = "rbac.authorization.k8s.io"


def user(name: str) -> UserInfo:
    return UserInfo(name, "", (SYSTEM_AUTHENTICATED,))


POLICY: tuple[tuple[kinds.ResourceType, Obj], ...] = (
    (
        CR,
        make_cluster_role("write-jobs").rule(["create", "get", "list"], ["batch"], ["jobs"]).obj(),
    ),
    (
        CR,
        make_cluster_role("create-rolebindings")
        .rule(["create"], [RBAC_GROUP], ["rolebindings"])
        .obj(),
    ),
    (
        CR,
        make_cluster_role("bind-any-clusterrole")
        .rule(["bind"], [RBAC_GROUP], ["clusterroles"])
        .obj(),
    ),
    (
        CR,
        make_cluster_role("create-roles").rule(["create", "update"], [RBAC_GROUP], ["roles"]).obj(),
    ),
    (CR, make_cluster_role("pod-reader").rule(["get"], [""], ["pods"]).obj()),
    (
        RB,
        make_role_binding("jobs", "job-namespace")
        .role("ClusterRole", "write-jobs")
        .user("job-writer-namespace")
        .obj(),
    ),
    (
        RB,
        make_role_binding("create-rb", "job-namespace")
        .role("ClusterRole", "create-rolebindings")
        .user("job-writer-namespace")
        .user("nonescalating-rolebinding-writer")
        .obj(),
    ),
    (
        CRB,
        make_cluster_role_binding("create-rb")
        .role("ClusterRole", "create-rolebindings")
        .user("any-rolebinding-writer")
        .user("any-rolebinding-writer-namespace")
        .obj(),
    ),
    (
        CRB,
        make_cluster_role_binding("bind-any")
        .role("ClusterRole", "bind-any-clusterrole")
        .user("any-rolebinding-writer")
        .obj(),
    ),
    (
        RB,
        make_role_binding("bind-any", "job-namespace")
        .role("ClusterRole", "bind-any-clusterrole")
        .user("any-rolebinding-writer-namespace")
        .obj(),
    ),
    (
        RB,
        make_role_binding("roles", "job-namespace")
        .role("ClusterRole", "create-roles")
        .user("role-writer")
        .obj(),
    ),
    (
        RB,
        make_role_binding("reader", "job-namespace")
        .role("ClusterRole", "pod-reader")
        .user("role-writer")
        .obj(),
    ),
)


@pytest.fixture
async def cluster(cluster: Cluster) -> Cluster:
    """The cluster authorizing through RBAC, with the namespaces and the policy of POLICY."""
    started = cluster
    rbac = RBACAuthorizer()
    started.registry.watch_cache.add_observer(rbac.observe)
    started.registry.authorizer = Union([SystemMasters(), rbac])
    started.registry.rule_resolvers = [rbac]
    admin = started.client()
    for name in ("job-namespace", "forbidden-namespace"):
        await admin.create(
            kinds.NAMESPACES,
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
    for rt, obj in POLICY:
        await admin.create(rt, obj, obj["metadata"].get("namespace", ""))
    return started


@dataclass(frozen=True)
class Post:
    user: str
    rt: kinds.ResourceType
    obj: Obj
    code: int = 201
    message: str = ""


def _held(name: str) -> str:
    return (
        f'user "{name}" (groups=["system:authenticated"]) is attempting to grant RBAC '
        "permissions not currently held:\n"
    )


JOBS = '{APIGroups:["batch"], Resources:["jobs"], Verbs:["create" "get" "list"]}'
write_jobs_in_ns = (
    make_role_binding("b", "job-namespace").role("ClusterRole", "write-jobs").user("x")
)
write_jobs_elsewhere = (
    make_role_binding("b", "forbidden-namespace").role("ClusterRole", "write-jobs").user("x")
)
POSTS = [
    pytest.param(
        Post(
            "user-with-no-permissions",
            RB,
            write_jobs_in_ns.obj(),
            403,
            'rolebindings.rbac.authorization.k8s.io is forbidden: User "user-with-no-permissions" '
            'cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in '
            'the namespace "job-namespace"',
        ),
        id="row57-not-authorized",
    ),
    pytest.param(Post("job-writer-namespace", RB, write_jobs_in_ns.obj()), id="row58-covers"),
    pytest.param(
        Post("job-writer-namespace", RB, write_jobs_elsewhere.obj(), 403),
        id="row59-other-namespace",
    ),
    pytest.param(
        Post(
            "nonescalating-rolebinding-writer",
            RB,
            write_jobs_in_ns.obj(),
            403,
            'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f"{_held('nonescalating-rolebinding-writer')}{JOBS}",
        ),
        id="row60-escalation",
    ),
    pytest.param(Post("any-rolebinding-writer", RB, write_jobs_in_ns.obj()), id="row61-bind"),
    pytest.param(
        Post(
            "any-rolebinding-writer-namespace",
            RB,
            write_jobs_elsewhere.obj(),
            403,
            'rolebindings.rbac.authorization.k8s.io "b" is forbidden: '
            f"{_held('any-rolebinding-writer-namespace')}{JOBS}",
        ),
        id="row62-bind-only-in-namespace",
    ),
    pytest.param(
        Post(
            "any-rolebinding-writer",
            RB,
            make_role_binding("b", "job-namespace").role("ClusterRole", "ghost").obj(),
        ),
        id="bind-allowed-missing-role",
    ),
    pytest.param(
        Post(
            "role-writer",
            ROLES,
            make_role("r", "job-namespace").rule(["get"], [""], ["pods"]).obj(),
        ),
        id="role-covered",
    ),
    pytest.param(
        Post(
            "role-writer",
            ROLES,
            make_role("r", "job-namespace").rule(["get", "delete"], [""], ["pods"]).obj(),
            403,
            'roles.rbac.authorization.k8s.io "r" is forbidden: '
            f'{_held("role-writer")}{{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}}',
        ),
        id="role-escalation",
    ),
    pytest.param(
        Post("admin", RB, make_role_binding("b", "job-namespace").role("Role", "a/b").obj(), 422),
        id="validated-by-strategy",
    ),
]


@pytest.mark.parametrize("case", POSTS)
async def test_post(cluster: Cluster, case: Post) -> None:
    who = UserInfo("admin", "", ("system:masters",)) if case.user == "admin" else user(case.user)
    client = cluster.client(who)
    namespace = case.obj["metadata"].get("namespace", "")
    if case.code == 201:
        created = await client.create(case.rt, case.obj, namespace)
        assert created["metadata"]["uid"]
        return
    with pytest.raises(errors.StatusError) as raised:
        await client.create(case.rt, case.obj, namespace)
    assert raised.value.code == case.code
    if case.message:
        assert raised.value.message == case.message
    with pytest.raises(errors.StatusError) as missing:
        await cluster.client().get(case.rt, case.obj["metadata"]["name"], namespace)
    assert errors.is_not_found(missing.value)


async def test_binding_to_a_role_created_just_before(cluster: Cluster) -> None:
    """role-writer holds get pods; once allowed to create rolebindings it may bind a Role it has
    just written with those rules (the escalation check reads the role from the store)."""
    admin = cluster.client()
    await admin.create(
        RB,
        make_role_binding("rb", "job-namespace")
        .role("ClusterRole", "create-rolebindings")
        .user("role-writer")
        .obj(),
        "job-namespace",
    )
    # Authorization reads the index, which follows the store a moment later (as upstream's
    # informers do).
    registry = cluster.registry
    assert await registry.watch_cache.wait_until_fresh(registry.storage.revision, 5.0)
    writer = cluster.client(user("role-writer"))
    role = make_role("fresh", "job-namespace").rule(["get"], [""], ["pods"]).obj()
    await writer.create(ROLES, role, "job-namespace")
    binding = make_role_binding("fresh", "job-namespace").role("Role", "fresh").user("y").obj()
    created = await writer.create(RB, binding, "job-namespace")
    assert created["roleRef"] == {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "fresh"}
    wider = make_role_binding("wider", "job-namespace").role("ClusterRole", "write-jobs").obj()
    with pytest.raises(errors.StatusError) as raised:
        await writer.create(RB, wider, "job-namespace")
    assert raised.value.code == 403
