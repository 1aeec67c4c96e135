"""The bootstrap rules of the workload controllers (Deployment, ReplicaSet, StatefulSet,
DaemonSet, Job, CronJob and TTL-after-finished), as
plugin/pkg/auth/authorizer/rbac/bootstrappolicy's controller_policy.go gives them;
`bootstrap.cluster_roles` adds them to the other system:controller:<name> roles and
`bootstrap.cluster_role_bindings` binds each to its kube-system service account.
"""

from __future__ import annotations

from draplane.api.meta import Obj
from draplane.apiserver.authorization.rulebuilders import (
    APPS,
    BATCH,
    CORE,
    EXTENSIONS,
    R,
    events_rule,
    rule,
)


# fmt: off
def workload_controller_rules() -> dict[str, list[Obj]]:
    """The workload controllers' rules (bootstrappolicy controller_policy.go)."""
    return {
        "cronjob-controller": [
            rule(("get", "list", "watch", "update"), (BATCH,), "cronjobs"),
            rule(("get", "list", "watch", "create", "update", "delete", "patch"), (BATCH,), "jobs"),
            rule(("update",), (BATCH,), "cronjobs/status"),
            rule(("update",), (BATCH,), "cronjobs/finalizers"),
            rule(("list", "watch", "delete"), (CORE,), "pods"),
            events_rule(),
        ],
        "daemon-set-controller": [
            rule(R, (EXTENSIONS, APPS), "daemonsets"),
            rule(("update",), (EXTENSIONS, APPS), "daemonsets/status"),
            rule(("update",), (EXTENSIONS, APPS), "daemonsets/finalizers"),
            rule(("list", "watch"), (CORE,), "nodes"),
            rule(("list", "watch", "create", "delete", "patch"), (CORE,), "pods"),
            rule(("create",), (CORE,), "pods/binding"),
            rule(("get", "list", "watch", "create", "delete", "update", "patch"), (APPS,),
                 "controllerrevisions"),
            events_rule(),
        ],
        "deployment-controller": [
            rule(("get", "list", "watch", "update"), (EXTENSIONS, APPS), "deployments"),
            rule(("update",), (EXTENSIONS, APPS), "deployments/status"),
            rule(("update",), (EXTENSIONS, APPS), "deployments/finalizers"),
            rule(("get", "list", "watch", (
                "create"
            ), "update", "patch", "delete"), (APPS, EXTENSIONS),
                 "replicasets"),
            rule(("get", "list", "watch", "update"), (CORE,), "pods"),
            events_rule(),
        ],
        "job-controller": [
            rule(("get", "list", "watch", "update", "patch"), (BATCH,), "jobs"),
            rule(("update",), (BATCH,), "jobs/status"),
            rule(("update",), (BATCH,), "jobs/finalizers"),
            rule(("list", "watch", "create", "delete", "patch"), (CORE,), "pods"),
            events_rule(),
        ],
        "replicaset-controller": [
            rule(("get", "list", "watch", "update"), (APPS, EXTENSIONS), "replicasets"),
            rule(("update",), (APPS, EXTENSIONS), "replicasets/status"),
            rule(("update",), (APPS, EXTENSIONS), "replicasets/finalizers"),
            rule(("list", "watch", "patch", "create", "delete"), (CORE,), "pods"),
            events_rule(),
        ],
        "statefulset-controller": [
            rule(("list", "watch"), (CORE,), "pods"),
            rule(R, (APPS,), "statefulsets"),
            rule(("update",), (APPS,), "statefulsets/status"),
            rule(("update",), (APPS,), "statefulsets/finalizers"),
            rule(("get", "create", "delete", "update", "patch"), (CORE,), "pods"),
            rule(("get", "create", "delete", "update", "patch", "list", "watch"), (APPS,),
                 "controllerrevisions"),
            rule(("get", "create", "list", "watch"), (CORE,), "persistentvolumeclaims"),
            rule(("update", "delete"), (CORE,), "persistentvolumeclaims"),
            rule(("update",), (CORE,), "pods/finalizers"),
            events_rule(),
        ],
        "ttl-after-finished-controller": [
            rule(("get", "list", "watch", "delete"), (BATCH,), "jobs"),
            events_rule(),
        ],
    }
# fmt: on
