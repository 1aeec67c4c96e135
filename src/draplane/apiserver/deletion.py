"""Deletion: preconditions, graceful pod deletion, finalizers and propagation policies.

An object with finalizers (or a pod with a grace period, or a namespace with spec.finalizers)
gets `deletionTimestamp` and stays; it is removed when an update leaves it with no finalizers and
no grace period left; the first deletion mark bumps `metadata.generation`. Propagation: Orphan
adds finalizer `orphan`, Foreground adds `foregroundDeletion`; the garbage collector (a
controller) does the cascade, as in Kubernetes.

The deleter sees the server through the narrow `DeletionContext` (storage and the clock);
`Registry` satisfies it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from draplane.api import errors, kinds, meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.apiserver.strategies import ResourceStrategy
from draplane.clock import Clock, format_time
from draplane.storage.interface import Storage

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


class DeletionContext(Protocol):
    """What deletion uses of the server."""

    @property
    def storage(self) -> Storage: ...

    @property
    def clock(self) -> Clock: ...


class Deleter:
    def __init__(self, server: DeletionContext) -> None:
        self._server = server

    async def delete(self, strategy: ResourceStrategy, old: Obj, options: Obj) -> Obj:
        rt = strategy.rt
        if not isinstance(options, dict):
            raise errors.bad_request("DeleteOptions must be an object")
        _check_preconditions(rt, old, options.get("preconditions") or {})
        policy = _policy(options, strategy.default_propagation)
        grace = _grace_period(strategy, old, options.get("gracePeriodSeconds"))
        dry_run = bool(options.get("dryRun"))
        if meta.deletion_timestamp(old):
            return await self._delete_again(strategy, old, grace, dry_run=dry_run)
        new = meta.deep_copy(old)
        md = new["metadata"]
        extra = (
            {ORPHAN} if policy == "Orphan" else {FOREGROUND} if policy == "Foreground" else set()
        )
        if extra and strategy.has_dependents:
            md["finalizers"] = sorted(set(md.get("finalizers") or []) | extra)
        blocked = bool(md.get("finalizers")) or grace > 0 or _namespace_pending(rt, new)
        if not blocked:
            return old if dry_run else await self.remove(strategy, old, expected_rv=_rv(old))
        now = self._server.clock.now()
        md["deletionTimestamp"] = format_time(now + timedelta(seconds=grace))
        md["deletionGracePeriodSeconds"] = grace
        generation = md.get("generation")
        if isinstance(generation, int) and generation > 0:
            md["generation"] = generation + 1  # BeforeDelete: the deletion mark is a change
        if rt is kinds.NAMESPACES:
            new.setdefault("status", {})["phase"] = "Terminating"
        if dry_run:
            return new
        return await self._server.storage.update(rt.key, new, expected_rv=_rv(old))

    async def _delete_again(
        self, strategy: ResourceStrategy, old: Obj, grace: int, *, dry_run: bool
    ) -> Obj:
        """A second DELETE: may shorten a graceful deletion; grace 0 removes it if it can."""
        rt = strategy.rt
        current = old["metadata"].get("deletionGracePeriodSeconds")
        if current is None or grace >= int(current):
            return old
        new = meta.deep_copy(old)
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        new["metadata"]["deletionTimestamp"] = format_time(
            self._server.clock.now() + timedelta(seconds=grace)
        )
        if dry_run:
            return new
        if self.should_remove(strategy, new):
            return await self.remove(strategy, new, expected_rv=_rv(old))
        return await self._server.storage.update(rt.key, new, expected_rv=_rv(old))

    @staticmethod
    def should_remove(strategy: ResourceStrategy, obj: Obj) -> bool:
        md = obj.get("metadata") or {}
        if not md.get("deletionTimestamp") or md.get("finalizers"):
            return False
        if _namespace_pending(strategy.rt, obj):
            return False
        return not md.get("deletionGracePeriodSeconds")

    async def remove(self, strategy: ResourceStrategy, obj: Obj, *, expected_rv: int) -> Obj:
        rt = strategy.rt
        ns = meta.namespace(obj) if rt.namespaced else ""
        deleted = await self._server.storage.delete(
            rt.key, ns, meta.name(obj), expected_rv=expected_rv
        )
        if strategy.delete_returns_object:
            return deleted
        details: Obj = {"name": meta.name(obj), "kind": rt.resource, "uid": meta.uid(obj)}
        if rt.group:
            details["group"] = rt.group
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }


def _rv(obj: Obj) -> int:
    return int(meta.resource_version(obj))


def _check_preconditions(rt: ResourceType, obj: Obj, pre: Obj) -> None:
    if not isinstance(pre, dict):
        raise errors.bad_request("preconditions must be an object")
    uid, rv = pre.get("uid"), pre.get("resourceVersion")
    if uid and uid != meta.uid(obj):
        raise errors.conflict(
            rt,
            meta.name(obj),
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.uid(obj)}",
        )
    if rv and rv != meta.resource_version(obj):
        raise errors.conflict(
            rt,
            meta.name(obj),
            f"Precondition failed: ResourceVersion in precondition: {rv}, "
            f"ResourceVersion in object meta: {meta.resource_version(obj)}",
        )


def _policy(options: Obj, default: str) -> str:
    policy = options.get("propagationPolicy")
    orphan = options.get("orphanDependents")
    if policy and orphan is not None:
        raise errors.invalid_object(
            "DeleteOptions",
            "",
            [
                errors.invalid(
                    "propagationPolicy",
                    policy,
                    "orphanDependents and deletionPropagation cannot be both set",
                )
            ],
        )
    if policy is None:
        return default if orphan is None else "Orphan" if orphan else "Background"
    if policy not in ("Orphan", "Background", "Foreground"):
        raise errors.invalid_object(
            "DeleteOptions",
            "",
            [
                errors.not_supported(
                    "propagationPolicy", policy, ["Foreground", "Background", "Orphan"]
                )
            ],
        )
    return str(policy)


def _grace_period(strategy: ResourceStrategy, old: Obj, requested: object) -> int:
    value: int | None = None
    if requested is not None:
        if isinstance(requested, bool) or not isinstance(requested, int):
            raise errors.bad_request("gracePeriodSeconds must be an integer")
        value = requested
    return strategy.grace_period(old, value)


def _namespace_pending(rt: ResourceType, obj: Obj) -> bool:
    return rt is kinds.NAMESPACES and bool((obj.get("spec") or {}).get("finalizers"))
