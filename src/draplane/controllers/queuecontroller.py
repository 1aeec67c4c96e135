"""`QueueController`: the shell every workload controller shares.

A controller of kube-controller-manager's shape: informers whose handlers add `ObjectKey`s to one
`RateLimitingQueue`, an `EventRecorder` for its component, and `run()`, which waits for the
informers to sync and then runs the one worker loop (`draplane.client.workers.run_workers`) over
`process` (by default `sync`). Subclasses name their queue and event component, build their
informers after `super().__init__`, and say which informers they wait for in `informers()`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import ClassVar

from prometheus_client import CollectorRegistry

from draplane.client.events import EventRecorder
from draplane.client.informer import Informer
from draplane.client.interface import Client
from draplane.client.ratelimit import RateLimiter
from draplane.client.workers import run_workers
from draplane.client.workqueue import RateLimitingQueue
from draplane.clock import REAL_CLOCK, Clock
from draplane.controllers.objectkey import ObjectKey

log = logging.getLogger(__name__)


class QueueController:
    QUEUE_NAME: ClassVar[str]
    """The work queue's name (its metrics' `name` label) and the workers' name."""
    EVENT_COMPONENT: ClassVar[str]
    """The `source.component` of the events the controller records by default."""
    DISPLAY_NAME: ClassVar[str] = ""
    """How the start-up log line names the controller (default: QUEUE_NAME)."""
    WORKERS: ClassVar[int] = 5

    def __init__(
        self,
        client: Client,
        *,
        recorder: EventRecorder | None = None,
        clock: Clock = REAL_CLOCK,
        metrics: CollectorRegistry | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.recorder = recorder or EventRecorder(client, self.EVENT_COMPONENT, clock=clock)
        self.queue: RateLimitingQueue[ObjectKey] = RateLimitingQueue(
            name=self.QUEUE_NAME, rate_limiter=rate_limiter, clock=clock, metrics=metrics
        )

    def informers(self) -> tuple[Informer, ...]:
        """The informers `run()` waits for before the first sync."""
        raise NotImplementedError

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.informers())

    async def sync(self, key: ObjectKey) -> None:
        raise NotImplementedError

    async def process(self, key: ObjectKey) -> None:
        """What a worker does with a key from the queue: `sync` unless a controller wraps it."""
        await self.sync(key)

    async def run(self, workers: int | None = None) -> None:
        count = self.WORKERS if workers is None else workers
        await asyncio.gather(*(i.wait_synced() for i in self.informers()))
        name = self.DISPLAY_NAME or self.QUEUE_NAME
        log.info("Starting %s controller with %d workers", name, count)
        try:
            await run_workers(self.queue, self.process, workers=count, name=self.QUEUE_NAME)
        finally:
            await self.recorder.flush()
