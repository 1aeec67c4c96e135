"""Impersonation: `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
`Impersonate-Extra-<key>` headers (`kubectl --as`, `--as-group`, `--as-uid`), each checked
against the `impersonate` verb for the real user (k8s.io/apiserver endpoints/filters
impersonation.go). The new identity is exactly what was asked: nothing is looked up.
"""

from __future__ import annotations

from urllib.parse import unquote

from multidict import CIMultiDictProxy

from draplane.api import errors
from draplane.api.auth import (
    ANONYMOUS,
    SERVICE_ACCOUNT_PREFIX,
    SYSTEM_AUTHENTICATED,
    SYSTEM_UNAUTHENTICATED,
    UserInfo,
    service_account_groups,
)
from draplane.apiserver.authorization import Attributes, Authorizer, Decision

_EXTRA_PREFIX = "impersonate-extra-"
_AUTHENTICATION_GROUP = "authentication.k8s.io"


def impersonate(user: UserInfo, headers: CIMultiDictProxy[str], authorizer: Authorizer) -> UserInfo:
    """`user`, or the identity the impersonation headers ask for once every item is allowed."""
    name = headers.get("Impersonate-User", "")
    groups = tuple(headers.getall("Impersonate-Group", []))
    uid = headers.get("Impersonate-Uid", "")
    extra: dict[str, list[str]] = {}
    for key, value in headers.items():
        if key.lower().startswith(_EXTRA_PREFIX):
            extra.setdefault(unquote(key[len(_EXTRA_PREFIX) :]).lower(), []).append(value)
    if not name:
        if groups or extra or uid:
            asked = [*(f"group {g}" for g in groups), *(f"extra {k}" for k in extra)]
            if uid:
                asked.append(f"uid {uid}")
            raise errors.internal(f"requested [{', '.join(asked)}] without impersonating a user")
        return user
    checks: list[tuple[str, str, str, str, str]] = []  # group, resource, sub, namespace, name
    checks.extend(("", "groups", "", "", g) for g in groups)
    if name.startswith(SERVICE_ACCOUNT_PREFIX) and name.count(":") == 3:
        sa_namespace, sa_name = name[len(SERVICE_ACCOUNT_PREFIX) :].split(":")
        checks.insert(0, ("", "serviceaccounts", "", sa_namespace, sa_name))
        if not groups:
            groups = service_account_groups(sa_namespace)
    else:
        checks.insert(0, ("", "users", "", "", name))
    for key, values in extra.items():
        checks.extend((_AUTHENTICATION_GROUP, "userextras", key, "", v) for v in values)
    if uid:
        checks.append((_AUTHENTICATION_GROUP, "uids", "", "", uid))
    for group, resource, sub, namespace, item in checks:
        attrs = Attributes(user, "impersonate", True, group, "", resource, sub, namespace, item)
        result = authorizer.authorize(attrs)
        if result.decision is not Decision.ALLOW:
            raise errors.forbidden_resource(
                user.name,
                "impersonate",
                group,
                resource,
                namespace or None,
                item,
                result.reason,
                subresource=sub,
            )
    if name == ANONYMOUS:
        if SYSTEM_UNAUTHENTICATED not in groups:
            groups = (*groups, SYSTEM_UNAUTHENTICATED)
    elif SYSTEM_AUTHENTICATED not in groups and SYSTEM_UNAUTHENTICATED not in groups:
        groups = (*groups, SYSTEM_AUTHENTICATED)
    return UserInfo(name, uid, groups, tuple((k, tuple(v)) for k, v in extra.items()))
