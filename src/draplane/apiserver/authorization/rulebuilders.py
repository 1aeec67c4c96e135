"""What the modules of the bootstrap RBAC policy build their rules from: `rule`, `urls`,
`events_rule`, the verb sets and the API groups."""

from __future__ import annotations

from collections.abc import Sequence

from draplane.api import kinds
from draplane.api.meta import Obj

R = ("get", "list", "watch")
W = ("create", "update", "patch", "delete", "deletecollection")
RW = R + W
RU = (*R, "update", "patch")
CORE, APPS, BATCH, EXTENSIONS, POLICY = "", "apps", "batch", "extensions", "policy"
AUTHN, AUTHZ, COORDINATION = (
    kinds.AUTHENTICATION_GROUP,
    kinds.AUTHORIZATION_GROUP,
    "coordination.k8s.io",
)
RBAC, RESOURCE, STORAGE = kinds.RBAC_GROUP, kinds.RESOURCE_GROUP, "storage.k8s.io"
AUTOSCALING, NETWORKING, DISCOVERY = "autoscaling", "networking.k8s.io", "discovery.k8s.io"


def rule(
    verbs: Sequence[str], groups: Sequence[str], *resources: str, names: Sequence[str] = ()
) -> Obj:
    out: Obj = {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources)}
    if names:
        out["resourceNames"] = list(names)
    return out


def urls(verbs: Sequence[str], *paths: str) -> Obj:
    return {"verbs": list(verbs), "nonResourceURLs": list(paths)}


def events_rule() -> Obj:
    return rule(("create", "update", "patch"), (CORE, "events.k8s.io"), "events")
