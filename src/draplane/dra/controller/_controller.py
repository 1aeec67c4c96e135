"""`DriverController`: the Kubernetes half of a classic-DRA driver, as
k8s.io/dynamic-resource-allocation/controller v0.28 sets it up and runs it.

Informers on ResourceClaims (overlaid by a mutation cache of the controller's own writes),
PodSchedulingContexts and ResourceClasses feed one rate-limited work queue of `WorkKey`s.
Handlers only enqueue; workers run the level-triggered syncs in `_claims` and `_scheduling`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from typing import NamedTuple

from prometheus_client import CollectorRegistry

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.events import EventRecorder
from draplane.client.informer import DeletedFinalStateUnknown, Informer, InformerFactory
from draplane.client.interface import Client
from draplane.client.mutationcache import MutationCache
from draplane.client.ratelimit import default_controller_rate_limiter
from draplane.client.workqueue import RateLimitingQueue, ShutDown
from draplane.clock import REAL_CLOCK, Clock
from draplane.dra.controller._claims import sync_claim
from draplane.dra.controller._context import (
    Delays,
    SyncContext,
    SyncError,
    SyncResult,
)
from draplane.dra.controller._interfaces import Driver
from draplane.dra.controller._scheduling import sync_pod_scheduling_context
from draplane.klog import V4

log = logging.getLogger(__name__)

DRIVER_WORKERS = 5
"""Workers a `DriverController` runs by default: as many as scheduler_perf gives its test
driver's controller. Each allocation is two writes one after the other (finalizer, status), so
with the API server in another process the allocation rate is about workers / (2 x a write's
latency)."""


class KeyKind(enum.Enum):
    CLAIM = "claim"
    SCHEDULING_CONTEXT = "schedulingCtx"

    # Members are singletons compared by identity: hash them so too (Enum.__hash__ hashes the
    # name in Python, on every work-queue lookup of a key).
    __hash__ = object.__hash__


class WorkKey(NamedTuple):
    kind: KeyKind
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.namespace}/{self.name}"


class DriverController:
    """Allocates and deallocates the claims of one driver; see the module docstring."""

    def __init__(
        self,
        client: Client,
        driver_name: str,
        driver: Driver,
        *,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
        workers: int = DRIVER_WORKERS,
        set_reserved_for: bool = True,
        delays: Delays | None = None,
    ) -> None:
        self.driver_name = driver_name
        self._workers = workers
        self._delays = delays or Delays()
        self._factory = InformerFactory(client, clock=clock)
        claims = self._factory.informer(kinds.RESOURCE_CLAIMS)
        contexts = self._factory.informer(kinds.POD_SCHEDULING_CONTEXTS)
        classes = self._factory.informer(kinds.RESOURCE_CLASSES)
        self._claims = MutationCache(
            claims.lister, ttl=self._delays.mutation_cache_ttl, max_entries=1000, clock=clock
        )
        self._contexts = contexts.lister
        self._queue: RateLimitingQueue[WorkKey] = RateLimitingQueue(
            name=f"{driver_name}-queue",
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=metrics,
        )
        self._recorder = EventRecorder(client, f"resource driver {driver_name}", clock=clock)
        self._ctx = SyncContext(
            client=client,
            driver_name=driver_name,
            driver=driver,
            claims=self._claims,
            classes=classes.lister,
            set_reserved_for=set_reserved_for,
        )
        self._retry_on_update: set[WorkKey] = set()
        """Keys whose status write lost to another writer: their next update is synced."""
        self._watch(claims, KeyKind.CLAIM)
        self._watch(contexts, KeyKind.SCHEDULING_CONTEXT)

    def _watch(self, informer: Informer, kind: KeyKind) -> None:
        """Adds and updates enqueue the key; a delete only clears its rate-limit history."""

        def on_add(obj: Obj) -> None:
            self._queue.add(_key(kind, obj))

        def on_update(old: Obj, new: Obj) -> None:
            key = _key(kind, new)
            if key in self._retry_on_update:
                self._retry_on_update.discard(key)
            elif kind is KeyKind.SCHEDULING_CONTEXT and _only_status_added(old, new):
                return
            self._queue.add(key)

        def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            key = _key(kind, obj)
            self._retry_on_update.discard(key)
            self._queue.forget(key)

        informer.add_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)

    def has_synced(self) -> bool:
        return self._factory.has_synced()

    async def run(self) -> None:
        """Run until cancelled: start the informers, wait for them, then run the workers."""
        await self._factory.start()
        try:
            await self._factory.wait_synced()
            log.info(
                "driver %s: caches synced, starting %d workers", self.driver_name, self._workers
            )
            async with asyncio.TaskGroup() as group:
                for _ in range(self._workers):
                    group.create_task(self._worker())
        finally:
            self._queue.shut_down()
            await self._recorder.flush()
            await self._factory.stop()

    async def _worker(self) -> None:
        while True:
            try:
                key = await self._queue.get()
            except ShutDown:
                return
            try:
                await self._process(key)
            finally:
                self._queue.done(key)

    async def _process(self, key: WorkKey) -> None:
        try:
            result = await self._sync(key)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.warning("driver %s: processing %s failed: %s", self.driver_name, key, err)
            obj = self._lookup(key)
            if obj is not None:
                self._recorder.event(obj, "Warning", "Failed", str(err))
            for claim, message in err.concerns if isinstance(err, SyncError) else ():
                self._recorder.event(claim, "Warning", "Failed", message)
            self._queue.add_rate_limited(key)
            return
        log.log(V4, "driver %s: synced %s (%s)", self.driver_name, key, result.value)
        if result is SyncResult.DONE:
            self._queue.forget(key)
        elif result is SyncResult.REQUEUE:
            self._queue.add_rate_limited(key)
        else:
            if result is SyncResult.RETRY_ON_UPDATE:
                self._retry_on_update.add(key)
            self._queue.add_after(key, self._delays.recheck)

    async def _sync(self, key: WorkKey) -> SyncResult:
        obj = self._lookup(key)
        if obj is None:
            return SyncResult.DONE
        if key.kind is KeyKind.CLAIM:
            return await sync_claim(self._ctx, obj)
        return await sync_pod_scheduling_context(self._ctx, obj)

    def _lookup(self, key: WorkKey) -> Obj | None:
        if key.kind is KeyKind.CLAIM:
            return self._claims.get(key.name, key.namespace)
        return self._contexts.get(key.name, key.namespace)


def _only_status_added(old: Obj, new: Obj) -> bool:
    """A PodSchedulingContext update that only answered (drivers writing their status entries, none
    removed): no input of a sync changed, so it is not repeated for it. Deliberately unlike the
    helper (docs/fidelity.md), which resyncs on every update; the 30 s recheck still picks up
    allocation changes."""
    if old.get("spec") != new.get("spec") or meta.deletion_timestamp(old) != (
        meta.deletion_timestamp(new)
    ):
        return False
    old_names = {e.get("name") for e in (old.get("status") or {}).get("resourceClaims") or ()}
    new_names = {e.get("name") for e in (new.get("status") or {}).get("resourceClaims") or ()}
    return old_names <= new_names


def _key(kind: KeyKind, obj: Obj | DeletedFinalStateUnknown) -> WorkKey:
    if isinstance(obj, DeletedFinalStateUnknown):
        namespace, name = meta.split_key(obj.key)
        return WorkKey(kind, namespace, name)
    return WorkKey(kind, meta.namespace(obj), meta.name(obj))
