"""Strategies of the rbac.authorization.k8s.io/v1 kinds (pkg/registry/rbac/*): validation, and
the escalation check that RBAC's policy-based storage runs before a write is stored.

The check uses the registry's authorizer (for `escalate` and `bind`) and the RBAC rule resolver
among `registry.rule_resolvers`; without one (no RBAC in the chain) it does nothing, which is
what upstream's check amounts to when every request is allowed. The referenced role of a binding
is read from the store, so a role written just before its binding is found.
"""

from __future__ import annotations

from draplane.api import kinds, meta
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.api.validation import rbac
from draplane.apiserver.authorization.escalation import check_write
from draplane.apiserver.authorization.rbac import RBACAuthorizer
from draplane.apiserver.strategies import ResourceStrategy
from draplane.apiserver.strategies.context import ServerContext

_INDEX_WAIT = 3.0
_ROLE_KINDS = {"Role": kinds.ROLES, "ClusterRole": kinds.CLUSTER_ROLES}


async def check_rbac_write(
    registry: ServerContext, user: UserInfo, obj: Obj, old: Obj | None
) -> None:
    resolver = next((r for r in registry.rule_resolvers if isinstance(r, RBACAuthorizer)), None)
    if resolver is None:
        return
    # The user's rules come from the index: let it catch up with the store first.
    await registry.watch_cache.wait_until_fresh(registry.storage.revision, _INDEX_WAIT)
    role: Obj | None = None
    ref = obj.get("roleRef")
    if obj.get("kind") in (kinds.ROLE_BINDINGS.kind, kinds.CLUSTER_ROLE_BINDINGS.kind) and (
        isinstance(ref, dict) and ref.get("kind") in _ROLE_KINDS
    ):
        role_rt = _ROLE_KINDS[str(ref["kind"])]
        namespace = meta.namespace(obj) if role_rt.namespaced else ""
        role = await registry.storage.get(role_rt.key, namespace, str(ref.get("name") or ""))
    rt = kinds.for_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if rt is None:
        return
    check_write(
        user,
        rt,
        obj,
        old,
        authorizer=registry.authorizer,
        resolver=resolver,
        get_role=lambda kind, namespace, name: role,
    )


STRATEGIES = (
    ResourceStrategy(
        kinds.ROLES,
        validate=rbac.validate_role,
        validate_update=rbac.validate_role_update,
        check_write=check_rbac_write,
    ),
    ResourceStrategy(
        kinds.CLUSTER_ROLES,
        validate=rbac.validate_cluster_role,
        validate_update=rbac.validate_cluster_role_update,
        check_write=check_rbac_write,
    ),
    ResourceStrategy(
        kinds.ROLE_BINDINGS,
        validate=rbac.validate_role_binding,
        validate_update=rbac.validate_role_binding_update,
        defaults=rbac.default_binding,
        check_write=check_rbac_write,
    ),
    ResourceStrategy(
        kinds.CLUSTER_ROLE_BINDINGS,
        validate=rbac.validate_cluster_role_binding,
        validate_update=rbac.validate_cluster_role_binding_update,
        defaults=rbac.default_binding,
        check_write=check_rbac_write,
    ),
)
