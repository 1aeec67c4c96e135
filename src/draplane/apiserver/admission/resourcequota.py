"""ResourceQuota admission (plugin/pkg/admission/resourcequota): a create or update of an object
some quota of its namespace limits is charged to that quota, or refused.

For each quota of the namespace whose `status.hard` names a resource the object's evaluator
charges (`draplane.api.quota`) and whose scopes select the object, the object's usage (on
update, what it adds to the stored object's) is added to `status.used`; past `status.hard` the
request is refused with 403 `exceeded quota: NAME, requested: ..., used: ..., limited: ...`, and
a quota whose status lacks the use of such a resource refuses with `status unknown for quota`.
The new use is written to each quota's status before the object is stored, with the quota's
resourceVersion as precondition (a conflict re-reads and re-checks that quota); the resource
quota controller recomputes the use from what is stored (and after deletions). Writes of one
namespace are charged one at a time. Dry runs are checked, not charged.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

from draplane.api import kinds, meta, quota, versions
from draplane.api.meta import Obj
from draplane.api.quota import Evaluator
from draplane.api.quotausage import Usage, UsageContext, extended_resources
from draplane.apiserver.admission import AdmissionAttributes, forbidden
from draplane.clock import Clock
from draplane.storage.errors import RevisionConflict
from draplane.storage.interface import Storage

_CONFLICT_RETRIES = 50


class ResourceQuotaAdmission:
    def __init__(self, storage: Storage, *, mode: versions.Mode, clock: Clock) -> None:
        self._storage = storage
        self._mode = mode
        self._clock = clock
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def validate(self, a: AdmissionAttributes) -> None:
        if a.obj is None or not a.rt.namespaced or not a.namespace:
            return
        evaluator = quota.evaluator_for(a.rt.group_resource, self._mode)
        if not evaluator.handles(a.operation, a.subresource):
            return
        quotas, _ = await self._storage.list(kinds.RESOURCE_QUOTAS.key, a.namespace)
        if not quotas:
            return
        # Locks only for namespaces with quotas, so there are no more of them than quotas.
        async with self._locks[a.namespace]:
            quotas, _ = await self._storage.list(kinds.RESOURCE_QUOTAS.key, a.namespace)
            ctx = await self._context(evaluator)
            charged = _check(quotas, a, evaluator, ctx)
            if a.dry_run:
                return
            for updated in charged:
                await self._write(updated, a, evaluator, ctx)

    async def _context(self, evaluator: Evaluator) -> UsageContext:
        now = self._clock.now()
        if (
            not self._mode.structured
            or evaluator.group_resource != kinds.RESOURCE_CLAIMS.group_resource
        ):
            return UsageContext(now)
        classes, _ = await self._storage.list(kinds.DEVICE_CLASSES.key)
        return UsageContext(now, extended_resources(classes))

    async def _write(
        self, updated: Obj, a: AdmissionAttributes, evaluator: Evaluator, ctx: UsageContext
    ) -> None:
        for _ in range(_CONFLICT_RETRIES):
            try:
                await self._storage.update(
                    kinds.RESOURCE_QUOTAS.key,
                    updated,
                    expected_rv=int(meta.resource_version(updated)),
                )
                return
            except RevisionConflict:
                fresh = await self._storage.get(
                    kinds.RESOURCE_QUOTAS.key, a.namespace, meta.name(updated)
                )
                if fresh is None:
                    return
                again = _check([fresh], a, evaluator, ctx)
                if not again:
                    return
                updated = again[0]
        raise forbidden(a, f"failed to update quota: {meta.name(updated)}")


def _delta(a: AdmissionAttributes, evaluator: Evaluator, ctx: UsageContext) -> Usage:
    assert a.obj is not None
    delta = quota.remove_zeros(evaluator.usage(a.obj, ctx))
    if a.operation == "UPDATE" and a.old is not None and meta.resource_version(a.old):
        delta = quota.subtract_non_negative(delta, evaluator.usage(a.old, ctx))
    return quota.remove_zeros(delta)


def _check(
    quotas: list[Obj], a: AdmissionAttributes, evaluator: Evaluator, ctx: UsageContext
) -> list[Obj]:
    """CheckRequest: the quotas charged with the new use (deep copies), or a 403."""
    assert a.obj is not None
    interesting: list[Obj] = []
    for q in quotas:
        if not evaluator.matches(q, a.obj):
            continue
        limited = evaluator.matching(quota.hard(q))
        missing = [n for n in limited if n not in quota.used(q)]
        if missing:
            raise forbidden(
                a, f"status unknown for quota: {meta.name(q)}, resources: {','.join(missing)}"
            )
        interesting.append(q)
    if not interesting:
        return []
    delta = _delta(a, evaluator, ctx)
    if not delta:
        return []
    out: list[Obj] = []
    for q in interesting:
        hard, used = quota.hard(q), quota.used(q)
        requested = quota.mask(delta, hard)
        new_used = quota.add(used, requested)
        exceeded = sorted(n for n in requested if new_used[n] > hard[n])
        if exceeded:
            raise forbidden(
                a,
                f"exceeded quota: {meta.name(q)}, "
                f"requested: {quota.pretty(quota.mask(requested, exceeded))}, "
                f"used: {quota.pretty(quota.mask(used, exceeded))}, "
                f"limited: {quota.pretty(quota.mask(hard, exceeded))}",
            )
        if not requested:
            continue
        charged = meta.deep_copy(q)
        status = charged.setdefault("status", {})
        status["used"] = {**(status.get("used") or {}), **quota.format_list(new_used)}
        out.append(charged)
    return out
