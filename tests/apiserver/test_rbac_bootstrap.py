"""The bootstrap RBAC policy (what each identity may do once it is loaded and aggregated) and its
additive reconciliation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from draplane.api import kinds, meta, versions
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj, deep_copy
from draplane.apiserver.authorization import Attributes, Decision
from draplane.apiserver.authorization.aggregation import aggregated_rules
from draplane.apiserver.authorization.bootstrap import (
    AUTOUPDATE,
    BOOTSTRAP_LABELS,
    cluster_role_bindings,
    cluster_roles,
)
from draplane.apiserver.authorization.rbac import RBACAuthorizer
from draplane.apiserver.authorization.reconcile import must_recreate, reconcile
from draplane.storage.memory import MemoryStorage
from draplane.testing import kindrules as validation
from draplane.testing.cluster import Cluster, start_cluster
from draplane.testing.rbacbuilders import make_cluster_role, make_role_binding, rule

RBAC = "rbac.authorization.k8s.io"


def test_every_object_is_labelled_annotated_and_valid() -> None:
    objects = [*cluster_roles(versions.CLASSIC), *cluster_role_bindings()]
    names = [(o["kind"], meta.name(o)) for o in objects]
    assert len(names) == len(set(names))
    for obj in objects:
        assert meta.labels(obj).items() >= BOOTSTRAP_LABELS.items(), meta.name(obj)
        assert meta.annotations(obj) == {AUTOUPDATE: "true"}
        rt = kinds.CLUSTER_ROLES if obj["kind"] == "ClusterRole" else kinds.CLUSTER_ROLE_BINDINGS
        defaulted = deep_copy(obj)
        validation.default(rt, defaulted)
        assert defaulted == obj, meta.name(obj)
        assert validation.validate_create(rt, obj) == [], meta.name(obj)
    role_names = {meta.name(o) for o in cluster_roles(versions.CLASSIC)}
    for binding in cluster_role_bindings():
        assert binding["roleRef"]["name"] in role_names


def _subjects(binding: Obj) -> list[tuple[str, str]]:
    out = []
    for s in binding.get("subjects") or []:
        name = f"{s['namespace']}/{s['name']}" if s["kind"] == "ServiceAccount" else s["name"]
        out.append((s["kind"], name))
    return out


def test_bindings() -> None:
    bindings = {meta.name(b): _subjects(b) for b in cluster_role_bindings()}
    assert bindings == {
        "cluster-admin": [("Group", "system:masters")],
        "system:monitoring": [("Group", "system:monitoring")],
        "system:discovery": [("Group", "system:authenticated")],
        "system:basic-user": [("Group", "system:authenticated")],
        "system:public-info-viewer": [
            ("Group", "system:authenticated"),
            ("Group", "system:unauthenticated"),
        ],
        "system:kube-controller-manager": [("User", "system:kube-controller-manager")],
        "system:kube-scheduler": [("User", "system:kube-scheduler")],
        "system:volume-scheduler": [("User", "system:kube-scheduler")],
        "system:node": [],
        "system:controller:clusterrole-aggregation-controller": [
            ("ServiceAccount", "kube-system/clusterrole-aggregation-controller")
        ],
        "system:controller:generic-garbage-collector": [
            ("ServiceAccount", "kube-system/generic-garbage-collector")
        ],
        "system:controller:namespace-controller": [
            ("ServiceAccount", "kube-system/namespace-controller")
        ],
        "system:controller:resource-claim-controller": [
            ("ServiceAccount", "kube-system/resource-claim-controller")
        ],
        "system:controller:service-account-controller": [
            ("ServiceAccount", "kube-system/service-account-controller")
        ],
        "system:controller:cronjob-controller": [
            ("ServiceAccount", "kube-system/cronjob-controller")
        ],
        "system:controller:daemon-set-controller": [
            ("ServiceAccount", "kube-system/daemon-set-controller")
        ],
        "system:controller:deployment-controller": [
            ("ServiceAccount", "kube-system/deployment-controller")
        ],
        "system:controller:job-controller": [("ServiceAccount", "kube-system/job-controller")],
        "system:controller:replicaset-controller": [
            ("ServiceAccount", "kube-system/replicaset-controller")
        ],
        "system:controller:statefulset-controller": [
            ("ServiceAccount", "kube-system/statefulset-controller")
        ],
        "system:controller:ttl-after-finished-controller": [
            ("ServiceAccount", "kube-system/ttl-after-finished-controller")
        ],
        "system:dra:driver.example.com:controller": [
            ("ServiceAccount", "kube-system/driver.example.com-controller")
        ],
        "system:dra:driver.example.com:kubelet-plugin": [
            ("ServiceAccount", "kube-system/driver.example.com-kubelet-plugin")
        ],
    }


def _aggregated_policy() -> list[Obj]:
    """The bootstrap roles after one pass of the aggregation controller (admin after edit after
    view, so that nested aggregation settles)."""
    roles = {meta.name(r): r for r in cluster_roles(versions.CLASSIC)}
    for name in ("view", "edit", "admin"):
        roles[name] = {**roles[name], "rules": aggregated_rules(roles[name], roles.values())}
    return list(roles.values())


def _policy(*extra: Obj) -> RBACAuthorizer:
    rbac = RBACAuthorizer()
    rbac.load(kinds.CLUSTER_ROLES.key, _aggregated_policy())
    rbac.load(kinds.CLUSTER_ROLE_BINDINGS.key, cluster_role_bindings())
    rbac.load(kinds.ROLE_BINDINGS.key, extra)
    return rbac


@dataclass(frozen=True)
class Can:
    user: str
    verb: str
    what: str
    """`group/resource[/sub]` (`/pods` is core), or a URL path starting with `//`."""
    namespace: str = "ns"
    allowed: bool = True
    groups: tuple[str, ...] = ("system:authenticated",)
    name: str = ""

    def attrs(self) -> Attributes:
        user = UserInfo(self.user, "", self.groups)
        if self.what.startswith("//"):
            return Attributes(user, self.verb, resource_request=False, path=self.what[1:])
        group, resource, *sub = self.what.split("/")
        return Attributes(
            user,
            self.verb,
            api_group=group,
            resource=resource,
            subresource="/".join(sub),
            namespace=self.namespace,
            name=self.name,
        )


SCHEDULER, KCM = "system:kube-scheduler", "system:kube-controller-manager"
CLAIMS_SA = "system:serviceaccount:kube-system:resource-claim-controller"
DRIVER_SA = "system:serviceaccount:kube-system:driver.example.com-controller"
PLUGIN_SA = "system:serviceaccount:kube-system:driver.example.com-kubelet-plugin"
AGGREGATOR_SA = "system:serviceaccount:kube-system:clusterrole-aggregation-controller"
GC_SA = "system:serviceaccount:kube-system:generic-garbage-collector"
NS_SA = "system:serviceaccount:kube-system:namespace-controller"
SA_SA = "system:serviceaccount:kube-system:service-account-controller"
ANONYMOUS = ("system:unauthenticated",)
R = "resource.k8s.io"
LEASES = "coordination.k8s.io/leases"
CANS = [
    Can("system:anonymous", "get", "//version", groups=ANONYMOUS),
    Can("system:anonymous", "get", "//healthz", groups=ANONYMOUS),
    Can("system:anonymous", "get", "//api", groups=ANONYMOUS, allowed=False),
    Can("jane", "get", "//apis/resource.k8s.io"),
    Can("jane", "get", "//metrics", allowed=False),
    Can("jane", "create", "authorization.k8s.io/selfsubjectaccessreviews", namespace=""),
    Can("jane", "create", "authentication.k8s.io/selfsubjectreviews", namespace=""),
    Can("jane", "list", "/pods", allowed=False),
    Can("admin", "delete", "/nodes", namespace="", groups=("system:masters",)),
    Can("admin", "get", "//anything", groups=("system:masters",)),
    Can(SCHEDULER, "create", "/pods/binding"),
    Can(SCHEDULER, "patch", "/pods/status"),
    Can(SCHEDULER, "update", f"{R}/resourceclaims/status"),
    Can(SCHEDULER, "update", f"{R}/resourceclaims", allowed=False),
    Can(SCHEDULER, "watch", f"{R}/resourceclasses", namespace=""),
    Can(SCHEDULER, "delete", f"{R}/podschedulingcontexts"),
    Can(SCHEDULER, "update", f"{R}/podschedulingcontexts/status", allowed=False),
    Can(CLAIMS_SA, "create", f"{R}/resourceclaims"),
    Can(CLAIMS_SA, "patch", f"{R}/resourceclaims/status"),
    Can(CLAIMS_SA, "update", f"{R}/resourceclaims", allowed=False),
    Can(CLAIMS_SA, "get", f"{R}/resourceclaimtemplates", allowed=False),
    Can(CLAIMS_SA, "update", f"{R}/podschedulingcontexts"),
    Can(CLAIMS_SA, "patch", "/pods/status"),
    Can(CLAIMS_SA, "create", "/events"),
    Can(KCM, "watch", "apps/deployments"),
    Can(KCM, "delete", "/pods", allowed=False),
    Can(GC_SA, "delete", "anything/widgets"),
    Can(NS_SA, "update", "/namespaces/finalize", namespace=""),
    Can(NS_SA, "deletecollection", f"{R}/resourceclaims"),
    Can(AGGREGATOR_SA, "escalate", f"{RBAC}/clusterroles", namespace=""),
    Can(SA_SA, "create", "/serviceaccounts"),
    Can(SA_SA, "delete", "/serviceaccounts", allowed=False),
    Can(DRIVER_SA, "update", f"{R}/resourceclaims"),
    Can(DRIVER_SA, "update", f"{R}/podschedulingcontexts/status"),
    Can(DRIVER_SA, "get", "/configmaps"),
    Can(DRIVER_SA, "delete", f"{R}/resourceclaims", allowed=False),
    Can(PLUGIN_SA, "get", f"{R}/resourceclaims"),
    Can(PLUGIN_SA, "list", f"{R}/resourceclaims", allowed=False),
    # system:node is bound to nobody: nodes are the Node authorizer's.
    Can("system:node:n1", "get", f"{R}/resourceclaims", groups=("system:nodes",), allowed=False),
    # view / edit / admin through RoleBindings in "ns".
    Can("viewer", "get", f"{R}/resourceclaims"),
    Can("viewer", "list", f"{R}/resourceclaims/status"),
    Can("viewer", "watch", f"{R}/resourceclaimtemplates"),
    Can("viewer", "get", f"{R}/resourceclasses", allowed=False),
    Can("viewer", "create", f"{R}/resourceclaims", allowed=False),
    Can("viewer", "get", "/secrets", allowed=False),
    Can("viewer", "list", "/pods"),
    Can("viewer", "get", f"{R}/resourceclaims", namespace="other", allowed=False),
    Can("editor", "create", f"{R}/resourceclaims"),
    Can("editor", "deletecollection", f"{R}/resourceclaimtemplates"),
    Can("editor", "update", f"{R}/resourceclaims/status", allowed=False),
    Can("editor", "update", "coordination.k8s.io/leases"),
    Can("editor", "create", f"{RBAC}/rolebindings", allowed=False),
    Can("admin-user", "create", f"{RBAC}/rolebindings"),
    Can("admin-user", "get", f"{R}/resourceclaims"),
    # Leader election: each component creates and renews its own Lease only.
    Can(SCHEDULER, "update", LEASES, "kube-system", name="kube-scheduler"),
    Can(SCHEDULER, "update", LEASES, "kube-system", name="kube-controller-manager", allowed=False),
    Can(KCM, "get", LEASES, "kube-system", name="kube-controller-manager"),
    Can(DRIVER_SA, "create", LEASES, "kube-system"),
    Can(DRIVER_SA, "update", LEASES, "kube-system", name="driver.example.com-controller"),
    Can(DRIVER_SA, "update", LEASES, "kube-system", name="kube-scheduler", allowed=False),
]


@pytest.mark.parametrize(
    "can", [pytest.param(c, id=f"{c.user}-{c.verb}-{c.what}-{c.name}") for c in CANS]
)
def test_bootstrap_decisions(can: Can) -> None:
    rbac = _policy(
        make_role_binding("view", "ns").role("ClusterRole", "view").user("viewer").obj(),
        make_role_binding("edit", "ns").role("ClusterRole", "edit").user("editor").obj(),
        make_role_binding("admin", "ns").role("ClusterRole", "admin").user("admin-user").obj(),
    )
    decision = rbac.authorize(can.attrs()).decision
    assert decision is (Decision.ALLOW if can.allowed else Decision.NO_OPINION)


# --- reconciliation ---------------------------------------------------------------------------

desired_role = (
    make_cluster_role("r")
    .label("kubernetes.io/bootstrapping", "rbac-defaults")
    .annotation(AUTOUPDATE, "true")
    .rule(["get", "list"], [""], ["pods"])
)
desired_aggregate = (
    make_cluster_role("agg").annotation(AUTOUPDATE, "true").aggregate({"x": "true"})
).rules([])
desired_binding = (
    make_role_binding("b", "ns")
    .annotation(AUTOUPDATE, "true")
    .role("ClusterRole", "r")
    .group("g")
    .user("u")
)


@dataclass(frozen=True)
class Reconcile:
    existing: Obj | None
    desired: Obj
    expected: Obj | None


def _stored(obj: Obj) -> Obj:
    stored = deep_copy(obj)
    stored["metadata"].update(uid="u-1", resourceVersion="7")
    return stored


RECONCILES = [
    pytest.param(Reconcile(None, desired_role.obj(), desired_role.obj()), id="missing-created"),
    pytest.param(Reconcile(_stored(desired_role.obj()), desired_role.obj(), None), id="equal"),
    pytest.param(
        Reconcile(
            _stored(make_cluster_role("r").annotation(AUTOUPDATE, "false").obj()),
            desired_role.obj(),
            None,
        ),
        id="autoupdate-false-left-alone",
    ),
    pytest.param(
        Reconcile(
            _stored(
                make_cluster_role("r")
                .label("team", "a")
                .annotation(AUTOUPDATE, "true")
                .label("kubernetes.io/bootstrapping", "custom")
                .rule(["get"], [""], ["pods"])
                .rule(["delete"], [""], ["nodes"])
                .obj()
            ),
            desired_role.obj(),
            _stored(
                make_cluster_role("r")
                .label("team", "a")
                .annotation(AUTOUPDATE, "true")
                .label("kubernetes.io/bootstrapping", "custom")
                .rule(["get"], [""], ["pods"])
                .rule(["delete"], [""], ["nodes"])
                .rule(["list"], [""], ["pods"])
                .obj()
            ),
        ),
        id="missing-piece-added-extras-and-existing-values-kept",
    ),
    pytest.param(
        Reconcile(
            _stored(make_cluster_role("r").rule(["get", "list"], [""], ["pods"]).obj()),
            desired_role.obj(),
            _stored(
                make_cluster_role("r")
                .label("kubernetes.io/bootstrapping", "rbac-defaults")
                .annotation(AUTOUPDATE, "true")
                .rule(["get", "list"], [""], ["pods"])
                .obj()
            ),
        ),
        id="labels-and-annotations-added",
    ),
    pytest.param(
        Reconcile(
            _stored(
                make_cluster_role("r")
                .label("kubernetes.io/bootstrapping", "rbac-defaults")
                .annotation(AUTOUPDATE, "true")
                .rule(["get", "list"], [""], ["pods"])
                .aggregate({"y": "true"})
                .obj()
            ),
            desired_role.obj(),
            _stored(desired_role.obj()),
        ),
        id="aggregation-rule-dropped-from-plain-role",
    ),
    pytest.param(
        Reconcile(
            _stored(
                make_cluster_role("agg")
                .annotation(AUTOUPDATE, "true")
                .aggregate({"y": "true"})
                .rule(["get"], [""], ["pods"])
                .obj()
            ),
            desired_aggregate.obj(),
            _stored(
                make_cluster_role("agg")
                .annotation(AUTOUPDATE, "true")
                .aggregate({"y": "true"}, {"x": "true"})
                .rule(["get"], [""], ["pods"])
                .obj()
            ),
        ),
        id="selector-added-aggregated-rules-kept",
    ),
    pytest.param(
        Reconcile(
            _stored(
                make_role_binding("b", "ns")
                .annotation(AUTOUPDATE, "true")
                .role("ClusterRole", "r")
                .user("extra")
                .user("u")
                .obj()
            ),
            desired_binding.obj(),
            _stored(
                make_role_binding("b", "ns")
                .annotation(AUTOUPDATE, "true")
                .role("ClusterRole", "r")
                .user("extra")
                .user("u")
                .group("g")
                .obj()
            ),
        ),
        id="binding-subject-added",
    ),
    pytest.param(
        Reconcile(
            _stored(
                make_role_binding("b", "ns")
                .annotation(AUTOUPDATE, "true")
                .role("ClusterRole", "other")
                .obj()
            ),
            desired_binding.obj(),
            desired_binding.obj(),
        ),
        id="binding-role-ref-changed-recreated",
    ),
]


@pytest.mark.parametrize("case", RECONCILES)
def test_reconcile(case: Reconcile) -> None:
    before = deep_copy(case.existing) if case.existing is not None else None
    assert reconcile(case.existing, case.desired) == case.expected
    assert case.existing == before


def test_must_recreate() -> None:
    stored = _stored(desired_binding.obj())
    assert not must_recreate(stored, desired_binding.obj())
    stored["roleRef"]["name"] = "other"
    assert must_recreate(stored, desired_binding.obj())
    assert not must_recreate(_stored(desired_role.obj()), desired_role.obj())


def test_reconciling_the_policy_twice_writes_nothing() -> None:
    for desired in [*cluster_roles(versions.CLASSIC), *cluster_role_bindings()]:
        written = reconcile(None, desired)
        assert written is not None
        assert reconcile(_stored(written), desired) is None
    # The bootstrap rules are exactly what `rule` builds in tests.
    assert rule(["get"], [""], ["pods"]) == {
        "verbs": ["get"],
        "apiGroups": [""],
        "resources": ["pods"],
    }


async def test_registry_start_writes_the_policy_and_follows_it_from_the_store(
    cluster: Cluster,
) -> None:
    admin = cluster.client()
    stored = [
        *(await admin.list(kinds.CLUSTER_ROLES))["items"],
        *(await admin.list(kinds.CLUSTER_ROLE_BINDINGS))["items"],
    ]
    by_name = {(o["kind"], meta.name(o)): o for o in stored}
    for desired in [*cluster_roles(versions.CLASSIC), *cluster_role_bindings()]:
        existing = by_name[desired["kind"], meta.name(desired)]
        if "aggregationRule" in desired:
            desired = {**desired, "rules": []}  # filled by aggregation, kept additively
        assert reconcile(existing, desired) is None

    binding = Can(SCHEDULER, "create", "/pods/binding").attrs()
    assert cluster.registry.rbac.authorize(binding).reason == (
        'RBAC: allowed by ClusterRoleBinding "system:kube-scheduler" of ClusterRole '
        '"system:kube-scheduler" to User "system:kube-scheduler"'
    )
    view = by_name["ClusterRole", "view"]
    assert {"resourceclaims"} <= {r for rule in view["rules"] for r in rule["resources"]}


async def test_restart_restores_removed_rules_and_keeps_added_ones() -> None:
    storage = MemoryStorage()  # two registries over one store: a restart, not the suite's cluster
    first = await start_cluster(storage=storage)
    admin = first.client()
    role = await admin.get(kinds.CLUSTER_ROLES, "system:kube-scheduler")
    extra = {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}
    edited = {**role, "rules": [extra]}
    await admin.update(kinds.CLUSTER_ROLES, edited)
    await first.registry.stop()

    second = await start_cluster(storage=storage)
    try:
        restored = await second.client().get(kinds.CLUSTER_ROLES, "system:kube-scheduler")
        assert restored["rules"][0] == extra
        assert (
            reconcile(
                restored,
                next(
                    r
                    for r in cluster_roles(versions.CLASSIC)
                    if meta.name(r) == "system:kube-scheduler"
                ),
            )
            is None
        )
    finally:
        await second.stop()
