"""`run_once_processes`: one benchmark run (`draplane bench --processes`) against a control
plane whose API server, controller-manager, scheduler, driver and nodes are separate OS
processes over HTTPS (`draplane.controlplane.processes`, as `draplane up --processes`); the
bench process is a client of the API server like any other.

The phases are `runner.run_once`'s (those both share are in `phases`). What the in-process
run reads from its own objects comes from the processes instead: scheduling attempts from the
scheduler's /metrics, writes per resource and verb from the API server's
`apiserver_request_total` (POST create, PUT update, PATCH patch, DELETE delete, 409 as
conflict; its resource label has no subresource), the API server's own time per write from
its `apiserver_request_duration_seconds`, each process's event-loop lag from its
`draplane_event_loop_lag_seconds`, and CPU seconds and peak RSS of each process from /proc, per
component and in total.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Metric
from prometheus_client.parser import text_string_to_metric_families

from draplane.api.handler import WatchStream
from draplane.api.meta import Obj
from draplane.api.request import Request
from draplane.apiserver.audit import Audit
from draplane.bench.figures import Snapshot, build_result, peak_rss_mib
from draplane.bench.histograms import (
    ATTEMPT_DURATION_METRIC,
    HistogramSnapshot,
    attempt_duration_figures,
    duration_figures,
)
from draplane.bench.observer import BenchTimeout, PodObserver
from draplane.bench.phases import create_fixtures, create_pods, settle
from draplane.bench.progress import NullProgress, ProgressSink
from draplane.bench.result import RunResult
from draplane.bench.runconfig import ATTEMPTS_METRIC, BenchError, RunConfig, label
from draplane.bench.stats import counter_by_label, gauge_by_label
from draplane.bench.workloads import NAMESPACE
from draplane.client.interface import Client, Transport
from draplane.client.rest import RESTClient
from draplane.controlplane.processes import ComponentExited, ProcessPlane, ProcessPlaneConfig
from draplane.controlplane.procstats import ProcessUsage

log = logging.getLogger(__name__)

BENCH = "bench"
"""The bench process itself (the workload's client) in the per-process figures."""
WRITE_VERBS = {
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "APPLY": "patch",
    "DELETE": "delete",
}
REQUEST_DURATION_METRIC = "apiserver_request_duration_seconds"
LOOP_LAG_METRIC = "draplane_event_loop_lag_seconds"
T = TypeVar("T")


CREATES_IN_FLIGHT = 64
"""The bench's pod creates sent at once: the client's connection pool size, so that the rest
wait here rather than in the pool, whose wait counts against the connect timeout."""


class BoundedTransport:
    """A transport sending at most `limit` requests at a time (creates only: never a watch)."""

    def __init__(self, transport: Transport, limit: int) -> None:
        self.transport = transport
        self._slots = asyncio.Semaphore(limit)

    @property
    def user(self) -> str:
        return self.transport.user

    async def send(self, request: Request) -> Obj | WatchStream:
        async with self._slots:
            return await self.transport.send(request)

    async def close(self) -> None:
        await self.transport.close()


class ParsedFamilies:
    """A collector standing for parsed /metrics text."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> list[Metric]:
        return self.families


async def scraped(plane: ProcessPlane, name: str) -> CollectorRegistry:
    """A component's /metrics as a registry the bench's metric helpers read."""
    registry = CollectorRegistry(auto_describe=False)
    text = await plane.scrape(name)
    registry.register(ParsedFamilies(list(text_string_to_metric_families(text))))
    return registry


def request_counts(registry: CollectorRegistry) -> dict[tuple[str, str, str], float]:
    """apiserver_request_total by (verb, resource, code)."""
    counts: dict[tuple[str, str, str], float] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == "apiserver_request_total":
                key = (sample.labels["verb"], sample.labels["resource"], sample.labels["code"])
                counts[key] = counts.get(key, 0.0) + sample.value  # over the other labels
    return counts


def audit_between(
    before: dict[tuple[str, str, str], float], after: dict[tuple[str, str, str], float]
) -> Audit:
    """The writes (and 409s) the API server answered between two scrapes, as an `Audit`."""
    audit = Audit()
    for (verb, resource, code), value in after.items():
        count = int(value - before.get((verb, resource, code), 0.0))
        if verb not in WRITE_VERBS or count <= 0:
            continue
        if code == "409":
            audit.conflicts[(WRITE_VERBS[verb], resource)] += count
        elif code.startswith("2"):
            audit.writes[(WRITE_VERBS[verb], resource)] += count
    return audit


def server_write_figures(
    before: CollectorRegistry, after: CollectorRegistry
) -> dict[str, float | None]:
    """Mean, p50 and p99 (ms) of the API server's own time for the write verbs between two
    scrapes of its `apiserver_request_duration_seconds`: handler to response, the client's
    round trip less the network and the client's side."""

    def writes(registry: CollectorRegistry) -> HistogramSnapshot:
        per_verb = HistogramSnapshot.by_label(registry, name=REQUEST_DURATION_METRIC, label="verb")
        return HistogramSnapshot.combined(s for v, s in per_verb.items() if v in WRITE_VERBS)

    return duration_figures(after=writes(after), before=writes(before), prefix="server_write")


def loop_lag_figures(
    before: dict[str, CollectorRegistry], after: dict[str, CollectorRegistry]
) -> dict[str, dict[str, float | None]]:
    """Per process, the mean and p99 (ms) of its event loop's lag between two scrapes of its
    `draplane_event_loop_lag_seconds`."""
    figures: dict[str, dict[str, float | None]] = {"process_loop_lag_mean_ms": {}}
    figures["process_loop_lag_p99_ms"] = {}
    for name in sorted(after):
        window = duration_figures(
            after=HistogramSnapshot.take(after[name], name=LOOP_LAG_METRIC),
            before=HistogramSnapshot.take(before[name], name=LOOP_LAG_METRIC),
            prefix="lag",
        )
        figures["process_loop_lag_mean_ms"][name] = window["lag_mean_ms"]
        figures["process_loop_lag_p99_ms"][name] = window["lag_p99_ms"]
    return figures


def requests_per_pod(
    before: dict[tuple[str, str, str], float],
    after: dict[tuple[str, str, str], float],
    *,
    pods: int,
) -> dict[str, float]:
    """Every request the API server answered between two scrapes (reads too, any code), per
    measured pod, as `"VERB resource"` (apiserver_request_total's verb and resource labels)."""
    totals: dict[str, float] = {}
    for (verb, resource, _code), value in after.items():
        count = value - before.get((verb, resource, _code), 0.0)
        if count > 0:
            label = f"{verb} {resource}"
            totals[label] = totals.get(label, 0.0) + count
    return {k: round(v / pods, 2) for k, v in sorted(totals.items())} if pods else {}


WATCH_EVENTS_METRIC = "apiserver_watch_events_total"
WATCH_WRITES_METRIC = "draplane_watch_writes_total"


def watch_figures(
    before: CollectorRegistry, after: CollectorRegistry, *, pods: int
) -> dict[str, Any]:
    """The watch events the API server sent between two scrapes, per measured pod (in all and
    by resource), and how many one write carried on average."""

    def window(name: str) -> dict[str, float]:
        start = counter_by_label(before, name=name, label="resource")
        end = counter_by_label(after, name=name, label="resource")
        return {k: v - start.get(k, 0.0) for k, v in sorted(end.items()) if v > start.get(k, 0.0)}

    events = window(WATCH_EVENTS_METRIC)
    total_events, total_writes = sum(events.values()), sum(window(WATCH_WRITES_METRIC).values())
    return {
        "watch_events_per_pod": {k: round(v / pods, 2) for k, v in events.items()} if pods else {},
        "watch_events_per_pod_all": round(total_events / pods, 2) if pods else None,
        "watch_events_per_write": round(total_events / total_writes, 2) if total_writes else None,
    }


def usage_figures(
    before: dict[str, ProcessUsage], after: dict[str, ProcessUsage], *, pods: int
) -> dict[str, Any]:
    """CPU seconds of the measured phase and peak RSS, per process and in total."""
    cpu = {name: round(u.cpu_s - before[name].cpu_s, 3) for name, u in after.items()}
    rss = {name: u.peak_rss_mib for name, u in after.items()}
    total_cpu = sum(cpu.values())
    return {
        "process_cpu_s": dict(sorted(cpu.items())),
        "process_cpu_s_per_pod": {k: round(v / pods, 5) for k, v in sorted(cpu.items())},
        "process_peak_rss_mib": dict(sorted(rss.items())),
        "cpu_s_per_pod": round(total_cpu / pods, 5) if pods else 0.0,
        "cpu_s": round(total_cpu, 3),
        "cpu_scope": "every process (components and the bench client), measured phase",
        "peak_rss_mib": round(sum(rss.values()), 1),
        "peak_rss_scope": "sum of every process's peak RSS",
        "processes": True,
    }


def process_usages(plane: ProcessPlane, snapshot: Snapshot) -> dict[str, ProcessUsage]:
    found = plane.usage()
    found[BENCH] = ProcessUsage(cpu_s=snapshot.cpu, peak_rss_mib=peak_rss_mib())
    return found


async def racing(plane: ProcessPlane, work: Coroutine[Any, Any, T]) -> T:
    """`work`, or BenchError as soon as a component process ends."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(plane.wait())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, watch, return_exceptions=True)
    if task.cancelled():
        err = watch.exception() if not watch.cancelled() else None
        raise BenchError(f"the control plane broke: {err}") from err
    return task.result()


async def run_once_processes(
    config: RunConfig, *, progress: ProgressSink | None = None, log_path: Path | None = None
) -> RunResult:
    """One run with every component in its own process; BenchError when it cannot finish.
    The processes' log lines go to `log_path` (appended), else nowhere."""
    sink = progress if progress is not None else NullProgress()
    wl = config.workload
    out = log_path.open("a", encoding="utf-8", buffering=1) if log_path is not None else None

    def write(line: str) -> None:
        if out is not None:
            out.write(line + "\n")

    plane = ProcessPlane(
        ProcessPlaneConfig(
            data_dir=config.data_dir,
            port=0,
            nodes=wl.nodes,
            store=config.store,
            kubernetes_version=wl.mode,
            drivers=list(wl.drivers),
            queueing_hints=config.hints,
            pre_enqueue=config.pre_enqueue,
            driver_workers=config.driver_workers,
            fleet=wl.fleet,
        ),
        output=write,
    )
    client: RESTClient | None = None
    observer: PodObserver | None = None
    try:
        sink.phase(f"{label(config)}: start {len(wl.drivers) + 4} processes", 1)
        try:
            await asyncio.wait_for(plane.start(), config.timeouts.base + 0.5 * wl.nodes)
        except (TimeoutError, ComponentExited) as err:
            raise BenchError(f"control plane did not start: {err or 'timed out'}") from err
        sink.update(1)
        client = plane.admin_client()
        await create_fixtures(client, wl)
        observer = PodObserver(client, namespace=NAMESPACE)
        await observer.start()
        return await racing(plane, _phases(plane, client, observer, config, sink))
    finally:
        if observer is not None:
            await observer.stop()
        if client is not None:
            await client.close()
        await plane.stop()
        if out is not None:
            out.close()


async def _phases(
    plane: ProcessPlane, client: RESTClient, observer: PodObserver, config: RunConfig,
    sink: ProgressSink,
) -> RunResult:  # fmt: skip
    wl = config.workload
    creator = Client(BoundedTransport(client.transport, CREATES_IN_FLIGHT))
    await create_pods(creator, observer, wl=wl, phase="init", count=wl.init_pods)
    await _wait(plane, observer, config, sink, phase="init", count=wl.init_pods)
    await settle(client, observer, config=config, phase="init", count=wl.init_pods)

    count = wl.measured_pods
    names = [c.name for c in plane.children]
    before = {name: await scraped(plane, name) for name in names}
    scheduler_before, apiserver_before = before["scheduler"], before["apiserver"]
    requests_before = request_counts(apiserver_before)
    start = Snapshot.take()
    usage_before = process_usages(plane, start)
    await asyncio.gather(
        create_pods(creator, observer, wl=wl, phase="measured", count=count),
        _wait(plane, observer, config, sink, phase="measured", count=count),
    )
    await settle(client, observer, config=config, phase="measured", count=count)
    end = Snapshot.take()
    usage_after = process_usages(plane, end)
    after = {name: await scraped(plane, name) for name in names}
    scheduler_after, apiserver_after = after["scheduler"], after["apiserver"]
    requests_after = request_counts(apiserver_after)
    result = build_result(
        config=config,
        observer=observer,
        start=start,
        end=end,
        attempts=counter_by_label(scheduler_after, name=ATTEMPTS_METRIC, label="result"),
        attempts_before=counter_by_label(scheduler_before, name=ATTEMPTS_METRIC, label="result"),
        audit=audit_between(requests_before, requests_after),
    )
    result.figures["transport"] = "http"
    result.figures["writes_source"] = "apiserver_request_total (resources without subresource)"
    result.figures.update(
        attempt_duration_figures(
            after=HistogramSnapshot.take(scheduler_after, name=ATTEMPT_DURATION_METRIC),
            before=HistogramSnapshot.take(scheduler_before, name=ATTEMPT_DURATION_METRIC),
        )
    )
    result.figures.update(server_write_figures(apiserver_before, apiserver_after))
    result.figures.update(loop_lag_figures(before, after))
    result.figures.update(usage_figures(usage_before, usage_after, pods=count))
    result.figures["requests_per_pod"] = requests_per_pod(
        requests_before, requests_after, pods=count
    )
    result.figures.update(watch_figures(apiserver_before, apiserver_after, pods=count))
    return result


async def _wait(
    plane: ProcessPlane, observer: PodObserver, config: RunConfig, sink: ProgressSink, *,
    phase: str, count: int,
) -> None:  # fmt: skip
    sink.phase(f"{label(config)}: {phase} pods bound", count)
    try:
        await observer.wait_all(
            phase=phase,
            state="bound",
            expected=count,
            timeout=config.timeouts.phase(config.workload, count),
            stall_timeout=config.timeouts.stall_for(config.workload, count),
            on_progress=sink.update,
        )
    except BenchTimeout as err:
        metrics = await scraped(plane, "scheduler")
        pending = gauge_by_label(metrics, name="scheduler_pending_pods", label="queue")
        queues = ", ".join(f"{q}={int(n)}" for q, n in sorted(pending.items())) or "no metric"
        raise BenchError(f"{err}; scheduler pending pods: {queues}") from err
