"""Who makes a request: `UserInfo`, and the well-known component user names."""

from __future__ import annotations

from dataclasses import dataclass

SYSTEM_MASTERS = "system:masters"
SYSTEM_NODES = "system:nodes"
SYSTEM_AUTHENTICATED = "system:authenticated"
SYSTEM_UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
NODE_LEASE_NAMESPACE = "kube-node-lease"
"""Where each node's Lease (named after the node) lives."""

ADMIN = "admin"
SCHEDULER = "system:kube-scheduler"
CONTROLLER_MANAGER = "system:kube-controller-manager"
RESOURCE_CLAIM_CONTROLLER = "system:serviceaccount:kube-system:resource-claim-controller"
NODE_PREFIX = "system:node:"


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


SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SYSTEM_SERVICE_ACCOUNTS = "system:serviceaccounts"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return (SYSTEM_SERVICE_ACCOUNTS, f"{SYSTEM_SERVICE_ACCOUNTS}:{namespace}")


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The user a service account's token authenticates as."""
    return UserInfo(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        uid,
        (*service_account_groups(namespace), SYSTEM_AUTHENTICATED),
    )


def driver_user(driver: str) -> UserInfo:
    """A DRA driver controller's identity: its service account `kube-system/<driver>-controller`
    (as a driver's deployment runs it)."""
    return service_account_user("kube-system", f"{driver}-controller")


NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
"""The extra a service-account token bound to a node (or to a pod on it) carries."""


def driver_plugin_user(driver: str, node_name: str) -> UserInfo:
    """A DRA driver's kubelet plugin on `node_name`: its service account
    `kube-system/<driver>-kubelet-plugin` with a token bound to the node (the pod's projected
    token carries `authentication.kubernetes.io/node-name`)."""
    account = service_account_user("kube-system", f"{driver}-kubelet-plugin")
    return UserInfo(account.name, account.uid, account.groups, ((NODE_NAME_KEY, (node_name,)),))


def controller_user(controller: str) -> UserInfo:
    """A kube-controller-manager controller's identity: its service account in kube-system."""
    return service_account_user("kube-system", controller)


def node_user(node_name: str) -> UserInfo:
    return UserInfo(NODE_PREFIX + node_name, "", (SYSTEM_NODES, SYSTEM_AUTHENTICATED))


ANONYMOUS_USER = UserInfo(ANONYMOUS, "", (SYSTEM_UNAUTHENTICATED,))
ADMIN_USER = UserInfo(ADMIN, "", (SYSTEM_MASTERS, SYSTEM_AUTHENTICATED))
