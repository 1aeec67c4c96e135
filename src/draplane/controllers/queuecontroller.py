"""`QueueController`: the shell every controller shares.

A controller of kube-controller-manager's shape, built from a `ControllerContext`: its client
(the context's for its `NAME`), informers whose handlers add `ObjectKey`s to one
`RateLimitingQueue`, an `EventRecorder` for its component, and `run()`, which waits for the
informers to sync and then runs the one worker loop (`draplane.client.workers.run_workers`)
over `process` (by default `sync`), beside any `background()` loops. Subclasses name
themselves, their queue and event component, build their informers after `super().__init__`,
and say which informers they wait for in `informers()`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, ClassVar

from draplane.client.events import EventRecorder
from draplane.client.informer import Informer
from draplane.client.workers import ErrorLogger, run_workers
from draplane.client.workqueue import RateLimitingQueue
from draplane.controllers.context import ControllerContext
from draplane.controllers.objectkey import ObjectKey

log = logging.getLogger(__name__)


class QueueController:
    NAME: ClassVar[str]
    """The controller's name: the client it writes through (its service account)."""
    QUEUE_NAME: ClassVar[str]
    """The work queue's name (its metrics' `name` label)."""
    WORKER_NAME: ClassVar[str] = ""
    """The workers' name (their tasks and logger; default: QUEUE_NAME)."""
    EVENT_COMPONENT: ClassVar[str] = ""
    """The `source.component` of the events the controller records (default: NAME)."""
    DISPLAY_NAME: ClassVar[str] = ""
    """How the start-up log line names the controller (default: `<QUEUE_NAME> controller`)."""
    WORKERS: ClassVar[int] = 5

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client_for(self.NAME)
        self.clock = ctx.clock
        self.recorder = EventRecorder(
            self.client, self.EVENT_COMPONENT or self.NAME, clock=ctx.clock
        )
        self.queue: RateLimitingQueue[ObjectKey] = RateLimitingQueue(
            name=self.QUEUE_NAME,
            rate_limiter=ctx.rate_limiter,
            clock=ctx.clock,
            metrics=ctx.metrics,
        )
        self._workers = ctx.workers.get(self.NAME, self.WORKERS)

    def informers(self) -> tuple[Informer, ...]:
        """The informers `run()` waits for before the first sync."""
        raise NotImplementedError

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.informers())

    async def sync(self, key: ObjectKey) -> object:
        """Bring what `key` names to its desired state (what it returns is the controller's)."""
        raise NotImplementedError

    async def process(self, key: ObjectKey) -> None:
        """What a worker does with a key from the queue: `sync` unless a controller wraps it."""
        await self.sync(key)

    def log_error(self) -> ErrorLogger[ObjectKey] | None:
        """How a failed sync is logged (None: the worker loop's default)."""
        return None

    def background(self) -> tuple[Coroutine[Any, Any, None], ...]:
        """Loops that run beside the workers once the informers have synced."""
        return ()

    async def run(self, workers: int | None = None) -> None:
        count = self._workers if workers is None else workers
        await asyncio.gather(*(i.wait_synced() for i in self.informers()))
        name = self.DISPLAY_NAME or f"{self.QUEUE_NAME} controller"
        log.info("Starting %s with %d workers", name, count)
        loops = [asyncio.create_task(loop) for loop in self.background()]
        try:
            await run_workers(
                self.queue,
                self.process,
                workers=count,
                name=self.WORKER_NAME or self.QUEUE_NAME,
                log_error=self.log_error(),
            )
        finally:
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await self.recorder.flush()
