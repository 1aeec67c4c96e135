"""Who makes a request: `UserInfo`, and the well-known component user names."""

from __future__ import annotations

from dataclasses import dataclass

SYSTEM_MASTERS = "system:masters"
SYSTEM_NODES = "system:nodes"
SYSTEM_AUTHENTICATED = "system:authenticated"

ADMIN = "admin"
SCHEDULER = "system:kube-scheduler"
CONTROLLER_MANAGER = "system:kube-controller-manager"
RESOURCE_CLAIM_CONTROLLER = "system:serviceaccount:kube-system:resource-claim-controller"
NODE_PREFIX = "system:node:"
DRIVER_PREFIX = "driver:"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Extra attributes (`authentication.kubernetes.io/pod-name`...) as (key, values) pairs,
    sorted by key, so the user stays hashable."""

    def extra_dict(self) -> dict[str, list[str]]:
        """`extra` as Kubernetes' `map[string][]string`."""
        return {key: list(values) for key, values in self.extra}

    @property
    def node_name(self) -> str | None:
        """The node this user is, for `system:node:<name>` in group system:nodes."""
        if self.name.startswith(NODE_PREFIX) and SYSTEM_NODES in self.groups:
            return self.name[len(NODE_PREFIX) :]
        return None


def node_user(node_name: str) -> UserInfo:
    return UserInfo(NODE_PREFIX + node_name, "", (SYSTEM_NODES, SYSTEM_AUTHENTICATED))


ADMIN_USER = UserInfo(ADMIN, "", (SYSTEM_MASTERS, SYSTEM_AUTHENTICATED))
