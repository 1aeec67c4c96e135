"""`PodObserver`: one pod watch that timestamps, on receipt, when each pod appears, is bound
(`spec.nodeName` set) and runs (`status.phase` Running).

All times are `time.monotonic()` seconds; the wall-clock receipt of the binding is kept too so
that latency can also be taken from `metadata.creationTimestamp` (second precision).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from draplane.api import errors, kinds
from draplane.api.meta import Obj
from draplane.bench.workloads import PHASE_LABEL
from draplane.client.interface import Client

log = logging.getLogger(__name__)

State = Literal["bound", "running"]


class BenchTimeout(RuntimeError):
    """A wait of the benchmark ran out of time or made no progress."""


@dataclass
class PodTimes:
    phase: str
    creation_timestamp: str
    added: float
    created: float | None = None
    """When the client's create call returned (set by the creator, not the watch)."""
    bound: float | None = None
    bound_wall: float | None = None
    running: float | None = None


class PodObserver:
    def __init__(self, client: Client, *, namespace: str) -> None:
        self._client = client
        self._namespace = namespace
        self.pods: dict[str, PodTimes] = {}
        self.created: dict[str, float] = {}
        """Pod name -> `time.monotonic()` when its create call returned."""
        self.counts: dict[State, Counter[str]] = {"bound": Counter(), "running": Counter()}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._resource_version = ""
        self._synced = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="bench-pod-observer")
        synced = asyncio.ensure_future(self._synced.wait())
        await asyncio.wait([synced, self._task], timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if not self._synced.is_set():
            synced.cancel()
            await self.stop()
            raise BenchTimeout("the benchmark's pod watch did not start within 30 s")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            if not self._resource_version:
                listed = await self._client.list(kinds.PODS, self._namespace)
                for item in listed.get("items") or []:
                    self._observe(item)
                self._resource_version = str(listed["metadata"].get("resourceVersion", ""))
            self._synced.set()
            try:
                await self._follow()
            except errors.StatusError as err:
                log.warning("bench pod watch failed, relisting: %s", err)
                self._resource_version = ""
                await asyncio.sleep(0.1)

    async def _follow(self) -> None:
        stream = await self._client.watch(
            kinds.PODS, self._namespace, resource_version=self._resource_version
        )
        try:
            async for event in stream:
                if event.type == "ERROR":
                    # Most likely 410 Gone: the revision fell out of the window; relist.
                    self._resource_version = ""
                    return
                rv = (event.object.get("metadata") or {}).get("resourceVersion")
                if rv:
                    self._resource_version = str(rv)
                if event.type in ("ADDED", "MODIFIED"):
                    self._observe(event.object)
        finally:
            await stream.close()

    def mark_created(self, name: str) -> None:
        now = time.monotonic()
        self.created[name] = now
        times = self.pods.get(name)
        if times is not None and times.created is None:
            times.created = now

    def _observe(self, pod: Obj) -> None:
        md = pod.get("metadata") or {}
        name = str(md.get("name", ""))
        times = self.pods.get(name)
        now = time.monotonic()
        if times is None:
            phase = (md.get("labels") or {}).get(PHASE_LABEL, "")
            times = PodTimes(phase, str(md.get("creationTimestamp", "")), added=now)
            times.created = self.created.get(name)
            self.pods[name] = times
        changed = False
        if times.bound is None and (pod.get("spec") or {}).get("nodeName"):
            times.bound, times.bound_wall = now, time.time()
            self.counts["bound"][times.phase] += 1
            changed = True
        if times.running is None and (pod.get("status") or {}).get("phase") == "Running":
            times.running = now
            self.counts["running"][times.phase] += 1
            changed = True
        if changed:
            self._changed.set()

    async def changed(self, *, timeout: float) -> None:
        """Until some pod was bound or started running, or `timeout` seconds."""
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout=timeout)

    async def wait_all(
        self,
        *,
        phase: str,
        state: State,
        expected: int,
        timeout: float,
        stall_timeout: float,
        on_progress: Callable[[int], None] | None = None,
    ) -> None:
        """Until `expected` pods of `phase` reached `state`; BenchTimeout after `timeout` or
        after `stall_timeout` seconds in which no pod of the phase made progress."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last_progress, last_count = loop.time(), -1
        while True:
            count = self.counts[state][phase]
            if on_progress is not None:
                on_progress(count)
            if count >= expected:
                return
            now = loop.time()
            if count != last_count:
                last_progress, last_count = now, count
            if now >= deadline or now - last_progress >= stall_timeout:
                why = (
                    f"within {timeout:.0f} s"
                    if now >= deadline
                    else (f"(no progress for {stall_timeout:.0f} s)")
                )
                raise BenchTimeout(f"only {count} of {expected} {phase} pods {state} {why}")
            if self._task is not None and self._task.done():
                raise BenchTimeout("the benchmark's pod watch stopped") from (
                    self._task.exception() if not self._task.cancelled() else None
                )
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=0.25)
