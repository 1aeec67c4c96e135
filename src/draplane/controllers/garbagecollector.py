"""The garbage collector: removes dependents of deleted owners, by `metadata.ownerReferences`.

Event-driven: an object with owner references is checked when it appears or its references
change, and the dependents of an object are checked when it is deleted; a periodic resync is
the safety net. Owners being deleted with the `foregroundDeletion` finalizer get their
dependents deleted first; with the `orphan` finalizer, their dependents lose the reference.
Custom resources are watched as their CRDs become Established (upstream's monitors follow
discovery); the informers of a CRD deleted later stay until the controller stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any

from draplane.api import crd, kinds, meta
from draplane.api.errors import StatusError, is_conflict, is_not_found
from draplane.api.kinds import STORED, ResourceType
from draplane.api.meta import Obj
from draplane.client.informer import DeletedFinalStateUnknown, Informer, unwrap
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey
from draplane.controllers.queuecontroller import QueueController
from draplane.klog import V2

log = logging.getLogger(__name__)

OWNER_UID_INDEX = "gc-owner-uid"
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"
QUEUE_NAME = "garbage_collector_attempt_to_delete"
WORKERS = 5
RESYNC_PERIOD = 30.0


def owner_uid_index(obj: Obj) -> list[str]:
    return [str(ref.get("uid")) for ref in meta.owner_references(obj) if ref.get("uid")]


def _gc_finalizer(obj: Obj) -> bool:
    finalizers = meta.finalizers(obj)
    return FOREGROUND_FINALIZER in finalizers or ORPHAN_FINALIZER in finalizers


def _needs_attention(obj: Obj) -> bool:
    return bool(meta.owner_references(obj)) or (
        bool(meta.deletion_timestamp(obj)) and _gc_finalizer(obj)
    )


class GarbageCollector(QueueController):
    NAME = "generic-garbage-collector"
    QUEUE_NAME = QUEUE_NAME
    WORKER_NAME = "garbage-collector"
    DISPLAY_NAME = "garbage collector"
    WORKERS = WORKERS

    def __init__(
        self,
        ctx: ControllerContext,
        *,
        resync_period: float = RESYNC_PERIOD,
        resources: Iterable[ResourceType] = STORED,
    ) -> None:
        """Watches every kind in `resources`: namespaced ones as dependents, all as owners."""
        super().__init__(ctx)
        self._resync_period = resync_period
        self._types = {rt.kind: rt for rt in resources}
        self._informers: dict[str, Informer] = {}
        self._factory = ctx.informers
        self._custom: dict[tuple[str, str], str] = {}
        """(apiVersion, kind) of a served custom resource version -> its type key."""
        for rt in list(self._types.values()):
            self._monitor(rt.kind, rt)
        if kinds.CUSTOM_RESOURCE_DEFINITIONS.kind in self._types:
            self._informers[kinds.CUSTOM_RESOURCE_DEFINITIONS.kind].add_handler(
                on_add=self._crd_seen, on_update=lambda _, new: self._crd_seen(new)
            )

    def _monitor(self, type_key: str, rt: ResourceType) -> None:
        informer = self._factory.informer(rt, indexers={OWNER_UID_INDEX: owner_uid_index})
        self._types[type_key] = rt
        self._informers[type_key] = informer
        self._watch(type_key, informer)

    def _crd_seen(self, obj: Obj) -> None:
        """Watch an Established CRD's custom resources (its storage version)."""
        rt = crd.resource_type(obj) if crd.is_established(obj) else None
        if rt is None:
            return
        type_key = f"{rt.kind}.{rt.group}"
        for version in rt.custom.versions:
            self._custom[(f"{rt.group}/{version}", rt.kind)] = type_key
        if type_key not in self._types:
            self._monitor(type_key, rt)
            asyncio.get_running_loop().create_task(self._factory.start())

    def _owner_type(self, ref: Obj) -> tuple[str, ResourceType] | None:
        api_version, kind = str(ref.get("apiVersion")), str(ref.get("kind"))
        builtin = kinds.for_kind(api_version, kind)
        if builtin is not None:
            return builtin.kind, builtin
        type_key = self._custom.get((api_version, kind))
        return None if type_key is None else (type_key, self._types[type_key])

    def _watch(self, kind: str, informer: Informer) -> None:
        def on_add(obj: Obj) -> None:
            self._on_change(kind, None, obj)

        def on_update(old: Obj, new: Obj) -> None:
            self._on_change(kind, old, new)

        def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            self._on_delete(kind, obj)

        informer.add_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)

    def informers(self) -> tuple[Informer, ...]:
        return tuple(self._informers.values())

    def background(self) -> tuple[Coroutine[Any, Any, None], ...]:
        return (self._resync_loop(),)

    async def _resync_loop(self) -> None:
        while True:
            await self.clock.sleep(self._resync_period)
            self.resync()

    def resync(self) -> None:
        """Queue every object with owner references or a pending GC finalizer."""
        for kind, informer in self._informers.items():
            for obj in informer.lister.list():
                if _needs_attention(obj):
                    self.queue.add(ObjectKey.of(kind, obj))

    def _on_change(self, kind: str, old: Obj | None, new: Obj) -> None:
        if not _needs_attention(new):
            return
        if old is not None and (
            meta.owner_references(old) == meta.owner_references(new)
            and meta.deletion_timestamp(old) == meta.deletion_timestamp(new)
            and meta.finalizers(old) == meta.finalizers(new)
        ):
            return
        self.queue.add(ObjectKey.of(kind, new))

    def _on_delete(self, kind: str, deleted: Obj | DeletedFinalStateUnknown) -> None:
        obj = unwrap(deleted)
        for dependent_kind, dependent in self._dependents(meta.uid(obj)):
            self.queue.add(ObjectKey.of(dependent_kind, dependent))
        # An owner deleted in the foreground may have been waiting for this dependent.
        for ref in meta.owner_references(obj):
            owner = self._owner_type(ref)
            if owner is not None and owner[0] in self._types:
                namespace = meta.namespace(obj) if owner[1].namespaced else ""
                self.queue.add(ObjectKey(owner[0], namespace, str(ref.get("name"))))

    def _dependents(self, owner_uid: str) -> list[tuple[str, Obj]]:
        return [
            (kind, obj)
            for kind, informer in self._informers.items()
            for obj in informer.lister.by_index(OWNER_UID_INDEX, owner_uid)
        ]

    async def sync(self, key: ObjectKey) -> None:
        rt = self._types.get(key.kind)
        if rt is None:
            return
        obj = self._informers[key.kind].lister.get(key.name, key.namespace)
        if obj is None:
            return
        if meta.deletion_timestamp(obj):
            if ORPHAN_FINALIZER in meta.finalizers(obj):
                await self._orphan_dependents(rt, obj)
            elif FOREGROUND_FINALIZER in meta.finalizers(obj):
                await self._delete_dependents(rt, obj)
            return
        if meta.owner_references(obj):
            await self._attempt_to_delete(rt, obj)

    async def _attempt_to_delete(self, rt: ResourceType, obj: Obj) -> None:
        refs = meta.owner_references(obj)
        absent = [ref for ref in refs if await self._owner_absent(ref, meta.namespace(obj))]
        if not absent:
            return
        if len(absent) == len(refs):
            log.log(V2, "Deleting %s %s: all its owners are gone", rt.kind, meta.key(obj))
            await self._delete(rt, obj, propagation_policy="Background")
            return
        absent_uids = {ref.get("uid") for ref in absent}
        updated = meta.deep_copy(obj)
        updated["metadata"]["ownerReferences"] = [
            ref for ref in refs if ref.get("uid") not in absent_uids
        ]
        await self._update(rt, updated)

    async def _owner_absent(self, ref: Obj, namespace: str) -> bool:
        owner = self._owner_type(ref)
        if owner is None:
            return False  # a kind we cannot look up: never delete on a guess
        type_key, owner_rt = owner
        owner_namespace = namespace if owner_rt.namespaced else ""
        informer = self._informers.get(type_key)
        if informer is not None:
            cached = informer.lister.get(str(ref.get("name")), owner_namespace)
            if cached is not None and meta.uid(cached) == ref.get("uid"):
                return False
        # The owner's informer may lag behind the dependent's: only the API server is sure.
        try:
            live = await self.client.get(owner_rt, str(ref.get("name")), owner_namespace)
        except StatusError as err:
            if is_not_found(err):
                return True
            raise
        return meta.uid(live) != ref.get("uid")

    async def _delete_dependents(self, rt: ResourceType, owner: Obj) -> None:
        owner_uid = meta.uid(owner)
        blocking = 0
        for kind, dependent in self._dependents(owner_uid):
            ref = next(r for r in meta.owner_references(dependent) if r.get("uid") == owner_uid)
            blocks = bool(ref.get("blockOwnerDeletion"))
            if meta.deletion_timestamp(dependent):
                blocking += blocks
                continue
            # Keep the chain in the foreground only where there is a chain.
            has_dependents = bool(self._dependents(meta.uid(dependent)))
            policy = "Foreground" if blocks and has_dependents else "Background"
            if await self._delete(self._types[kind], dependent, propagation_policy=policy):
                blocking += blocks
        if blocking == 0:
            await self._remove_finalizer(rt, owner, FOREGROUND_FINALIZER)

    async def _orphan_dependents(self, rt: ResourceType, owner: Obj) -> None:
        owner_uid = meta.uid(owner)
        for kind, dependent in self._dependents(owner_uid):
            updated = meta.deep_copy(dependent)
            refs = [r for r in meta.owner_references(dependent) if r.get("uid") != owner_uid]
            if refs:
                updated["metadata"]["ownerReferences"] = refs
            else:
                updated["metadata"].pop("ownerReferences", None)
            await self._update(self._types[kind], updated)
        await self._remove_finalizer(rt, owner, ORPHAN_FINALIZER)

    async def _remove_finalizer(self, rt: ResourceType, obj: Obj, finalizer: str) -> None:
        updated = meta.deep_copy(obj)
        updated["metadata"]["finalizers"] = [f for f in meta.finalizers(obj) if f != finalizer]
        log.log(V2, "Removing finalizer %s from %s %s", finalizer, rt.kind, meta.key(obj))
        await self._update(rt, updated)

    async def _update(self, rt: ResourceType, obj: Obj) -> None:
        try:
            await self.client.update(rt, obj)
        except StatusError as err:
            if not is_not_found(err):
                raise

    async def _delete(self, rt: ResourceType, obj: Obj, *, propagation_policy: str) -> bool:
        """True when the object still exists afterwards (being deleted)."""
        try:
            result = await self.client.delete(
                rt,
                meta.name(obj),
                meta.namespace(obj),
                propagation_policy=propagation_policy,
                preconditions={"uid": meta.uid(obj)},
            )
        except StatusError as err:
            # Gone already, or replaced by a new object of the same name (UID precondition).
            if is_not_found(err) or is_conflict(err):
                return False
            raise
        return bool(meta.deletion_timestamp(result))
