"""The authorization stack the API server runs and the bootstrap policy it reconciles at start.

`build(graph)` returns the union of system:masters, the Node authorizer (with the `system:node`
rules applied for what it does not decide itself) and RBAC, and RBAC's index. `reconcile_policy`
writes the bootstrap ClusterRoles and ClusterRoleBindings through `write` at every start,
additively (kube-apiserver's `rbac/bootstrap-roles` post-start hook); an aggregated role written
for the first time carries its aggregated rules already, so `admin`, `edit` and `view` work
before the controller-manager runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from draplane.api import kinds, meta, versions
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.authorization import SystemMasters, Union
from draplane.apiserver.authorization.aggregation import aggregated_rules, selectors
from draplane.apiserver.authorization.bootstrap import (
    cluster_role_bindings,
    cluster_roles,
    node_rules,
)
from draplane.apiserver.authorization.node import NodeAuthorizer
from draplane.apiserver.authorization.rbac import RBACAuthorizer
from draplane.apiserver.authorization.reconcile import must_recreate, reconcile
from draplane.apiserver.authorization.rules import rules_allow, rules_of
from draplane.apiserver.nodegraph import NodeGraph
from draplane.storage.interface import Storage

Get = Callable[[ResourceType, str], Awaitable[Obj | None]]
Write = Callable[[ResourceType, Obj, Obj | None], Awaitable[None]]
"""Create (old None) or update `new`; a binding to recreate is deleted first by the caller."""


def build(graph: NodeGraph) -> tuple[Union, NodeAuthorizer, RBACAuthorizer]:
    system_node = rules_of({"rules": node_rules()})
    node = NodeAuthorizer(graph, lambda attrs: rules_allow(attrs, system_node))
    rbac = RBACAuthorizer()
    return Union([SystemMasters(), node, rbac]), node, rbac


async def load_index(storage: Storage, rbac: RBACAuthorizer) -> None:
    for rt in (kinds.ROLES, kinds.CLUSTER_ROLES, kinds.ROLE_BINDINGS, kinds.CLUSTER_ROLE_BINDINGS):
        objs, _ = await storage.list(rt.key)
        rbac.load(rt.key, objs)


Delete = Callable[[ResourceType, str], Awaitable[None]]


async def reconcile_policy(get: Get, write: Write, delete: Delete, *, mode: versions.Mode) -> int:
    """Bring the stored bootstrap policy of `mode` up to date; returns how many objects were
    written."""
    written = 0
    roles = _aggregated(cluster_roles(mode))
    for rt, desired in [
        *((kinds.CLUSTER_ROLES, r) for r in roles),
        *((kinds.CLUSTER_ROLE_BINDINGS, b) for b in cluster_role_bindings()),
    ]:
        existing = await get(rt, meta.name(desired))
        if existing is not None and selectors(desired) is not None:
            desired = {**desired, "rules": []}  # the aggregation controller owns them
        new = reconcile(existing, desired)
        if new is None:
            continue
        if existing is not None and must_recreate(existing, desired):
            await delete(rt, meta.name(existing))
            existing = None
        await write(rt, new, existing)
        written += 1
    return written


def _aggregated(roles: list[Obj]) -> list[Obj]:
    """The bootstrap roles with aggregated roles' rules filled in (to a fixed point: `edit`
    aggregates `view`, itself aggregated), as the aggregation controller will keep them."""
    for _ in range(len(roles)):
        changed = False
        for i, role in enumerate(roles):
            if selectors(role) is None:
                continue
            rules = aggregated_rules(role, roles)
            if rules != (role.get("rules") or []):
                roles[i] = {**role, "rules": rules}
                changed = True
        if not changed:
            break
    return roles
