"""How late the event loop runs what is due: `draplane_event_loop_lag_seconds` on every
component's /metrics.

A Python component serves every request, watch event and informer update on one asyncio loop;
while a callback runs (a scheduling cycle, a collection, a large response), nothing else does.
`LoopLag` schedules a probe every `INTERVAL` seconds with `call_later` and observes how long
after its due time it ran: the wait any callback that became ready then would have had. Go
components have no such series (their goroutines do not share one thread); the nearest is the
Go runtime's goroutine scheduling latency (runtime/metrics `/sched/latencies:seconds`).
"""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Histogram

METRIC = "draplane_event_loop_lag_seconds"
INTERVAL = 0.05
"""Seconds between two probes (20 per second)."""
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class LoopLag:
    """The lag histogram of one loop at a time; `start` on the running loop, `stop` after.
    `histogram` is registered on every component registry of the process."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self.histogram = Histogram(
            METRIC,
            f"How long after its due time the event loop ran a callback (probed every "
            f"{interval} s).",
            buckets=BUCKETS,
            registry=None,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None

    def observe(self, seconds: float) -> None:
        """One probe's lag (a probe run early counts as none)."""
        self.histogram.observe(max(seconds, 0.0))

    def start(self) -> None:
        """Probe the running loop until `stop` (a second start on the same loop is a no-op)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._handle is not None:
            return
        self.stop()
        self._loop = loop
        self._schedule()

    @property
    def running(self) -> bool:
        return self._handle is not None

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._loop = None, None

    def _schedule(self) -> None:
        assert self._loop is not None
        due = self._loop.time() + self.interval
        self._handle = self._loop.call_at(due, self._probe, due)

    def _probe(self, due: float) -> None:
        if self._loop is None:
            return
        self.observe(self._loop.time() - due)
        self._schedule()


PROBE = LoopLag()
"""This process's probe (one event loop per component process)."""


def register(registry: CollectorRegistry) -> None:
    """Serve this process's loop lag on `registry` (a component's /metrics)."""
    registry.register(PROBE.histogram)
