"""Turns what one run observed into its `RunResult`: the contract's figures plus extras.

Latency runs from the return of the pod's create call (a sub-second stand-in for
`creationTimestamp`, which has 1 s precision) to the receipt, on the bench's pod watch, of the
event that carries `spec.nodeName`. The `creationTimestamp`-based figures are kept as extras.
"""

from __future__ import annotations

import os
import platform
import resource
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from draplane.apiserver.audit import Audit
from draplane.bench.observer import PodObserver, PodTimes
from draplane.bench.result import RunResult
from draplane.bench.runconfig import RunConfig
from draplane.bench.stats import (
    ATTEMPT_RESULTS,
    delta,
    per_pod,
    percentile,
    throughput_samples,
    throughput_series,
)
from draplane.storage.etcd_local import etcd_cpu

LATENCY_SOURCE = "create call returned -> pod watch receipt of spec.nodeName"
POD_RESOURCES = ("pods", "resourceclaims", "podschedulingcontexts")
"""Writes a pod's scheduling makes; events, leases and nodes are background and not counted."""


@dataclass(frozen=True)
class Snapshot:
    monotonic: float
    cpu: float
    etcd_cpu: float | None = None
    """CPU seconds of the local etcd process (`--store etcd`), else None."""

    @staticmethod
    def take(storage: object = None) -> Snapshot:
        return Snapshot(time.monotonic(), time.process_time(), etcd_cpu(storage))


def _etcd_cpu_figures(start: Snapshot, end: Snapshot, *, pods: int) -> dict[str, Any]:
    if start.etcd_cpu is None or end.etcd_cpu is None:
        return {}
    return {"etcd_cpu_s_per_pod": round((end.etcd_cpu - start.etcd_cpu) / pods, 5)}


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def peak_rss_mib() -> float:
    """Peak RSS of this process so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _timestamp_latency(times: PodTimes) -> float | None:
    if times.bound_wall is None or not times.creation_timestamp:
        return None
    created = datetime.fromisoformat(times.creation_timestamp.replace("Z", "+00:00"))
    return times.bound_wall - created.timestamp()


def _latency_figures(measured: list[PodTimes]) -> tuple[dict[str, float], list[float]]:
    latencies = [
        t.bound - (t.created if t.created is not None else t.added)
        for t in measured
        if t.bound is not None
    ]
    stamped = [x for x in map(_timestamp_latency, measured) if x is not None]
    figures = {
        "latency_p50_s": percentile(latencies, 50),
        "latency_p90_s": percentile(latencies, 90),
        "latency_p99_s": percentile(latencies, 99),
        "latency_max_s": max(latencies, default=0.0),
        "latency_from_creation_timestamp_p50_s": percentile(stamped, 50),
        "latency_from_creation_timestamp_p99_s": percentile(stamped, 99),
    }
    return {k: round(v, 4) for k, v in figures.items()}, latencies


def _throughput_figures(
    measured: list[PodTimes], *, start: float
) -> tuple[dict[str, Any], list[int]]:
    binds = [t.bound for t in measured if t.bound is not None]
    duration = max(binds, default=start) - start
    series = throughput_series(binds, start=start)
    samples = throughput_samples(series, duration=duration)
    avg = len(binds) / duration if duration > 0 else 0.0
    figures: dict[str, Any] = {
        "duration_s": round(duration, 4),
        "throughput_avg": round(avg, 3),
        "throughput_p50": round(percentile(samples, 50), 3),
        "throughput_p90": round(percentile(samples, 90), 3),
        "throughput_p99": round(percentile(samples, 99), 3),
        "throughput_avg_per_core": round(avg / cores(), 3),
        "throughput_series": series,
    }
    return figures, series


def _write_figures(audit: Audit, *, pods: int, kubelet_writes: int) -> dict[str, Any]:
    """Writes per pod: those to pods, claims and PodSchedulingContexts, less the kubelet's one
    Running status update per pod (scheduler_perf runs no kubelet); every write is itemised."""
    writes = {f"{verb} {res}": float(n) for (verb, res), n in audit.writes.items()}
    scheduling = sum(
        n for (_, res), n in audit.writes.items() if res.split("/")[0] in POD_RESOURCES
    )
    events = sum(n for (_, res), n in audit.writes.items() if res.split("/")[0] == "events")
    conflicts = {f"{verb} {res}": float(n) for (verb, res), n in audit.conflicts.items()}
    return {
        "writes_per_pod": round((scheduling - kubelet_writes) / pods, 3) if pods else 0.0,
        "writes_by_resource_verb": per_pod(writes, pods),
        "conflicts": int(sum(audit.conflicts.values())),
        "conflicts_by_resource_verb": {k: int(v) for k, v in sorted(conflicts.items())},
        "writes_per_pod_all": round(sum(writes.values()) / pods, 3) if pods else 0.0,
        "events_per_pod": round(events / pods, 3) if pods else 0.0,
        "kubelet_writes_per_pod": round(kubelet_writes / pods, 3) if pods else 0.0,
    }


def _attempt_figures(
    attempts: Mapping[str, float], attempts_before: Mapping[str, float], *, pods: int
) -> dict[str, Any]:
    by_result = delta(attempts, attempts_before)
    for result in ATTEMPT_RESULTS:
        by_result.setdefault(result, 0.0)
    total = sum(by_result.values())
    return {
        "attempts_per_pod": round(total / pods, 3) if pods else 0.0,
        "attempts_by_result": per_pod(by_result, pods),
    }


def build_result(
    *,
    config: RunConfig,
    observer: PodObserver,
    start: Snapshot,
    end: Snapshot,
    attempts: Mapping[str, float],
    attempts_before: Mapping[str, float],
    audit: Audit,
) -> RunResult:
    wl = config.workload
    measured = [t for t in observer.pods.values() if t.phase == "measured"]
    scheduled = sum(1 for t in measured if t.bound is not None)
    running = sum(1 for t in measured if t.running is not None)
    throughput, series = _throughput_figures(measured, start=start.monotonic)
    latency, latencies = _latency_figures(measured)
    figures: dict[str, Any] = {
        "workload": wl.name,
        "scale": config.scale,
        "hints": "on" if config.hints else "off",
        "pre_enqueue": "on" if config.pre_enqueue else "off",
        "driver_workers": config.driver_workers,
        "store": config.store,
        "transport": config.transport,
        "nodes": wl.nodes,
        "init_pods": wl.init_pods,
        "measured_pods": wl.measured_pods,
        "scheduled_pods": scheduled,
        **throughput,
        **_attempt_figures(attempts, attempts_before, pods=wl.measured_pods),
        "attempts_floor": wl.attempts_floor,
        **latency,
        "latency_source": LATENCY_SOURCE,
        **_write_figures(audit, pods=wl.measured_pods, kubelet_writes=running),
        "cpu_s_per_pod": round((end.cpu - start.cpu) / wl.measured_pods, 5),
        "cpu_scope": "whole process (all components and the bench client), measured phase",
        **_etcd_cpu_figures(start, end, pods=wl.measured_pods),
        "peak_rss_mib": peak_rss_mib(),
        "python": platform.python_version(),
        "cores": cores(),
    }
    binds = sorted(t.bound - start.monotonic for t in measured if t.bound is not None)
    return RunResult(
        figures=figures, throughput_series=series, latencies=latencies, bind_offsets=binds
    )
