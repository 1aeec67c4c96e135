"""`api-watch`: watch fan-out latency. W watchers (each its own client: LocalClient, or a
RESTClient with its own HTTPS connection) watch pods in one namespace while a writer creates
~2 KB pods at a steady rate; each delivery's delay runs from the return of the create call to
the receipt of its ADDED event by that watcher. In one process the watchers usually have the
event before the writer has its answer, so the delay from the create call's start is reported
as well (an upper bound: it includes the create itself). The target: p99 <= 50 ms, W = 100.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from draplane.api import kinds
from draplane.api.handler import WatchStream
from draplane.api.meta import deep_copy
from draplane.bench.apihost import ApiHost, Transport, sized_pod
from draplane.bench.stats import percentile
from draplane.bench.suite import Row, SuiteRun, SuiteWorkload
from draplane.storage.etcd_local import etcd_cpu

FULL_WATCHERS = 100
FULL_EVENTS = 500
RATE = 50.0
"""Creates per second by the writer."""
TARGET_P99_MS = 50.0
DELIVERY_TIMEOUT = 30.0
"""Seconds after the last create for every watcher to receive every event."""


@dataclass
class Watcher:
    stream: WatchStream
    received: dict[str, float] = field(default_factory=dict)
    """Object name -> `time.perf_counter()` at receipt."""


async def _receive(watcher: Watcher, *, expected: int) -> None:
    async for event in watcher.stream:
        if event.type == "ADDED":
            watcher.received[event.object["metadata"]["name"]] = time.perf_counter()
            if len(watcher.received) >= expected:
                return


@dataclass
class Written:
    called: dict[str, float] = field(default_factory=dict)
    """Object name -> `time.perf_counter()` when its create call started."""
    returned: dict[str, float] = field(default_factory=dict)
    """Object name -> `time.perf_counter()` when its create call returned."""


async def _write(
    host: ApiHost, *, transport: Transport, namespace: str, events: int, run: SuiteRun
) -> Written:
    """Creates at RATE per second."""
    client = host.client(transport)
    template = sized_pod("x", namespace=namespace)
    written = Written()
    loop = asyncio.get_running_loop()
    start = loop.time()
    for i in range(events):
        delay = start + i / RATE - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        name = f"watched-{i:06d}"
        obj = deep_copy(template)
        obj["metadata"]["name"] = name
        written.called[name] = time.perf_counter()
        await client.create(kinds.PODS, obj, namespace)
        written.returned[name] = time.perf_counter()
        if i % 50 == 0:
            run.progress.update(i)
    run.progress.update(events)
    return written


def _delays(watchers: list[Watcher], since: dict[str, float]) -> tuple[list[float], int]:
    """Delivery delays in milliseconds after `since`, and how many were negative (counted as
    0: the watcher had the event before the writer had its answer)."""
    delays: list[float] = []
    early = 0
    for watcher in watchers:
        for name, received in watcher.received.items():
            delay = 1000.0 * (received - since[name])
            if delay < 0:
                early += 1
                delay = 0.0
            delays.append(delay)
    return delays, early


def _delay_figures(watchers: list[Watcher], written: Written, transport: str) -> dict[str, Any]:
    from_return, early = _delays(watchers, written.returned)
    from_call, _ = _delays(watchers, written.called)
    figures: dict[str, Any] = {}
    for name, delays in (("", from_return), ("from_call_", from_call)):
        figures[f"watch_delay_{name}p50_ms_{transport}"] = round(percentile(delays, 50), 3)
        figures[f"watch_delay_{name}p99_ms_{transport}"] = round(percentile(delays, 99), 3)
        figures[f"watch_delay_{name}max_ms_{transport}"] = round(max(delays, default=0.0), 3)
    figures[f"deliveries_{transport}"] = len(from_return)
    figures[f"early_deliveries_{transport}"] = early
    return figures


async def _one_transport(
    host: ApiHost, *, transport: Transport, watchers: int, events: int, run: SuiteRun
) -> dict[str, Any]:
    namespace = f"bench-watch-{transport}"
    admin = host.client("local")
    await admin.create(
        kinds.NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    revision = (await admin.list(kinds.PODS, namespace))["metadata"]["resourceVersion"]
    opened = [
        Watcher(
            await host.client(transport).watch(kinds.PODS, namespace, resource_version=revision)
        )
        for _ in range(watchers)
    ]
    tasks = [asyncio.create_task(_receive(w, expected=events)) for w in opened]
    run.progress.phase(f"api-watch {transport}: {watchers} watchers, events written", events)
    try:
        await asyncio.sleep(0.2)  # let every watcher reach its first read before timing
        written = await _write(
            host, transport=transport, namespace=namespace, events=events, run=run
        )
        await asyncio.wait(tasks, timeout=DELIVERY_TIMEOUT)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for watcher in opened:
            await watcher.stream.close()
    return {
        **_delay_figures(opened, written, transport),
        f"expected_deliveries_{transport}": watchers * events,
    }


async def run_api_watch(run: SuiteRun) -> dict[str, Any]:
    watchers = run.size(FULL_WATCHERS)
    events = run.size(FULL_EVENTS)
    figures: dict[str, Any] = {"watchers": watchers, "events": events, "rate_per_s": RATE}
    async with ApiHost(store=run.store, mode=run.kubernetes_version) as host:
        etcd_before = etcd_cpu(host.storage)
        for transport in run.transports:
            figures.update(
                await _one_transport(
                    host, transport=transport, watchers=watchers, events=events, run=run
                )
            )
        etcd_after = etcd_cpu(host.storage)
        if etcd_before is not None and etcd_after is not None:
            figures["etcd_cpu_s"] = round(etcd_after - etcd_before, 3)
    return figures


def _rows(run: SuiteRun) -> tuple[Row, ...]:
    rows = [Row("watchers", "watchers"), Row("events", "events written")]
    for t in run.transports:
        rows += [
            Row(f"watch_delay_p50_ms_{t}", f"{t}: delay after create returned p50 (ms)"),
            Row(f"watch_delay_p99_ms_{t}", f"{t}:   p99 (ms)", at_most=TARGET_P99_MS),
            Row(f"watch_delay_max_ms_{t}", f"{t}:   max (ms)"),
            Row(f"early_deliveries_{t}", f"{t}:   received before create returned"),
            Row(f"watch_delay_from_call_p50_ms_{t}", f"{t}: delay after create called p50 (ms)"),
            Row(f"watch_delay_from_call_p99_ms_{t}", f"{t}:   p99 (ms)", at_most=TARGET_P99_MS),
            Row(f"watch_delay_from_call_max_ms_{t}", f"{t}:   max (ms)"),
            Row(f"deliveries_{t}", f"deliveries {t}"),
            Row(f"expected_deliveries_{t}", f"  expected {t}"),
        ]
    return tuple(rows)


API_WATCH = SuiteWorkload(
    name="api-watch",
    description="watch fan-out: delay from create to receipt at each of 100 watchers",
    run=run_api_watch,
    rows=_rows,
    default_transports=("local", "http"),
)
