"""Informers (client-go's reflector + shared informer) and the shared `InformerFactory`.

An informer lists, then watches from the list's resourceVersion, keeps an indexed store and
calls synchronous handlers after the store changed. A 410 re-lists and delivers the differences
(deletes as `DeletedFinalStateUnknown` tombstones; `unwrap` gives a handler the final object of
either kind of delete); other failures retry with backoff. No copies and no periodic resync:
delivered objects are the watch's, read-only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from draplane.api.errors import StatusError
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, key as object_key, resource_version
from draplane.client.dynamic import resource_type
from draplane.client.interface import Client
from draplane.client.lister import IndexedStore, Indexers, Lister
from draplane.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

_BACKOFF_INITIAL = 0.8
_BACKOFF_MAX = 30.0


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """A delete the informer inferred from a re-list: `obj` is the last state it had seen."""

    key: str
    obj: Obj


def unwrap(obj: Obj | DeletedFinalStateUnknown) -> Obj:
    """The deleted object a delete handler got: the object itself, or a tombstone's last state."""
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


AddFunc = Callable[[Obj], None]
UpdateFunc = Callable[[Obj, Obj], None]
DeleteFunc = Callable[[Obj | DeletedFinalStateUnknown], None]


@dataclass(frozen=True, slots=True)
class _Handler:
    on_add: AddFunc | None
    on_update: UpdateFunc | None
    on_delete: DeleteFunc | None


class _Relist(Exception):
    """The watch's revision is too old (410): list again."""


class Informer:
    def __init__(
        self,
        client: Client,
        rt: ResourceType,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
        indexers: Indexers | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.rt = rt
        self._client = client
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._clock = clock
        self._store = IndexedStore(indexers)
        self._lister = Lister(self._store)
        self._handlers: list[_Handler] = []
        self._synced = asyncio.Event()
        self._last_rv = ""

    def add_indexers(self, indexers: Indexers) -> None:
        """Add indexes (normally before `run`; added later they are built from the store)."""
        self._store.add_indexers(indexers)

    def add_handler(
        self,
        *,
        on_add: AddFunc | None = None,
        on_update: UpdateFunc | None = None,
        on_delete: DeleteFunc | None = None,
    ) -> None:
        """Register callbacks; after sync the new handler first sees adds for the store."""
        handler = _Handler(on_add, on_update, on_delete)
        self._handlers.append(handler)
        if self._synced.is_set() and on_add is not None:
            for obj in list(self._store.items.values()):
                self._call(on_add, obj)

    @property
    def lister(self) -> Lister:
        return self._lister

    @property
    def last_sync_resource_version(self) -> str:
        return self._last_rv

    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    async def run(self) -> None:
        """List and watch until cancelled."""
        backoff = _BACKOFF_INITIAL
        while True:
            try:
                await self._list()
                backoff = _BACKOFF_INITIAL
                await self._watch_until_relist()
            except Exception as err:
                if isinstance(err, _Relist) or (isinstance(err, StatusError) and err.code == 410):
                    log.debug("informer %s: resourceVersion too old, re-listing", self.rt)
                    continue
                # Connection and API errors: retry, re-listing since events may have been missed.
                log.warning("informer %s: list/watch failed: %s", self.rt, err)
                await self._clock.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _list(self) -> None:
        result = await self._client.list(
            self.rt,
            self._namespace,
            label_selector=self._label_selector,
            field_selector=self._field_selector,
        )
        self._replace(result.get("items") or [])
        self._last_rv = resource_version(result)
        self._synced.set()

    def _replace(self, items: list[Obj]) -> None:
        """Make the store equal to `items`, delivering what changed."""
        store = self._store
        seen: set[str] = set()
        for obj in items:
            k = object_key(obj)
            seen.add(k)
            old = store.put(k, obj)
            if old is None:
                self._deliver_add(obj)
            elif resource_version(old) != resource_version(obj):
                self._deliver_update(old, obj)
        for k in [k for k in store.items if k not in seen]:
            old = store.remove(k)
            if old is not None:
                self._deliver_delete(DeletedFinalStateUnknown(k, old))

    async def _watch_until_relist(self) -> None:
        """Watch from the last revision; re-watch when the stream ends, raise on failure."""
        while True:
            stream = await self._client.watch(
                self.rt,
                self._namespace,
                resource_version=self._last_rv,
                label_selector=self._label_selector,
                field_selector=self._field_selector,
                allow_bookmarks=True,
            )
            try:
                async for event in stream:
                    self._handle_event(event.type, event.object)
            finally:
                await stream.close()

    def _handle_event(self, type_: str, obj: Obj) -> None:
        if type_ == "BOOKMARK":
            self._last_rv = resource_version(obj) or self._last_rv
            return
        if type_ == "ERROR":
            code = int(obj.get("code") or 500)
            if code == 410:
                raise _Relist
            raise StatusError.from_status(obj, code)
        k = object_key(obj)
        if type_ == "DELETED":
            self._store.remove(k)
            self._last_rv = resource_version(obj) or self._last_rv
            self._deliver_delete(obj)
            return
        old = self._store.put(k, obj)
        self._last_rv = resource_version(obj) or self._last_rv
        if old is None:
            self._deliver_add(obj)
        else:
            self._deliver_update(old, obj)

    def _deliver_add(self, obj: Obj) -> None:
        for handler in self._handlers:
            if handler.on_add is not None:
                self._call(handler.on_add, obj)

    def _deliver_update(self, old: Obj, new: Obj) -> None:
        for handler in self._handlers:
            if handler.on_update is not None:
                try:
                    handler.on_update(old, new)
                except Exception:
                    log.exception("informer %s: update handler failed", self.rt)

    def _deliver_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        for handler in self._handlers:
            if handler.on_delete is not None:
                try:
                    handler.on_delete(obj)
                except Exception:
                    log.exception("informer %s: delete handler failed", self.rt)

    def _call(self, func: AddFunc, obj: Obj) -> None:
        try:
            func(obj)
        except Exception:
            log.exception("informer %s: add handler failed", self.rt)


class InformerFactory:
    """Shared informers: one per ResourceType, started together."""

    def __init__(self, client: Client, *, clock: Clock = REAL_CLOCK) -> None:
        self._client = client
        self._clock = clock
        self._informers: dict[ResourceType, Informer] = {}
        self._tasks: dict[ResourceType, asyncio.Task[None]] = {}

    def informer(self, rt: ResourceType, *, indexers: Indexers | None = None) -> Informer:
        found = self._informers.get(rt)
        if found is None:
            found = Informer(self._client, rt, indexers=indexers, clock=self._clock)
            self._informers[rt] = found
        elif indexers:
            found.add_indexers(indexers)
        return found

    async def for_resource(
        self, group: str, version: str, resource: str, *, indexers: Indexers | None = None
    ) -> Informer:
        """The informer of a resource named by group, version and resource, custom resources
        included (dynamicinformer's ForResource); `start` runs it."""
        rt = await resource_type(self._client, group, version, resource)
        return self.informer(rt, indexers=indexers)

    async def start(self) -> None:
        """Start every informer not yet running (informers created later need another call)."""
        for rt, informer in self._informers.items():
            if rt not in self._tasks:
                self._tasks[rt] = asyncio.create_task(informer.run(), name=f"informer-{rt}")

    async def wait_synced(self) -> None:
        await asyncio.gather(*(i.wait_synced() for i in self._informers.values()))

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def stop(self) -> None:
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
