"""Builders for the RBAC kinds: `make_cluster_role("r").rule(["get"], [""], ["pods"]).obj()`,
`make_role_binding("b", "ns").role("ClusterRole", "r").user("jane").obj()`.

Rules are written with `rule(verbs, groups, resources, names=...)` / `url_rule(verbs, urls)`;
subjects with `user`, `group` and `service_account`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from draplane.api.meta import Obj
from draplane.testing.builders import _Builder

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"


def rule(
    verbs: Sequence[str],
    groups: Sequence[str] = (),
    resources: Sequence[str] = (),
    names: Sequence[str] = (),
) -> Obj:
    out: Obj = {"verbs": list(verbs)}
    if groups:
        out["apiGroups"] = list(groups)
    if resources:
        out["resources"] = list(resources)
    if names:
        out["resourceNames"] = list(names)
    return out


def url_rule(verbs: Sequence[str], urls: Sequence[str]) -> Obj:
    return {"verbs": list(verbs), "nonResourceURLs": list(urls)}


class RoleBuilder(_Builder):
    def rule(
        self,
        verbs: Sequence[str],
        groups: Sequence[str] = (),
        resources: Sequence[str] = (),
        names: Sequence[str] = (),
    ) -> Self:
        self._obj.setdefault("rules", []).append(rule(verbs, groups, resources, names))
        return self

    def url_rule(self, verbs: Sequence[str], urls: Sequence[str]) -> Self:
        self._obj.setdefault("rules", []).append(url_rule(verbs, urls))
        return self

    def rules(self, rules: list[Obj]) -> Self:
        self._obj["rules"] = list(rules)
        return self

    def aggregate(self, *match_labels: dict[str, str]) -> Self:
        """An aggregationRule with one matchLabels selector per argument."""
        selectors = [{"matchLabels": dict(labels)} for labels in match_labels]
        self._obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
        return self


class BindingBuilder(_Builder):
    def role(self, kind: str, name: str) -> Self:
        self._obj["roleRef"] = {"apiGroup": RBAC_GROUP, "kind": kind, "name": name}
        return self

    def subject(self, subject: Obj) -> Self:
        self._obj.setdefault("subjects", []).append(subject)
        return self

    def user(self, name: str) -> Self:
        return self.subject({"kind": "User", "apiGroup": RBAC_GROUP, "name": name})

    def group(self, name: str) -> Self:
        return self.subject({"kind": "Group", "apiGroup": RBAC_GROUP, "name": name})

    def service_account(self, name: str, namespace: str = "") -> Self:
        subject: Obj = {"kind": "ServiceAccount", "name": name}
        if namespace:
            subject["namespace"] = namespace
        return self.subject(subject)


def make_role(name: str = "my-role", namespace: str = "default") -> RoleBuilder:
    return RoleBuilder(
        {
            "apiVersion": RBAC_API_VERSION,
            "kind": "Role",
            "metadata": {"name": name, "namespace": namespace},
        }
    )


def make_cluster_role(name: str = "my-cluster-role") -> RoleBuilder:
    return RoleBuilder(
        {"apiVersion": RBAC_API_VERSION, "kind": "ClusterRole", "metadata": {"name": name}}
    )


def make_role_binding(name: str = "my-binding", namespace: str = "default") -> BindingBuilder:
    return BindingBuilder(
        {
            "apiVersion": RBAC_API_VERSION,
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "my-role"},
        }
    )


def make_cluster_role_binding(name: str = "my-cluster-binding") -> BindingBuilder:
    return BindingBuilder(
        {
            "apiVersion": RBAC_API_VERSION,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "my-cluster-role"},
        }
    )
