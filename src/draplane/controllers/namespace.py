"""The namespace controller: empties a namespace being deleted, then finalizes it.

A namespace with `deletionTimestamp` and the `kubernetes` entry in `spec.finalizers`: delete
every namespaced object in it; while some remain (finalizers, graceful pods), look again later;
once it is empty, drop `kubernetes` from `spec.finalizers` through the `finalize` subresource,
after which the API server removes the namespace.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from draplane.api import crd, meta
from draplane.api.errors import StatusError, is_not_found
from draplane.api.kinds import CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, STORED, ResourceType
from draplane.api.meta import Obj
from draplane.client.informer import Informer
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.klog import V2, V4

log = logging.getLogger(__name__)

KUBERNETES_FINALIZER = "kubernetes"
QUEUE_NAME = "namespace"
WORKERS = 2
# How soon to look again at a namespace whose content is still going away.
CONTENT_RECHECK_DELAY = 1.0
NAMESPACED: tuple[ResourceType, ...] = tuple(rt for rt in STORED if rt.namespaced)


class NamespaceController(QueueController):
    NAME = "namespace-controller"
    QUEUE_NAME = QUEUE_NAME
    WORKERS = WORKERS

    def __init__(
        self, ctx: ControllerContext, *, resources: Iterable[ResourceType] = NAMESPACED
    ) -> None:
        super().__init__(ctx)
        self._resources = tuple(rt for rt in resources if rt.namespaced)
        self._namespaces: Informer = ctx.informers.informer(NAMESPACES)
        self._namespaces.add_handler(
            on_add=self._enqueue, on_update=lambda _, namespace: self._enqueue(namespace)
        )

    def informers(self) -> tuple[Informer, ...]:
        return (self._namespaces,)

    async def process(self, key: ObjectKey) -> None:
        if not await self.sync(key):
            self.queue.add_after(key, CONTENT_RECHECK_DELAY)

    def _enqueue(self, namespace: Obj) -> None:
        if meta.deletion_timestamp(namespace):
            self.queue.add(ObjectKey(NAMESPACES.kind, "", meta.name(namespace)))

    async def sync(self, key: ObjectKey) -> bool:
        """Returns False while content is still going away (the caller looks again later)."""
        namespace = self._namespaces.lister.get(key.name)
        if namespace is None or not meta.deletion_timestamp(namespace):
            return True
        finalizers = (namespace.get("spec") or {}).get("finalizers") or []
        if KUBERNETES_FINALIZER not in finalizers:
            return True
        remaining = 0
        for rt in (*self._resources, *await self._custom_resources()):
            remaining += await self._delete_content(rt, key.name)
        if remaining:
            log.log(V4, "namespace %s: waiting for %d objects to go", key.name, remaining)
            return False
        await self._finalize(namespace)
        return True

    async def _custom_resources(self) -> list[ResourceType]:
        """The namespaced custom resources the API server serves (upstream asks discovery)."""
        listed = await self.client.list(CUSTOM_RESOURCE_DEFINITIONS)
        out = []
        for obj in listed.get("items") or []:
            rt = crd.resource_type(obj) if crd.is_established(obj) else None
            if rt is not None and rt.namespaced:
                out.append(rt)
        return out

    async def _delete_content(self, rt: ResourceType, namespace: str) -> int:
        """Delete every `rt` object in the namespace; returns how many are still there."""
        listed = await self.client.list(rt, namespace)
        items: list[Obj] = listed.get("items") or []
        remaining = 0
        for item in items:
            if meta.deletion_timestamp(item):
                remaining += 1
                continue
            try:
                # Background, as upstream's namespaced-resources deleter: kinds whose default
                # is Orphan (Jobs, ReplicationControllers) still take their dependents along.
                result = await self.client.delete(
                    rt, meta.name(item), namespace, propagation_policy="Background"
                )
            except StatusError as err:
                if is_not_found(err):
                    continue
                raise
            remaining += bool(meta.deletion_timestamp(result))
        return remaining

    async def _finalize(self, namespace: Obj) -> None:
        updated = meta.deep_copy(namespace)
        spec = updated.setdefault("spec", {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != KUBERNETES_FINALIZER]
        try:
            await self.client.update(NAMESPACES, updated, subresource="finalize")
        except StatusError as err:
            if not is_not_found(err):
                raise
        log.log(V2, "namespace %s: content deleted, finalized", meta.name(namespace))
