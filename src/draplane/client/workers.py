"""`run_workers`: the controller worker loop of client-go (processNextWorkItem), once.

Each worker takes a key, syncs it, then `forget`s it on success or re-adds it rate-limited on
failure, and always calls `done`. The loop runs until cancelled; it then shuts the queue down.
Every finished sync is logged at V4 (`-v 4`), as controllers log "Finished syncing".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from draplane.client.workqueue import RateLimitingQueue, ShutDown
from draplane.klog import V4

T = TypeVar("T")

ErrorLogger = Callable[[T, Exception], None]


async def run_workers(
    queue: RateLimitingQueue[T],
    sync: Callable[[T], Awaitable[object]],
    *,
    workers: int,
    name: str,
    log_error: ErrorLogger[T] | None = None,
) -> None:
    """Run `workers` workers over `queue` calling `sync(key)` until cancelled."""
    logger = logging.getLogger(f"draplane.{name}")

    def default_log(key: T, err: Exception) -> None:
        logger.info("%s: processing %s failed, will retry: %s", name, key, err)

    report = log_error or default_log

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            start = time.perf_counter()
            try:
                await sync(key)
            except Exception as err:
                report(key, err)
                queue.add_rate_limited(key)
            else:
                queue.forget(key)
                if logger.isEnabledFor(V4):
                    elapsed = (time.perf_counter() - start) * 1000
                    logger.log(V4, "%s: finished syncing %s (%.1f ms)", name, key, elapsed)
            finally:
                queue.done(key)

    tasks = [asyncio.create_task(worker(), name=f"{name}-worker-{i}") for i in range(workers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        queue.shut_down()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
