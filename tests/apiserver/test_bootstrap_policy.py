"""The bootstrap ClusterRoles draplane stores, rule by rule against upstream's.

`UPSTREAM` holds Kubernetes 1.34's bootstrap policy with its default feature gates
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy policy.go, controller_policy.go and their
testdata cluster-roles.yaml and controller-roles.yaml) for the roles draplane ships. Each role is
flattened to its grants (verb, API group, resource, resource name) and to its non-resource
grants, restricted to the resources draplane serves in the 1.36 mode (a wildcard group or
resource is kept as written), and compared with the ClusterRole read back from a started API
server. `DRAPLANE_1_36` lists the rules the 1.36 mode adds on purpose (docs/fidelity.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

import pytest
import pytest_asyncio

from draplane.api import kinds, meta, versions
from draplane.api.catalog import Catalog
from draplane.api.meta import Obj
from draplane.testing.cluster import Cluster, start_cluster

R = ("get", "list", "watch")
W = ("create", "update", "patch", "delete", "deletecollection")
RW = R + W
RU = (*R, "update", "patch")
RW_NO_COLLECTION = (*R, "create", "update", "patch", "delete")
CORE, APPS, BATCH, EXT, POLICY, NET = (
    "",
    "apps",
    "batch",
    "extensions",
    "policy",
    "networking.k8s.io",
)
AUTHN, AUTHZ, RBAC = "authentication.k8s.io", "authorization.k8s.io", "rbac.authorization.k8s.io"
COORD, RES, STORAGE = "coordination.k8s.io", "resource.k8s.io", "storage.k8s.io"
EVENTS_GROUPS = (CORE, "events.k8s.io")


@dataclass(frozen=True)
class Rule:
    verbs: tuple[str, ...]
    groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()


def rule(verbs: Iterable[str], groups: Iterable[str], *resources: str, names: Iterable[str] = ()):
    return Rule(tuple(verbs), tuple(groups), resources, tuple(names))


def urls(*paths: str) -> Rule:
    return Rule(("get",), urls=paths)


EVENTS = rule(("create", "update", "patch"), EVENTS_GROUPS, "events")
REVIEWS = [
    rule(("create",), (AUTHN,), "tokenreviews"),
    rule(("create",), (AUTHZ,), "subjectaccessreviews"),
]
HEALTH = ("/livez", "/readyz", "/healthz")
VERSION = ("/version", "/version/")

# fmt: off
AGGREGATE_TO_ADMIN = [
    rule(("create",), (AUTHZ,), "localsubjectaccessreviews"),
    rule(RW, (RBAC,), "roles", "rolebindings"),
]
AGGREGATE_TO_EDIT = [
    rule(R, (CORE,), "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets",
         "services/proxy"),
    rule(("impersonate",), (CORE,), "serviceaccounts"),
    rule(W, (CORE,), "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
    rule(("create",), (CORE,), "pods/eviction"),
    rule(W, (CORE,), "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
         "services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events"),
    rule(("create",), (CORE,), "serviceaccounts/token"),
    rule(W, (APPS,), "statefulsets", "statefulsets/scale", "daemonsets", "deployments",
         "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"),
    rule(W, ("autoscaling",), "horizontalpodautoscalers"),
    rule(W, (BATCH,), "jobs", "cronjobs"),
    rule(W, (EXT,), "daemonsets", "deployments", "deployments/scale", "deployments/rollback",
         "ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale",
         "networkpolicies"),
    rule(W, (POLICY,), "poddisruptionbudgets"),
    rule(W, (NET,), "networkpolicies", "ingresses"),
    # Leader election in one's own namespace: the edit role does grant leases (testdata).
    rule(RW, (COORD,), "leases"),
    rule(W, (RES,), "resourceclaims", "resourceclaimtemplates"),
]
AGGREGATE_TO_VIEW = [
    rule(R, (CORE,), "pods", "replicationcontrollers", "replicationcontrollers/scale",
         "serviceaccounts", "services", "services/status", "endpoints", "persistentvolumeclaims",
         "persistentvolumeclaims/status", "configmaps"),
    rule(R, (CORE,), "limitranges", "resourcequotas", "bindings", "events", "pods/status",
         "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
         "pods/log"),
    rule(R, (CORE,), "namespaces"),
    rule(R, ("discovery.k8s.io",), "endpointslices"),
    rule(R, (APPS,), "controllerrevisions", "statefulsets", "statefulsets/status",
         "statefulsets/scale", "daemonsets", "daemonsets/status", "deployments",
         "deployments/status", "deployments/scale", "replicasets", "replicasets/status",
         "replicasets/scale"),
    rule(R, ("autoscaling",), "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
    rule(R, (BATCH,), "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
    rule(R, (EXT,), "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
         "deployments/status", "ingresses", "ingresses/status", "replicasets",
         "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
         "networkpolicies"),
    rule(R, (POLICY,), "poddisruptionbudgets", "poddisruptionbudgets/status"),
    rule(R, (NET,), "networkpolicies", "ingresses", "ingresses/status"),
    rule(R, (RES,), "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
]

UPSTREAM: dict[str, list[Rule]] = {
    "cluster-admin": [rule(("*",), ("*",), "*"), Rule(("*",), urls=("*",))],
    "system:discovery": [urls(*HEALTH, *VERSION, "/openapi", "/openapi/*", "/api", "/api/*",
                              "/apis", "/apis/*")],
    "system:public-info-viewer": [urls(*HEALTH, *VERSION)],
    "system:monitoring": [urls("/metrics", "/metrics/slis", *HEALTH,
                               *(p + "/*" for p in HEALTH))],
    "system:basic-user": [
        rule(("create",), (AUTHZ,), "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
        rule(("create",), (AUTHN,), "selfsubjectreviews"),
    ],
    "system:auth-delegator": REVIEWS,
    "system:aggregate-to-admin": AGGREGATE_TO_ADMIN,
    "system:aggregate-to-edit": AGGREGATE_TO_EDIT,
    "system:aggregate-to-view": AGGREGATE_TO_VIEW,
    "admin": [*AGGREGATE_TO_ADMIN, *AGGREGATE_TO_EDIT, *AGGREGATE_TO_VIEW],
    "edit": [*AGGREGATE_TO_EDIT, *AGGREGATE_TO_VIEW],
    "view": AGGREGATE_TO_VIEW,
    "system:kube-scheduler": [
        EVENTS,
        rule(("create",), (COORD,), "leases"),
        rule(("get", "update"), (COORD,), "leases", names=("kube-scheduler",)),
        rule(R, (CORE,), "nodes"),
        rule(("get", "list", "watch", "delete"), (CORE,), "pods"),
        rule(("create",), (CORE,), "pods/binding", "bindings"),
        rule(("patch", "update"), (CORE,), "pods/status"),
        rule(R, (CORE,), "services", "replicationcontrollers"),
        rule(R, (APPS, EXT), "replicasets"),
        rule(R, (APPS,), "statefulsets"),
        rule(R, (POLICY,), "poddisruptionbudgets"),
        rule(R, (CORE,), "persistentvolumeclaims", "persistentvolumes"),
        *REVIEWS,
        rule(R, (STORAGE,), "csinodes", "volumeattachments", "csidrivers",
             "csistoragecapacities"),
        rule(R, (CORE,), "namespaces"),
        rule(R, (RES,), "deviceclasses", "resourceslices"),
        rule(RU, (RES,), "resourceclaims", "resourceclaims/status"),
    ],
    "system:kube-controller-manager": [
        EVENTS,
        rule(("create",), (COORD,), "leases"),
        rule(("get", "update"), (COORD,), "leases", names=("kube-controller-manager",)),
        rule(("create",), (CORE,), "secrets", "serviceaccounts"),
        rule(("delete",), (CORE,), "secrets"),
        rule(("get",), (CORE,), "namespaces", "secrets", "serviceaccounts", "configmaps"),
        rule(("update",), (CORE,), "secrets", "serviceaccounts"),
        *REVIEWS,
        rule(("list", "watch"), ("*",), "*"),
        rule(("create",), (CORE,), "serviceaccounts/token"),
    ],
    "system:node": [
        rule(("create",), (AUTHN,), "tokenreviews"),
        rule(("create",), (AUTHZ,), "subjectaccessreviews", "localsubjectaccessreviews"),
        rule(R, (CORE,), "services"),
        rule(("create", "get", "list", "watch", "update", "patch"), (CORE,), "nodes"),
        rule(("update", "patch"), (CORE,), "nodes/status"),
        rule(("create", "update", "patch"), (CORE,), "events"),
        rule((*R, "create", "delete"), (CORE,), "pods"),
        rule(("update", "patch"), (CORE,), "pods/status"),
        rule(("create",), (CORE,), "pods/eviction"),
        rule(R, (CORE,), "secrets", "configmaps"),
        rule(("get",), (CORE,), "persistentvolumeclaims", "persistentvolumes", "endpoints"),
        rule(("create", "get", "list", "watch"), ("certificates.k8s.io",),
             "certificatesigningrequests"),
        rule(("get", "create", "update", "patch", "delete"), (COORD,), "leases"),
        rule(("get",), (STORAGE,), "volumeattachments"),
        rule(("create",), (CORE,), "serviceaccounts/token"),
        rule(("get", "update", "patch"), (CORE,), "persistentvolumeclaims/status"),
        rule(R, (STORAGE,), "csidrivers"),
        rule(("get", "create", "update", "patch", "delete"), (STORAGE,), "csinodes"),
        rule(R, ("node.k8s.io",), "runtimeclasses"),
        rule(("get",), (RES,), "resourceclaims"),
        rule(("deletecollection",), (RES,), "resourceslices"),
        rule(("get",), (CORE,), "serviceaccounts"),
    ],
    "system:controller:clusterrole-aggregation-controller": [
        rule(("escalate", "get", "list", "watch", "update", "patch"), (RBAC,), "clusterroles"),
    ],
    "system:controller:generic-garbage-collector": [
        rule(("get", "list", "watch", "patch", "update", "delete"), ("*",), "*"), EVENTS,
    ],
    "system:controller:namespace-controller": [
        rule(("get", "list", "watch", "delete"), (CORE,), "namespaces"),
        rule(("update",), (CORE,), "namespaces/finalize", "namespaces/status"),
        rule(("get", "list", "watch", "delete", "deletecollection"), ("*",), "*"),
    ],
    "system:controller:service-account-controller": [
        rule(("create",), (CORE,), "serviceaccounts"), EVENTS,
    ],
    "system:controller:resource-claim-controller": [
        rule(R, (CORE,), "pods"),
        rule(("update",), (CORE,), "pods/finalizers"),
        rule(("get", "list", "watch", "create", "delete"), (RES,), "resourceclaims"),
        rule(("update", "patch"), (RES,), "resourceclaims", "resourceclaims/status"),
        rule(("update", "patch"), (CORE,), "pods/status"),
        EVENTS,
    ],
    "system:controller:deployment-controller": [
        rule(("get", "list", "watch", "update"), (APPS, EXT), "deployments"),
        rule(("update",), (APPS, EXT), "deployments/status", "deployments/finalizers"),
        rule(RW_NO_COLLECTION, (APPS, EXT), "replicasets"),
        rule(("get", "list", "watch", "update"), (CORE,), "pods"),
        EVENTS,
    ],
    "system:controller:replicaset-controller": [
        rule(("get", "list", "watch", "update"), (APPS, EXT), "replicasets"),
        rule(("update",), (APPS, EXT), "replicasets/status", "replicasets/finalizers"),
        rule(("list", "watch", "patch", "create", "delete"), (CORE,), "pods"),
        EVENTS,
    ],
    "system:controller:job-controller": [
        rule(("get", "list", "watch", "update", "patch"), (BATCH,), "jobs"),
        rule(("update",), (BATCH,), "jobs/status", "jobs/finalizers"),
        rule(("list", "watch", "create", "delete", "patch"), (CORE,), "pods"),
        EVENTS,
    ],
    "system:controller:cronjob-controller": [
        rule(("get", "list", "watch", "update"), (BATCH,), "cronjobs"),
        rule(RW_NO_COLLECTION, (BATCH,), "jobs"),
        rule(("update",), (BATCH,), "cronjobs/status", "cronjobs/finalizers"),
        rule(("list", "watch", "delete"), (CORE,), "pods"),
        EVENTS,
    ],
    "system:controller:daemon-set-controller": [
        rule(R, (APPS, EXT), "daemonsets"),
        rule(("update",), (APPS, EXT), "daemonsets/status", "daemonsets/finalizers"),
        rule(("list", "watch"), (CORE,), "nodes"),
        rule(("create", "delete", "list", "patch", "watch"), (CORE,), "pods"),
        rule(("create",), (CORE,), "pods/binding"),
        rule(RW_NO_COLLECTION, (APPS,), "controllerrevisions"),
        EVENTS,
    ],
    "system:controller:statefulset-controller": [
        rule(("list", "watch"), (CORE,), "pods"),
        rule(R, (APPS,), "statefulsets"),
        rule(("update",), (APPS,), "statefulsets/status", "statefulsets/finalizers"),
        rule(("create", "delete", "get", "patch", "update"), (CORE,), "pods"),
        rule(RW_NO_COLLECTION, (APPS,), "controllerrevisions"),
        rule(("create", "get", "list", "watch", "delete", "update"), (CORE,),
             "persistentvolumeclaims"),
        rule(("update",), (CORE,), "pods/finalizers"),
        EVENTS,
    ],
}
# fmt: on

DRAPLANE_1_36: dict[str, list[Rule]] = {
    "system:kube-scheduler": [
        # DRAResourceClaimGranularStatusAuthorization and DRAExtendedResource (1.36).
        rule(("update", "patch"), (RES,), "resourceclaims/binding"),
        rule(("create", "delete"), (RES,), "resourceclaims"),
    ],
    "system:controller:resource-claim-controller": [
        rule(("update", "patch"), (RES,), "resourceclaims/binding"),
    ],
}

Grant = tuple[str, str, str, str]
"""(verb, API group or `url`, resource or non-resource URL, resource name or "")."""


def _served() -> set[tuple[str, str]]:
    return {(rt.group, rt.resource) for rt in Catalog(versions.STRUCTURED).served()}


def _grants(rules: Iterable[Rule], served: set[tuple[str, str]]) -> set[Grant]:
    out: set[Grant] = set()
    for r in rules:
        for verb in r.verbs:
            out.update((verb, "url", path, "") for path in r.urls)
            for group in r.groups:
                for resource in r.resources:
                    base = resource.split("/")[0]
                    if group != "*" and base != "*" and (group, base) not in served:
                        continue
                    out.update((verb, group, resource, name) for name in r.names or ("",))
    # A grant limited to names adds nothing where the same grant holds for every name.
    return {g for g in out if not g[3] or (*g[:3], "") not in out}


def _stored_rules(role: Obj) -> list[Rule]:
    return [
        Rule(
            tuple(r.get("verbs") or ()),
            tuple(r.get("apiGroups") or ()),
            tuple(r.get("resources") or ()),
            tuple(r.get("resourceNames") or ()),
            tuple(r.get("nonResourceURLs") or ()),
        )
        for r in role.get("rules") or []
    ]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stored_roles() -> AsyncIterator[dict[str, Obj]]:
    cluster: Cluster = await start_cluster(mode=versions.STRUCTURED)
    try:
        roles = (await cluster.client().list(kinds.CLUSTER_ROLES))["items"]
        yield {meta.name(role): role for role in roles}
    finally:
        await cluster.stop()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("name", sorted(UPSTREAM))
async def test_role_grants_what_upstream_grants(stored_roles: dict[str, Obj], name: str) -> None:
    served = _served()
    want = _grants([*UPSTREAM[name], *DRAPLANE_1_36.get(name, [])], served)
    got = _grants(_stored_rules(stored_roles[name]), served)
    assert sorted(got - want) == [], "granted beyond upstream"
    assert sorted(want - got) == [], "missing upstream grants"


def test_upstream_rules_cover_the_resources_draplane_serves() -> None:
    """Each role's table is not vacuous: it names served resources (so a renamed or dropped
    kind fails here instead of passing silently)."""
    served = _served()
    for name, rules in UPSTREAM.items():
        assert _grants(rules, served), name
