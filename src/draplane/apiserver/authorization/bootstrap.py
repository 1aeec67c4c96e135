"""The bootstrap RBAC policy as data (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).

`cluster_roles(mode)` and `cluster_role_bindings()` return fresh objects, each labelled
`kubernetes.io/bootstrapping: rbac-defaults` and annotated `autoupdate: "true"`; the API server
reconciles them on every start (`reconcile.reconcile`). Content: Kubernetes 1.28 with the
DynamicResourceAllocation gate on, the mode's DRA rules of the scheduler and the resource claim
controller (`drapolicy`), the 1.34 resource.k8s.io rules of admin/edit/view applied to the
v1alpha2 kinds, and roles for the example driver's controller and kubelet plugin. The workload
controllers' rules are in `workloadpolicy`, the rule builders in `rulebuilders`.
"""

from __future__ import annotations

from draplane.api import auth, kinds, versions
from draplane.api.meta import Obj
from draplane.apiserver.authorization.drapolicy import DraRules, dra_rules
from draplane.apiserver.authorization.rulebuilders import (
    APPS,
    AUTHN,
    AUTHZ,
    AUTOSCALING,
    BATCH,
    COORDINATION,
    CORE,
    DISCOVERY,
    EXTENSIONS,
    NETWORKING,
    POLICY,
    RBAC,
    RESOURCE,
    RU,
    RW,
    STORAGE,
    R,
    W,
    events_rule,
    rule,
    urls,
)
from draplane.apiserver.authorization.workloadpolicy import workload_controller_rules

AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
SYSTEM_AUTHENTICATED = auth.SYSTEM_AUTHENTICATED
SYSTEM_UNAUTHENTICATED = auth.SYSTEM_UNAUTHENTICATED
CONTROLLER_PREFIX = "system:controller:"
CONTROLLER_NAMESPACE = "kube-system"
# The example DRA driver (driver.example.com): its controller and kubelet plugin identities.
DRIVER = "driver.example.com"
DRIVER_CONTROLLER_ROLE = f"system:dra:{DRIVER}:controller"
DRIVER_PLUGIN_ROLE = f"system:dra:{DRIVER}:kubelet-plugin"
DRIVER_CONTROLLER_SA = f"{DRIVER}-controller"
DRIVER_PLUGIN_SA = f"{DRIVER}-kubelet-plugin"


def _metadata(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {
        "name": name,
        "labels": {**(labels or {}), **BOOTSTRAP_LABELS},
        "annotations": {AUTOUPDATE: "true"},
    }


def cluster_role(
    name: str, rules: list[Obj], *, labels: dict[str, str] | None = None, aggregate: str = ""
) -> Obj:
    """A bootstrap ClusterRole; `aggregate` names the `aggregate-to-<x>` label it gathers."""
    role: Obj = {
        "apiVersion": kinds.CLUSTER_ROLES.api_version,
        "kind": kinds.CLUSTER_ROLES.kind,
        "metadata": _metadata(name, labels),
        "rules": rules,
    }
    if aggregate:
        selector = {"matchLabels": {AGGREGATE_TO + aggregate: "true"}}
        role["aggregationRule"] = {"clusterRoleSelectors": [selector]}
    return role


def user(name: str) -> Obj:
    return {"kind": "User", "apiGroup": RBAC, "name": name}


def group(name: str) -> Obj:
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def service_account(namespace: str, name: str) -> Obj:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def cluster_role_binding(name: str, *subjects: Obj, role: str = "") -> Obj:
    binding: Obj = {
        "apiVersion": kinds.CLUSTER_ROLE_BINDINGS.api_version,
        "kind": kinds.CLUSTER_ROLE_BINDINGS.kind,
        "metadata": _metadata(name),
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role or name},
    }
    if subjects:
        binding["subjects"] = list(subjects)
    return binding


# --- users, discovery and the aggregated roles ------------------------------------------------

_HEALTH = ("/livez", "/readyz", "/healthz")
_VERSION = ("/version", "/version/")
_DISCOVERY = (*_HEALTH, *_VERSION, "/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")
_MONITORING = ("/metrics", "/metrics/slis", *_HEALTH, *(p + "/*" for p in _HEALTH))


# fmt: off
def _aggregate_to_view() -> list[Obj]:
    return [
        rule(R, (CORE,), "pods", "replicationcontrollers", "replicationcontrollers/scale",
             "serviceaccounts", "services", "services/status", "endpoints",
             "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
        rule(R, (CORE,), "limitranges", "resourcequotas", "bindings", "events", "pods/status",
             "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
             "pods/log"),
        rule(R, (CORE,), "namespaces"),
        rule(R, (DISCOVERY,), "endpointslices"),
        rule(R, (APPS,), "controllerrevisions", "statefulsets", "statefulsets/status",
             "statefulsets/scale", "daemonsets", "daemonsets/status", "deployments",
             "deployments/status", "deployments/scale", "replicasets", "replicasets/status",
             "replicasets/scale"),
        rule(R, (AUTOSCALING,), "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
        rule(R, (BATCH,), "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
        rule(R, (EXTENSIONS,), "daemonsets", "daemonsets/status", "deployments",
             "deployments/scale", "deployments/status", "ingresses", "ingresses/status",
             "replicasets", "replicasets/scale", "replicasets/status",
             "replicationcontrollers/scale", "networkpolicies"),
        rule(R, (POLICY,), "poddisruptionbudgets", "poddisruptionbudgets/status"),
        rule(R, (NETWORKING,), "networkpolicies", "ingresses", "ingresses/status"),
        rule(R, (RESOURCE,), "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
    ]


def _aggregate_to_edit() -> list[Obj]:
    return [
        rule(R, (CORE,), "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets",
             "services/proxy"),
        rule(("impersonate",), (CORE,), "serviceaccounts"),
        rule(W, (CORE,), "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
        rule(("create",), (CORE,), "pods/eviction"),
        rule(W, (CORE,), "replicationcontrollers", "replicationcontrollers/scale",
             "serviceaccounts", "services", "services/proxy", "persistentvolumeclaims",
             "configmaps", "secrets", "events"),
        rule(("create",), (CORE,), "serviceaccounts/token"),
        rule(W, (APPS,), "statefulsets", "statefulsets/scale", "daemonsets", "deployments",
             "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"),
        rule(W, (AUTOSCALING,), "horizontalpodautoscalers"),
        rule(W, (BATCH,), "jobs", "cronjobs"),
        rule(W, (EXTENSIONS,), "daemonsets", "deployments", "deployments/scale",
             "deployments/rollback", "ingresses", "replicasets", "replicasets/scale",
             "replicationcontrollers/scale", "networkpolicies"),
        rule(W, (POLICY,), "poddisruptionbudgets"),
        rule(W, (NETWORKING,), "networkpolicies", "ingresses"),
        rule(RW, (COORDINATION,), "leases"),
        rule(W, (RESOURCE,), "resourceclaims", "resourceclaimtemplates"),
    ]
# fmt: on


def _user_roles() -> list[Obj]:
    return [
        cluster_role("cluster-admin", [rule(("*",), ("*",), "*"), urls(("*",), "*")]),
        cluster_role("system:discovery", [urls(("get",), *_DISCOVERY)]),
        cluster_role("system:monitoring", [urls(("get",), *_MONITORING)]),
        cluster_role(
            "system:basic-user",
            [
                rule(("create",), (AUTHZ,), "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
                rule(("create",), (AUTHN,), "selfsubjectreviews"),
            ],
        ),
        cluster_role("system:public-info-viewer", [urls(("get",), *_HEALTH, *_VERSION)]),
        cluster_role(
            "system:auth-delegator",
            [
                rule(("create",), (AUTHN,), "tokenreviews"),
                rule(("create",), (AUTHZ,), "subjectaccessreviews"),
            ],
        ),
        cluster_role("admin", [], aggregate="admin"),
        cluster_role("edit", [], labels={AGGREGATE_TO + "admin": "true"}, aggregate="edit"),
        cluster_role("view", [], labels={AGGREGATE_TO + "edit": "true"}, aggregate="view"),
        cluster_role(
            "system:aggregate-to-admin",
            [
                rule(("create",), (AUTHZ,), "localsubjectaccessreviews"),
                rule(RW, (RBAC,), "roles", "rolebindings"),
            ],
            labels={AGGREGATE_TO + "admin": "true"},
        ),
        cluster_role(
            "system:aggregate-to-edit",
            _aggregate_to_edit(),
            labels={AGGREGATE_TO + "edit": "true"},
        ),
        cluster_role(
            "system:aggregate-to-view",
            _aggregate_to_view(),
            labels={AGGREGATE_TO + "view": "true"},
        ),
    ]


# --- components -------------------------------------------------------------------------------


def _component_roles(dra: DraRules) -> list[Obj]:
    review = [
        rule(("create",), (AUTHN,), "tokenreviews"),
        rule(("create",), (AUTHZ,), "subjectaccessreviews"),
    ]
    return [
        cluster_role(
            "system:kube-scheduler",
            [
                events_rule(),
                rule(("create",), (COORDINATION,), "leases"),
                rule(("get", "update"), (COORDINATION,), "leases", names=("kube-scheduler",)),
                rule(R, (CORE,), "nodes"),
                rule(("get", "list", "watch", "delete"), (CORE,), "pods"),
                rule(("create",), (CORE,), "pods/binding", "bindings"),
                rule(("patch", "update"), (CORE,), "pods/status"),
                rule(R, (CORE,), "services", "replicationcontrollers"),
                rule(R, (APPS, EXTENSIONS), "replicasets"),
                rule(R, (APPS,), "statefulsets"),
                rule(R, (POLICY,), "poddisruptionbudgets"),
                rule(R, (CORE,), "persistentvolumeclaims", "persistentvolumes"),
                *review,
                rule(R, (STORAGE,), "csinodes"),
                rule(R, (STORAGE,), "volumeattachments"),
                rule(R, (CORE,), "namespaces"),
                rule(R, (STORAGE,), "csidrivers"),
                rule(R, (STORAGE,), "csistoragecapacities"),
                *dra.scheduler,
            ],
        ),
        cluster_role(
            "system:volume-scheduler",
            [
                rule(RU, (CORE,), "persistentvolumes"),
                rule(R, (STORAGE,), "storageclasses"),
                rule(RU, (CORE,), "persistentvolumeclaims"),
            ],
        ),
        cluster_role(
            "system:kube-controller-manager",
            [
                events_rule(),
                rule(("create",), (COORDINATION,), "leases"),
                rule(
                    ("get", "update"),
                    (COORDINATION,),
                    "leases",
                    names=("kube-controller-manager",),
                ),
                rule(("create",), (CORE,), "secrets", "serviceaccounts"),
                rule(("delete",), (CORE,), "secrets"),
                rule(("get",), (CORE,), "namespaces", "secrets", "serviceaccounts", "configmaps"),
                rule(("update",), (CORE,), "secrets", "serviceaccounts"),
                *review,
                rule(("list", "watch"), ("*",), "*"),
                rule(("create",), (CORE,), "serviceaccounts/token"),
            ],
        ),
        cluster_role("system:node", node_rules()),
    ]


# fmt: off
def node_rules() -> list[Obj]:
    """The system:node rules (1.34 NodeRules: the Node authorizer decides most of these kinds
    itself; the rules cover the rest)."""
    return [
        rule(("create",), (AUTHN,), "tokenreviews"),
        rule(("create",), (AUTHZ,), "subjectaccessreviews", "localsubjectaccessreviews"),
        rule(R, (CORE,), "services"),
        rule(("create", "get", "list", "watch"), (CORE,), "nodes"),
        rule(("update", "patch"), (CORE,), "nodes/status"),
        rule(("update", "patch"), (CORE,), "nodes"),
        rule(("create", "update", "patch"), (CORE,), "events"),
        rule(R, (CORE,), "pods"),
        rule(("create", "delete"), (CORE,), "pods"),
        rule(("update", "patch"), (CORE,), "pods/status"),
        rule(("create",), (CORE,), "pods/eviction"),
        rule(R, (CORE,), "secrets", "configmaps"),
        rule(("get",), (CORE,), "persistentvolumeclaims", "persistentvolumes"),
        rule(("get",), (CORE,), "endpoints"),
        rule(("create", "get", "list", "watch"), ("certificates.k8s.io",),
             "certificatesigningrequests"),
        rule(("get", "create", "update", "patch", "delete"), (COORDINATION,), "leases"),
        rule(("get",), (STORAGE,), "volumeattachments"),
        rule(("create",), (CORE,), "serviceaccounts/token"),
        rule(("get", "update", "patch"), (CORE,), "persistentvolumeclaims/status"),
        rule(("get", "watch", "list"), (STORAGE,), "csidrivers"),
        rule(("get", "create", "update", "patch", "delete"), (STORAGE,), "csinodes"),
        rule(R, ("node.k8s.io",), "runtimeclasses"),
        rule(("get",), (RESOURCE,), "resourceclaims"),
        rule(("deletecollection",), (RESOURCE,), "resourceslices"),
        # KubeletServiceAccountTokenForCredentialProviders (beta, on since 1.34).
        rule(("get",), (CORE,), "serviceaccounts"),
    ]
# fmt: on


def _controller_rules(claim_controller: list[Obj]) -> dict[str, list[Obj]]:
    """The rules of the system:controller:<name> roles of the controllers draplane runs (1.28
    rules; the resource claim controller's `claim_controller` rules are the mode's additions)."""
    return {
        "clusterrole-aggregation-controller": [
            rule(("escalate", "get", "list", "watch", "update", "patch"), (RBAC,), "clusterroles"),
        ],
        "generic-garbage-collector": [
            rule(("get", "list", "watch", "patch", "update", "delete"), ("*",), "*"),
            events_rule(),
        ],
        "namespace-controller": [
            rule(("get", "list", "watch", "delete"), (CORE,), "namespaces"),
            rule(("update",), (CORE,), "namespaces/finalize", "namespaces/status"),
            rule(("get", "list", "watch", "delete", "deletecollection"), ("*",), "*"),
        ],
        "resource-claim-controller": [
            rule(R, (CORE,), "pods"),
            rule(("update",), (CORE,), "pods/finalizers"),
            rule(("get", "list", "watch", "create", "delete"), (RESOURCE,), "resourceclaims"),
            rule((*R, "create", "update", "patch"), (RESOURCE,), "podschedulingcontexts"),
            rule(("update", "patch"), (RESOURCE,), "resourceclaims/status"),
            *claim_controller,
            rule(("update", "patch"), (CORE,), "pods/status"),
            events_rule(),
        ],
        "resourcequota-controller": [
            rule(("list", "watch"), ("*",), "*"),
            rule(("update",), (CORE,), "resourcequotas/status"),
            events_rule(),
        ],
        "service-account-controller": [
            rule(("create",), (CORE,), "serviceaccounts"),
            events_rule(),
        ],
        **workload_controller_rules(),
    }


def driver_roles() -> list[Obj]:
    """The example driver's controller (classic DRA, 1.28 helper calls) and kubelet plugin."""
    return [
        cluster_role(
            DRIVER_CONTROLLER_ROLE,
            [
                rule(("get", "list", "watch", "update"), (RESOURCE,), "resourceclaims"),
                rule(("update",), (RESOURCE,), "resourceclaims/status"),
                rule(R, (RESOURCE,), "resourceclasses"),
                rule(R, (RESOURCE,), "podschedulingcontexts"),
                rule(("update",), (RESOURCE,), "podschedulingcontexts/status"),
                rule(("get",), (CORE,), "pods"),
                events_rule(),
                # Parameter objects (ConfigMaps), and the nodes of immediate allocation.
                rule(R, (CORE,), "configmaps"),
                rule(R, (CORE,), "nodes"),
                # Leader election among the controller's replicas.
                rule(("create",), (COORDINATION,), "leases"),
                rule(("get", "update"), (COORDINATION,), "leases", names=(DRIVER_CONTROLLER_SA,)),
                # Parameter objects (the driver's custom resources).
                rule(R, (DRIVER,), "claimparameters", "classparameters"),
                # Structured parameters: the network-attached pool's ResourceSlices.
                rule(RW, (RESOURCE,), "resourceslices"),
            ],
        ),
        cluster_role(
            DRIVER_PLUGIN_ROLE,
            [
                rule(("get",), (RESOURCE,), "resourceclaims"),
                # Structured parameters: the claim's status.devices entries of this driver, on
                # the node the plugin's token is bound to (1.36 granular status authorization).
                rule(("update", "patch"), (RESOURCE,), "resourceclaims/status"),
                rule(
                    ("associated-node:update", "associated-node:patch"),
                    (RESOURCE,),
                    "resourceclaims/driver",
                    names=(DRIVER,),
                ),
            ],
        ),
    ]


def cluster_roles(mode: versions.Mode) -> list[Obj]:
    """The roles of `mode` (its DynamicResourceAllocation rules: `drapolicy`)."""
    dra = dra_rules(mode)
    controllers = [
        cluster_role(CONTROLLER_PREFIX + name, rules)
        for name, rules in _controller_rules(dra.claim_controller).items()
    ]
    return [*_user_roles(), *_component_roles(dra), *controllers, *driver_roles()]


def cluster_role_bindings() -> list[Obj]:
    controllers = [
        cluster_role_binding(CONTROLLER_PREFIX + name, service_account(CONTROLLER_NAMESPACE, name))
        for name in _controller_rules(claim_controller=[])  # the same controllers in both modes
    ]
    return [
        cluster_role_binding("cluster-admin", group(auth.SYSTEM_MASTERS)),
        cluster_role_binding("system:monitoring", group("system:monitoring")),
        cluster_role_binding("system:discovery", group(SYSTEM_AUTHENTICATED)),
        cluster_role_binding("system:basic-user", group(SYSTEM_AUTHENTICATED)),
        cluster_role_binding(
            "system:public-info-viewer", group(SYSTEM_AUTHENTICATED), group(SYSTEM_UNAUTHENTICATED)
        ),
        cluster_role_binding("system:kube-controller-manager", user(auth.CONTROLLER_MANAGER)),
        cluster_role_binding("system:kube-scheduler", user(auth.SCHEDULER)),
        cluster_role_binding("system:volume-scheduler", user(auth.SCHEDULER)),
        cluster_role_binding("system:node"),
        *controllers,
        cluster_role_binding(
            DRIVER_CONTROLLER_ROLE, service_account(CONTROLLER_NAMESPACE, DRIVER_CONTROLLER_SA)
        ),
        cluster_role_binding(
            DRIVER_PLUGIN_ROLE, service_account(CONTROLLER_NAMESPACE, DRIVER_PLUGIN_SA)
        ),
    ]
