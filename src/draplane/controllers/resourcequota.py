"""The resource quota controller: keeps each ResourceQuota's `status`
(pkg/controller/resourcequota).

A quota is synced when it is created or its spec changes, when an object of a kind it may
count is added or deleted in its namespace, or a pod there finishes or starts terminating, and
every `resync` seconds (upstream's --resource-quota-sync-period, 5m). The sync copies
`spec.hard` to `status.hard` and recomputes `status.used` from what the API server has stored,
with the evaluators quota admission charges with (`draplane.api.quota`): for every resource in
`hard`, the sum of the usage of the namespace's objects each matching evaluator counts and the
quota's scopes select. The status is written with the quota's resourceVersion; a conflict
requeues the quota.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from fractions import Fraction
from typing import Any

from draplane.api import kinds, meta, quota, versions
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.quota import Evaluator
from draplane.api.quotausage import Usage, UsageContext, extended_resources
from draplane.client.informer import DeletedFinalStateUnknown, Informer, unwrap
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController

log = logging.getLogger(__name__)

QUEUE_NAME = "resourcequota_primary"
RESYNC_SECONDS = 300.0
_KIND = "ResourceQuota"


class ResourceQuotaController(QueueController):
    NAME = "resourcequota-controller"
    QUEUE_NAME = QUEUE_NAME
    WORKERS = 5

    def __init__(
        self, ctx: ControllerContext, *, mode: versions.Mode, resync: float = RESYNC_SECONDS
    ) -> None:
        super().__init__(ctx)
        self._mode = mode
        self._resync = resync
        self._served = {rt.group_resource: rt for rt in reversed(mode.stored)}
        self._quotas = ctx.informers.informer(kinds.RESOURCE_QUOTAS)
        self._quotas.add_handler(
            on_add=self._enqueue_quota,
            on_update=self._quota_updated,
        )
        self._watched: list[Informer] = []
        for rt in (
            kinds.PODS,
            mode.resource_claims,
            kinds.SERVICES,
            kinds.PERSISTENT_VOLUME_CLAIMS,
            kinds.CONFIGMAPS,
            kinds.SECRETS,
            kinds.REPLICATION_CONTROLLERS,
        ):
            informer = ctx.informers.informer(rt)
            informer.add_handler(
                on_add=self._enqueue_namespace,
                on_update=self._object_updated if rt is kinds.PODS else None,
                on_delete=self._object_deleted,
            )
            self._watched.append(informer)

    def informers(self) -> tuple[Informer, ...]:
        return (self._quotas, *self._watched)

    def background(self) -> tuple[Coroutine[Any, Any, None], ...]:
        return (self._resync_loop(),)

    async def _resync_loop(self) -> None:
        while True:
            await self.clock.sleep(self._resync)
            for quota_obj in self._quotas.lister.list():
                self._enqueue_quota(quota_obj)

    # --- event handlers: only enqueue ----------------------------------------------------------

    def _enqueue_quota(self, obj: Obj) -> None:
        self.queue.add(ObjectKey.of(_KIND, obj))

    def _quota_updated(self, old: Obj, new: Obj) -> None:
        if (old.get("spec") or {}) != (new.get("spec") or {}) or _status_stale(new):
            self._enqueue_quota(new)

    def _enqueue_namespace(self, obj: Obj) -> None:
        for quota_obj in self._quotas.lister.list(meta.namespace(obj)):
            self._enqueue_quota(quota_obj)

    def _object_updated(self, old: Obj, new: Obj) -> None:
        phase = (new.get("status") or {}).get("phase")
        old_phase = (old.get("status") or {}).get("phase")
        finished = phase in ("Succeeded", "Failed") and phase != old_phase
        if finished or meta.deletion_timestamp(new) != meta.deletion_timestamp(old):
            self._enqueue_namespace(new)

    def _object_deleted(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self._enqueue_namespace(unwrap(obj))

    # --- sync ------------------------------------------------------------------------------------

    async def sync(self, key: ObjectKey) -> Obj | None:
        cached = self._quotas.lister.get(key.name, key.namespace)
        if cached is None:
            return None
        hard = quota.parse_list((cached.get("spec") or {}).get("hard"))
        used = await self.usage(cached, hard)
        status = {"hard": quota.format_list(hard), "used": quota.format_list(used)}
        if cached.get("status") == status:
            return cached
        updated = meta.deep_copy(cached)
        updated["status"] = status
        log.debug("Updating the status of ResourceQuota %s", key)
        return await self.client.update(kinds.RESOURCE_QUOTAS, updated, subresource="status")

    async def usage(self, quota_obj: Obj, hard: Usage) -> Usage:
        """The namespace's use of every resource in `hard`."""
        namespace = meta.namespace(quota_obj)
        used: Usage = {name: Fraction(0) for name in hard}
        ctx = UsageContext(self.clock.now())
        if self._mode.structured and any(quota.is_extended_for_quota(n) for n in hard):
            classes = (await self.client.list(kinds.DEVICE_CLASSES)).get("items") or []
            ctx = UsageContext(ctx.now, extended_resources(list(classes)))
        for evaluator in self._evaluators(hard):
            names = evaluator.matching(hard)
            rt = self._served.get(evaluator.group_resource)
            if rt is None or not names:
                continue
            for obj in await self._objects(rt, namespace):
                if evaluator.matches_scopes(quota_obj, obj):
                    charged = quota.mask(evaluator.usage(obj, ctx), names)
                    used = quota.add(used, charged)
        return used

    def _evaluators(self, hard: Usage) -> list[Evaluator]:
        group_resources = [
            "pods",
            "services",
            "persistentvolumeclaims",
            kinds.RESOURCE_CLAIMS.group_resource,
        ]
        for name in hard:
            counted = quota.group_resource_of(name)
            if counted is not None and counted not in group_resources:
                group_resources.append(counted)
        return [quota.evaluator_for(gr, self._mode) for gr in group_resources]

    async def _objects(self, rt: ResourceType, namespace: str) -> list[Obj]:
        listed = await self.client.list(rt, namespace)
        return list(listed.get("items") or [])


def _status_stale(obj: Obj) -> bool:
    status = obj.get("status") or {}
    return (status.get("hard") or {}).keys() != ((obj.get("spec") or {}).get("hard") or {}).keys()
