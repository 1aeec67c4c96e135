"""Serving custom resources: the registry's catalog follows the stored CRDs (through the watch
cache's change stream, like RBAC's index), the finalizer `customresourcecleanup` deletes a CRD's
custom resources before the CRD goes, and objects are read at the requested version
(conversion `None`: the apiVersion is rewritten) and defaulted as read, as
apiextensions-apiserver's codec does. `scale` is the one mechanism of `strategies.scale`, at
the CRD's replicas paths.

Custom resources see the server through the narrow `CustomResourcesContext` (storage, the clock,
the served kinds, the guaranteed update, deletion and the wait for a commit); `Registry`
satisfies it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Coroutine
from typing import Any, Protocol

from draplane.api import conversion, crd, errors, kinds, meta, structural
from draplane.api.auth import UserInfo
from draplane.api.catalog import Catalog
from draplane.api.handler import WatchEvent, WatchStream
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.apiserver.strategies.context import GuaranteedUpdater
from draplane.clock import Clock, format_time
from draplane.storage.interface import Event, Storage

log = logging.getLogger(__name__)

_SERVER = UserInfo("system:apiserver", "", ("system:masters",))
_CLEANUP_PAUSE = 0.05
_CLEANUP_MAX_PAUSE = 1.0


class CustomResourcesContext(Protocol):
    """What serving custom resources uses of the server."""

    @property
    def storage(self) -> Storage: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def kinds(self) -> Catalog: ...

    @property
    def writer(self) -> GuaranteedUpdater: ...

    def wait_committed(self, revision: int) -> Awaitable[None]:
        """Until `revision` is committed (the watch cache has seen it), briefly."""
        ...

    def delete_object(
        self, user: UserInfo, rt: ResourceType, namespace: str, name: str
    ) -> Awaitable[Obj]:
        """DELETE of the object, with admission, as `user`."""
        ...


class CustomResources:
    def __init__(self, server: CustomResourcesContext) -> None:
        self._r = server
        self._cleanups: dict[str, asyncio.Task[None]] = {}

    # --- the catalog follows the CRDs ---------------------------------------------------

    async def load(self) -> None:
        crds, _ = await self._r.storage.list(kinds.CUSTOM_RESOURCE_DEFINITIONS.key)
        for obj in crds:
            self._seen(obj, deleted=False)

    def observe(self, event: Event) -> None:
        if event.resource != kinds.CUSTOM_RESOURCE_DEFINITIONS.key:
            return
        try:
            self._seen(event.object, deleted=event.type == "DELETED")
        except Exception:
            # Never stop the watch cache's fan-out; the CRD is served as its next write says.
            log.exception("serving the CustomResourceDefinition %s", meta.name(event.object))

    def _seen(self, obj: Obj, *, deleted: bool) -> None:
        self._r.kinds.observe_crd(obj, deleted=deleted)
        name = meta.name(obj)
        if deleted:
            # Names it held may now be free for a CRD of the group that was refused them.
            group = str((obj.get("spec") or {}).get("group", ""))
            self._track(f"names:{group}:{name}", self._recheck_names(group))
        terminating = meta.deletion_timestamp(obj) and crd.CLEANUP_FINALIZER in meta.finalizers(obj)
        if not deleted and terminating and name not in self._cleanups:
            self._track(name, self._cleanup(obj))

    def _track(self, key: str, work: Coroutine[Any, Any, None]) -> None:
        if key in self._cleanups:
            work.close()
            return
        task = asyncio.get_running_loop().create_task(work)
        self._cleanups[key] = task
        task.add_done_callback(lambda _t: self._cleanups.pop(key, None))

    async def _recheck_names(self, group: str) -> None:
        """The naming controller's second look: decide again for the group's CRDs whose names
        were not accepted (the write runs the decision)."""
        crds, _ = await self._r.storage.list(kinds.CUSTOM_RESOURCE_DEFINITIONS.key)
        for obj in crds:
            if (obj.get("spec") or {}).get("group") != group or crd.is_established(obj):
                continue
            req = Request("update", kinds.CUSTOM_RESOURCE_DEFINITIONS, "", meta.name(obj))
            try:
                await self._r.writer.guaranteed_update(_SERVER, req, meta.deep_copy)
            except errors.StatusError as err:
                if not errors.is_not_found(err):
                    log.warning("deciding the names of %s again: %s", meta.name(obj), err)
            await self._r.wait_committed(self._r.storage.revision)

    async def stop(self) -> None:
        for task in list(self._cleanups.values()):
            task.cancel()
        for task in list(self._cleanups.values()):
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    async def _cleanup(self, obj: Obj) -> None:
        """Delete every custom resource of the CRD, then remove the cleanup finalizer (the
        CRD finalizer controller)."""
        name = meta.name(obj)
        types = crd.resource_types(obj)[:1]  # every version is stored under one key
        pause = _CLEANUP_PAUSE
        try:
            await self._set_terminating(name)
            while True:
                remaining = 0
                for rt in types:
                    items, _ = await self._r.storage.list(rt.key)
                    remaining += len(items)
                    for item in items:
                        if meta.deletion_timestamp(item):
                            continue
                        try:
                            await self._r.delete_object(
                                _SERVER, rt, meta.namespace(item), meta.name(item)
                            )
                        except errors.StatusError as err:
                            if not errors.is_not_found(err):
                                raise
                if not remaining:
                    break
                # Resources with finalizers of their own: wait for them, as upstream does.
                await asyncio.sleep(pause)
                pause = min(pause * 2, _CLEANUP_MAX_PAUSE)
            await self._remove_finalizer(name)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("cleaning up the custom resources of %s", name)

    async def _set_terminating(self, name: str) -> None:
        now = format_time(self._r.clock.now())

        def mutate(old: Obj) -> Obj:
            new = meta.deep_copy(old)
            status = new.setdefault("status", {})
            conditions = [
                c for c in status.get("conditions") or [] if c.get("type") != "Terminating"
            ]
            conditions.append(
                {
                    "type": "Terminating",
                    "status": "True",
                    "lastTransitionTime": now,
                    "reason": "InstanceDeletionInProgress",
                    "message": "CustomResource deletion is in progress",
                }
            )
            status["conditions"] = conditions
            return new

        req = Request("update", kinds.CUSTOM_RESOURCE_DEFINITIONS, "", name, "status")
        await self._r.writer.guaranteed_update(_SERVER, req, mutate)

    async def _remove_finalizer(self, name: str) -> None:
        def mutate(old: Obj) -> Obj:
            new = meta.deep_copy(old)
            md = new["metadata"]
            md["finalizers"] = [f for f in md.get("finalizers") or [] if f != crd.CLEANUP_FINALIZER]
            return new

        req = Request("update", kinds.CUSTOM_RESOURCE_DEFINITIONS, "", name)
        await self._r.writer.guaranteed_update(_SERVER, req, mutate)

    # --- versions -----------------------------------------------------------------------

    @staticmethod
    def at_version(rt: ResourceType, obj: Obj) -> Obj:
        """`obj` as `rt`'s version serves it: defaulted as read from storage, and (conversion
        None) with the version's apiVersion."""
        custom = rt.custom
        if custom is None and conversion.converts(rt):
            # Built-in kinds served at several versions (resource.k8s.io/v1beta1, v1beta2;
            # events.k8s.io/v1).
            return conversion.convert(obj, rt)  # type: ignore[no-any-return]
        if custom is None or obj.get("kind") != rt.kind:
            return obj
        if custom.has_defaults:
            obj = meta.deep_copy(obj)
            structural.default(custom.schema, obj)
        if obj.get("apiVersion") != rt.api_version:
            obj = {**obj, "apiVersion": rt.api_version}
        return obj

    def converted(self, rt: ResourceType, result: Obj | WatchStream) -> Obj | WatchStream:
        custom = rt.custom
        if custom is None and conversion.converts(rt):
            if not isinstance(result, dict):
                return _ConvertingWatch(result, rt)
            return conversion.convert(result, rt)  # type: ignore[no-any-return]
        if custom is None or (len(custom.versions) < 2 and not custom.has_defaults):
            return result
        if not isinstance(result, dict):
            return _ConvertingWatch(result, rt)
        if "items" in result and result.get("kind") == rt.list_kind:
            return {**result, "items": [self.at_version(rt, i) for i in result["items"]]}
        return self.at_version(rt, result)


class _ConvertingWatch:
    def __init__(self, inner: WatchStream, rt: ResourceType) -> None:
        self._inner, self._rt = inner, rt

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent]:
        async for event in self._inner:
            yield WatchEvent(event.type, CustomResources.at_version(self._rt, event.object))

    async def close(self) -> None:
        await self._inner.close()
