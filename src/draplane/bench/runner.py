"""`run_once`: one benchmark run against a fresh `ControlPlane` (or, with `processes`, against
a control plane of processes: `processrun`).

Phases: start the control plane, create the namespace and claim templates, create the init pods
and wait until they are bound and running (and their PodSchedulingContexts are gone), then reset
the write audit, snapshot the metrics, create the measured pods all at once and wait until every
one is bound, settle, and collect. Every wait has a timeout proportional to the workload and a
stall timeout, so a control plane that does not schedule fails with a clear error. What a run is
given and how it fails are in `runconfig` (re-exported here), the phases it shares with
`processrun` in `phases`.
"""

from __future__ import annotations

import asyncio

from draplane.bench import steadystate
from draplane.bench.figures import Snapshot, build_result
from draplane.bench.growth import AlgorithmSnapshot, algorithm_figures
from draplane.bench.histograms import (
    ATTEMPT_DURATION_METRIC,
    HistogramSnapshot,
    attempt_duration_figures,
)
from draplane.bench.observer import BenchTimeout, PodObserver
from draplane.bench.phases import create_fixtures, create_pods, settle
from draplane.bench.processrun import run_once_processes
from draplane.bench.progress import NullProgress, ProgressSink
from draplane.bench.result import RunResult
from draplane.bench.runconfig import ATTEMPTS_METRIC, BenchError, RunConfig, Timeouts, label
from draplane.bench.stats import counter_by_label, gauge_by_label
from draplane.bench.workloads import NAMESPACE
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig

__all__ = ["ATTEMPTS_METRIC", "BenchError", "RunConfig", "Timeouts", "run_once"]


async def run_once(config: RunConfig, *, progress: ProgressSink | None = None) -> RunResult:
    """One run; raises BenchError when the control plane does not get there in time."""
    if config.processes:
        return await run_once_processes(config, progress=progress, log_path=config.log_path)
    sink = progress if progress is not None else NullProgress()
    wl = config.workload
    plane = ControlPlane(
        ControlPlaneConfig(
            data_dir=config.data_dir,
            port=0,
            nodes=wl.nodes,
            store=config.store,
            transport=config.transport,
            queueing_hints=config.hints,
            pre_enqueue=config.pre_enqueue,
            drivers=list(wl.drivers),
            driver_workers=config.driver_workers,
            kubernetes_version=wl.mode,
            fleet=wl.fleet,
        )
    )
    observer: PodObserver | None = None
    try:
        await _start(plane, config, sink)
        client = plane.client()
        await create_fixtures(client, wl)
        await steadystate.preallocate(client, wl)
        observer = PodObserver(client, namespace=NAMESPACE)
        await observer.start()
        await _init_phase(plane, client, observer, config, sink)
        if wl.steady_pods:
            sink.phase(f"{label(config)}: steady state for {wl.steady_seconds:g} s", 1)
            return await steadystate.measured_phase(plane, client, observer, config)
        return await _measured_phase(plane, client, observer, config, sink)
    finally:
        if observer is not None:
            await observer.stop()
        await plane.stop()


async def _start(plane: ControlPlane, config: RunConfig, sink: ProgressSink) -> None:
    sink.phase(f"{label(config)}: start control plane ({config.workload.nodes} nodes)", 1)
    timeout = config.timeouts.base + 0.5 * config.workload.nodes
    try:
        await asyncio.wait_for(plane.start(), timeout=timeout)
    except (TimeoutError, RuntimeError) as err:
        raise BenchError(f"control plane did not start: {err or 'timed out'}") from err
    sink.update(1)


async def _wait_phase(
    plane: ControlPlane, observer: PodObserver, *, config: RunConfig, sink: ProgressSink,
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
        pending = gauge_by_label(plane.metrics, name="scheduler_pending_pods", label="queue")
        queues = ", ".join(f"{q}={int(n)}" for q, n in sorted(pending.items())) or "no metric"
        raise BenchError(f"{err}; scheduler pending pods: {queues}") from err


async def _init_phase(
    plane: ControlPlane, client: Client, observer: PodObserver, config: RunConfig,
    sink: ProgressSink,
) -> None:  # fmt: skip
    count = config.workload.init_pods
    await create_pods(client, observer, wl=config.workload, phase="init", count=count)
    await _wait_phase(plane, observer, config=config, sink=sink, phase="init", count=count)
    await settle(client, observer, config=config, phase="init", count=count)


async def _measured_phase(
    plane: ControlPlane, client: Client, observer: PodObserver, config: RunConfig,
    sink: ProgressSink,
) -> RunResult:  # fmt: skip
    count = config.workload.measured_pods
    attempts_before = counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result")
    durations_before = HistogramSnapshot.take(plane.metrics, name=ATTEMPT_DURATION_METRIC)
    algorithm_before = AlgorithmSnapshot.take(plane.metrics)
    plane.registry.audit.reset()
    start = Snapshot.take(plane.storage)
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(
                create_pods(client, observer, wl=config.workload, phase="measured", count=count)
            )
            group.create_task(
                _wait_phase(
                    plane, observer, config=config, sink=sink, phase="measured", count=count
                )
            )
    except ExceptionGroup as failed:
        # A failed create means the wait can never finish: report the first cause plainly.
        raise failed.exceptions[0] from None
    await settle(client, observer, config=config, phase="measured", count=count)
    end = Snapshot.take(plane.storage)
    result = build_result(
        config=config,
        observer=observer,
        start=start,
        end=end,
        attempts=counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result"),
        attempts_before=attempts_before,
        audit=plane.registry.audit,
    )
    durations = HistogramSnapshot.take(plane.metrics, name=ATTEMPT_DURATION_METRIC)
    result.figures.update(attempt_duration_figures(after=durations, before=durations_before))
    result.figures["kubernetes_version"] = str(plane.config.kubernetes_version)
    result.figures.update(
        algorithm_figures(
            after=AlgorithmSnapshot.take(plane.metrics),
            before=algorithm_before,
            nodes=config.workload.nodes,
        )
    )
    return result
