"""Admin access to devices only in admin namespaces (DRAAdminAccess, GA in 1.36;
pkg/registry/resource/utils.go AuthorizedForAdmin and AuthorizedForAdminStatus).

A ResourceClaim or ResourceClaimTemplate created with a request `exactly.adminAccess: true`, and
a claim status update that sets a new allocation with an `adminAccess: true` result, need the
`resource.kubernetes.io/admin-access: "true"` label on the namespace; otherwise a 422 with
upstream's Forbidden cause. Updates of the (immutable) spec and of an allocation that already
granted admin access are not checked again, as upstream.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors
from draplane.api.auth import UserInfo
from draplane.api.errors import FieldError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.strategies import WriteCheck
from draplane.apiserver.strategies.context import ServerContext

ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_REFUSED = (
    f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the "
    "containing namespace"
)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _requested_in_spec(spec: Obj) -> str | None:
    """The path of the first request asking for admin access, or None. Upstream names it
    `spec.devices.requests[i].adminAccess` for templates too (their requests sit under
    `spec.spec`), without `exactly`."""
    for i, request in enumerate(_list(_dict(spec.get("devices")).get("requests"))):
        if _dict(_dict(request).get("exactly")).get("adminAccess") is True:
            return f"spec.devices.requests[{i}].adminAccess"
    return None


def _requested_in_results(status: Obj) -> str | None:
    results = _dict(_dict(status.get("allocation")).get("devices")).get("results")
    for i, result in enumerate(_list(results)):
        if _dict(result).get("adminAccess") is True:
            return f"status.allocation.devices.results[{i}].adminAccess"
    return None


async def _namespace_check(ctx: ServerContext, namespace: str, path: str) -> list[FieldError]:
    ns = await ctx.lookup("namespaces", "", namespace)
    if ns is None:
        return [
            FieldError(
                "InternalError",
                path,
                "could not retrieve namespace to verify admin access: "
                f'namespaces "{namespace}" not found',
            )
        ]
    labels = _dict(_dict(ns.get("metadata")).get("labels"))
    if labels.get(ADMIN_NAMESPACE_LABEL) != "true":
        return [errors.forbidden(path, ADMIN_ACCESS_REFUSED)]
    return []


async def _check(ctx: ServerContext, rt: ResourceType, obj: Obj, path: str | None) -> None:
    if path is None:
        return
    md = _dict(obj.get("metadata"))
    causes = await _namespace_check(ctx, str(md.get("namespace") or ""), path)
    if causes:
        raise errors.invalid_object(rt.kind, str(md.get("name") or ""), causes, rt)


def create_check(rt: ResourceType, *, template: bool) -> WriteCheck:
    """AuthorizedForAdmin on create of a claim (`spec`) or a template (`spec.spec`)."""

    async def check(ctx: ServerContext, user: UserInfo, obj: Obj, old: Obj | None) -> None:
        del user
        spec = _dict(obj.get("spec"))
        if template:
            spec = _dict(spec.get("spec"))
        await _check(ctx, rt, obj, _requested_in_spec(spec) if old is None else None)

    return check


async def check_claim_status(ctx: ServerContext, rt: ResourceType, obj: Obj, old: Obj) -> None:
    """AuthorizedForAdminStatus: a new allocation granting admin access; nothing when the old
    allocation already granted it (the allocation is immutable)."""
    if _requested_in_results(_dict(old.get("status"))) is None:
        await _check(ctx, rt, obj, _requested_in_results(_dict(obj.get("status"))))
