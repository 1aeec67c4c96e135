"""RBAC escalation prevention: the checks RBAC storage runs on Role, ClusterRole, RoleBinding and
ClusterRoleBinding writes, after authorization (pkg/registry/rbac/escalation_check.go,
pkg/registry/rbac/*/policybased/storage.go, component-helpers' policy_comparator.go).

A role write passes for `system:masters`, for a user allowed to `escalate` that role, or when the
user already holds every rule it grants in that namespace; an aggregationRule needs full
authority. A binding write passes for `system:masters`, for a user allowed to `bind` the
referenced role, or when the user holds every rule of that role. Updates that change only
ownerReferences or finalizers are exempt. Failures are 403s with upstream's text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from draplane.api import errors, kinds, meta
from draplane.api.auth import SYSTEM_MASTERS, UserInfo
from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.validation.objectmeta import semantic_equal
from draplane.apiserver.authorization import Attributes, Authorizer, Decision, RuleResolver
from draplane.apiserver.authorization.rules import (
    ALL,
    PolicyRule,
    breakdown,
    compact,
    from_review_rules,
    go_quote,
    go_quote_list,
    rules_of,
)

GetRole = Callable[[str, str, str], Obj | None]
"""(roleRef kind, namespace, name) -> the Role or ClusterRole, or None when it does not exist."""

FULL_AUTHORITY = (
    PolicyRule((ALL,), (ALL,), (ALL,)),
    PolicyRule((ALL,), non_resource_urls=(ALL,)),
)
AGGREGATION_RULE_FORBIDDEN = "must have cluster-admin privileges to use the aggregationRule"
# Metadata a garbage-collection update may change without an escalation check
# (IsOnlyMutatingGCFields), plus what the server sets (validation guards those).
_GC_META_FIELDS = (
    "ownerReferences",
    "finalizers",
    "selfLink",
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
)


# --- covering ---------------------------------------------------------------------------------


def _resource_covers(owner: Sequence[str], resources: Sequence[str]) -> bool:
    if ALL in owner:
        return True
    for resource in resources:
        if resource in owner:
            continue
        if "/" not in resource or "*/" + resource.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covers(owner: str, url: str) -> bool:
    return owner == url or (owner.endswith("*") and url.startswith(owner.rstrip("*")))


def rule_covers(owner: PolicyRule, piece: PolicyRule) -> bool:
    """ruleCovers: does `owner` cover `piece` (at most one verb, group, resource and name)?"""
    if not (ALL in owner.verbs or set(piece.verbs) <= set(owner.verbs)):
        return False
    if not (ALL in owner.api_groups or set(piece.api_groups) <= set(owner.api_groups)):
        return False
    if not _resource_covers(owner.resources, piece.resources):
        return False
    if not all(
        any(_url_covers(o, u) for o in owner.non_resource_urls) for u in piece.non_resource_urls
    ):
        return False
    if not piece.resource_names:
        return not owner.resource_names
    return not owner.resource_names or set(piece.resource_names) <= set(owner.resource_names)


def covers(
    owner_rules: Sequence[PolicyRule], servant_rules: Sequence[PolicyRule]
) -> tuple[bool, list[PolicyRule]]:
    """Covers: whether `owner_rules` allow everything `servant_rules` do, and the pieces of the
    servant rules (see `rules.breakdown`) that no owner rule covers."""
    missing = [
        piece
        for rule in servant_rules
        for piece in breakdown(rule)
        if not any(rule_covers(owner, piece) for owner in owner_rules)
    ]
    return not missing, missing


def confirm_no_escalation(
    user: UserInfo, namespace: str, rules: Sequence[PolicyRule], resolver: RuleResolver
) -> str | None:
    """ConfirmNoEscalation: None when the user holds `rules` in `namespace`, else the message."""
    held = resolver.rules_for(user, namespace)
    owner = from_review_rules(held.resource_rules, held.non_resource_rules)
    ok, missing = covers(owner, rules)
    if ok:
        return None
    lines = sorted({rule.compact_string() for rule in compact(missing)})
    message = (
        f"user {go_quote(user.name)} (groups={go_quote_list(user.groups)}) is attempting to "
        "grant RBAC permissions not currently held:\n" + "\n".join(lines)
    )
    if held.error:
        message += f"; resolution errors: [{held.error}]"
    return message


# --- storage-time checks ----------------------------------------------------------------------


def escalation_allowed(user: UserInfo) -> bool:
    """EscalationAllowed: `system:masters` may grant anything."""
    return SYSTEM_MASTERS in user.groups


def only_gc_fields_changed(obj: Obj, old: Obj | None) -> bool:
    """IsOnlyMutatingGCFields: the update changes nothing but ownerReferences and finalizers."""
    if old is None:
        return False
    new_md = dict(meta.metadata(obj))
    old_md = meta.metadata(old)
    for field in _GC_META_FIELDS:
        new_md.pop(field, None)
    old_md = {k: v for k, v in old_md.items() if k not in _GC_META_FIELDS}
    rest = {k: v for k, v in obj.items() if k != "metadata"}
    old_rest = {k: v for k, v in old.items() if k != "metadata"}
    return semantic_equal(new_md, old_md) and semantic_equal(rest, old_rest)


def has_aggregation_rule(role: Obj | None) -> bool:
    rule = role.get("aggregationRule") if role is not None else None
    return isinstance(rule, dict) and bool(rule.get("clusterRoleSelectors"))


def forbidden(rt: ResourceType, name: str, message: str) -> StatusError:
    """NewForbidden on an RBAC resource: `<resource>.<group> "<name>" is forbidden: <message>`."""
    what = f"{rt.group_resource} {go_quote(name)}" if name else rt.group_resource
    return errors.forbidden_message(f"{what} is forbidden: {message}", rt, name)


def _allowed(authorizer: Authorizer, attrs: Attributes) -> bool:
    return authorizer.authorize(attrs).decision is Decision.ALLOW


def check_role_write(
    user: UserInfo,
    rt: ResourceType,
    obj: Obj,
    old: Obj | None,
    *,
    authorizer: Authorizer,
    resolver: RuleResolver,
    request_name: str | None = None,
) -> None:
    """Role/ClusterRole create (`old` None) or update: raise a 403 StatusError on escalation.

    `request_name` is the name in the request URL; by default the object's name on update and
    "" on create, as for a POST (so `escalate` limited by resourceNames never applies to one).
    """
    if rt not in (kinds.ROLES, kinds.CLUSTER_ROLES) or escalation_allowed(user):
        return
    name = meta.name(obj)
    namespace = meta.namespace(obj) if rt.namespaced else ""
    if request_name is None:
        request_name = name if old is not None else ""
    escalate = Attributes(
        user,
        "escalate",
        api_group=rt.group,
        api_version="*",
        resource=rt.resource,
        namespace=namespace,
        name=request_name,
    )
    if _allowed(authorizer, escalate) or only_gc_fields_changed(obj, old):
        return
    message = confirm_no_escalation(user, namespace, rules_of(obj), resolver)
    if message is not None:
        raise forbidden(rt, name, message)
    aggregating = has_aggregation_rule(obj) or has_aggregation_rule(old)
    if (
        rt is kinds.CLUSTER_ROLES
        and aggregating
        and confirm_no_escalation(user, namespace, FULL_AUTHORITY, resolver) is not None
    ):
        raise forbidden(rt, name, AGGREGATION_RULE_FORBIDDEN)


def check_binding_write(
    user: UserInfo,
    rt: ResourceType,
    obj: Obj,
    old: Obj | None,
    *,
    authorizer: Authorizer,
    resolver: RuleResolver,
    get_role: GetRole,
) -> None:
    """RoleBinding/ClusterRoleBinding create or update: raise a 403 StatusError on escalation,
    or the referenced role's 404 when the user may not `bind` it and it does not exist.
    A roleRef of another kind is left to validation."""
    if rt not in (kinds.ROLE_BINDINGS, kinds.CLUSTER_ROLE_BINDINGS) or escalation_allowed(user):
        return
    if only_gc_fields_changed(obj, old):
        return
    ref: Any = obj.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    role_kind, role_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    role_rt = {"Role": kinds.ROLES, "ClusterRole": kinds.CLUSTER_ROLES}.get(role_kind)
    if role_rt is None:
        return
    namespace = meta.namespace(obj) if rt.namespaced else ""
    bind = Attributes(
        user,
        "bind",
        api_group=str(ref.get("apiGroup") or ""),
        resource=role_rt.resource,
        namespace=namespace,
        name=role_name,
    )
    if _allowed(authorizer, bind):
        return
    role = get_role(role_kind, namespace, role_name)
    if role is None:
        raise errors.not_found(role_rt, role_name)
    message = confirm_no_escalation(user, namespace, rules_of(role), resolver)
    if message is not None:
        raise forbidden(rt, meta.name(obj), message)


def check_write(
    user: UserInfo,
    rt: ResourceType,
    obj: Obj,
    old: Obj | None,
    *,
    authorizer: Authorizer,
    resolver: RuleResolver,
    get_role: GetRole,
) -> None:
    """Both checks behind one call: a no-op for kinds other than the four RBAC kinds."""
    if rt in (kinds.ROLES, kinds.CLUSTER_ROLES):
        check_role_write(user, rt, obj, old, authorizer=authorizer, resolver=resolver)
    elif rt in (kinds.ROLE_BINDINGS, kinds.CLUSTER_ROLE_BINDINGS):
        check_binding_write(
            user, rt, obj, old, authorizer=authorizer, resolver=resolver, get_role=get_role
        )
