"""`run_once`: one benchmark run against a fresh `ControlPlane`.

Phases: start the control plane, create the namespace and claim templates, create the init pods
and wait until they are bound and running (and their PodSchedulingContexts are gone), then reset
the write audit, snapshot the metrics, create the measured pods all at once and wait until every
one is bound, settle, and collect. Every wait has a timeout proportional to the workload and a
stall timeout, so a control plane that does not schedule fails with a clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from draplane.api import errors, kinds, versions
from draplane.bench import steadystate
from draplane.bench.figures import Snapshot, build_result
from draplane.bench.growth import AlgorithmSnapshot, algorithm_figures
from draplane.bench.histograms import (
    ATTEMPT_DURATION_METRIC,
    HistogramSnapshot,
    attempt_duration_figures,
)
from draplane.bench.observer import BenchTimeout, PodObserver
from draplane.bench.progress import NullProgress, ProgressSink
from draplane.bench.result import RunResult
from draplane.bench.stats import counter_by_label, gauge_by_label
from draplane.bench.workloads import (
    NAMESPACE,
    Workload,
    claim_template,
    pod,
    pod_names,
    template_resource,
)
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.dra.controller import DRIVER_WORKERS

log = logging.getLogger(__name__)

ATTEMPTS_METRIC = "scheduler_schedule_attempts_total"


class BenchError(RuntimeError):
    """The run could not complete; the message says which phase and why."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds. A phase of P pods with C claims each (W = P * max(1, C)) may take
    base + per_pod * W in all, and stall + stall_per_pod * W without one more pod bound."""

    base: float = 60.0
    per_pod: float = 1.0
    stall: float = 60.0
    stall_per_pod: float = 0.1
    """A scheduler works through its whole queue before the first binding; that takes longer
    with more pods, so the stall allowance grows with them."""
    settle: float = 30.0

    def phase(self, wl: Workload, pods: int) -> float:
        return self.base + self.per_pod * pods * max(1, wl.claims_per_pod)

    def stall_for(self, wl: Workload, pods: int) -> float:
        return self.stall + self.stall_per_pod * pods * max(1, wl.claims_per_pod)


@dataclass(frozen=True)
class RunConfig:
    workload: Workload
    scale: str
    hints: bool = True
    pre_enqueue: bool = True
    driver_workers: int = DRIVER_WORKERS
    """Workers of the example driver's controller (scheduler_perf runs its test driver's
    with 5)."""
    store: str = "sqlite"
    transport: Literal["local", "http"] = "local"
    data_dir: str | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    processes: bool = False
    """Every component in its own process over HTTPS (`bench.processrun`)."""
    log_path: Path | None = None
    """With `processes`: where the processes' log lines go."""


async def run_once(config: RunConfig, *, progress: ProgressSink | None = None) -> RunResult:
    """One run; raises BenchError when the control plane does not get there in time."""
    if config.processes:
        from draplane.bench.processrun import run_once_processes

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
            kubernetes_version=versions.STRUCTURED if wl.structured else versions.CLASSIC,
        )
    )
    observer: PodObserver | None = None
    try:
        await _start(plane, config, sink)
        client = plane.client()
        await _create_fixtures(client, wl)
        await steadystate.preallocate(client, wl)
        observer = PodObserver(client, namespace=NAMESPACE)
        await observer.start()
        await _init_phase(plane, client, observer, config, sink)
        if wl.steady_pods:
            sink.phase(f"{_label(config)}: steady state for {wl.steady_seconds:g} s", 1)
            return await steadystate.measured_phase(plane, client, observer, config)
        return await _measured_phase(plane, client, observer, config, sink)
    finally:
        if observer is not None:
            await observer.stop()
        await plane.stop()


async def _start(plane: ControlPlane, config: RunConfig, sink: ProgressSink) -> None:
    sink.phase(f"{_label(config)}: start control plane ({config.workload.nodes} nodes)", 1)
    timeout = config.timeouts.base + 0.5 * config.workload.nodes
    try:
        await asyncio.wait_for(plane.start(), timeout=timeout)
    except (TimeoutError, RuntimeError) as err:
        raise BenchError(f"control plane did not start: {err or 'timed out'}") from err
    sink.update(1)


async def _create_fixtures(client: Client, wl: Workload) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    with contextlib.suppress(errors.StatusError):
        await client.create(kinds.NAMESPACES, namespace)
    for template in wl.templates:
        await client.create(
            template_resource(wl), claim_template(template, structured=wl.structured), NAMESPACE
        )


async def _create_pods(
    client: Client, observer: PodObserver, *, wl: Workload, phase: str, count: int
) -> None:
    """All creates in flight at once, as scheduler_perf's unthrottled client does."""

    async def create(name: str) -> None:
        await client.create(kinds.PODS, pod(wl, name=name, phase=phase), NAMESPACE)
        observer.mark_created(name)

    names = pod_names(phase, count)
    results = await asyncio.gather(*(create(n) for n in names), return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        raise BenchError(f"{len(failed)} of {count} {phase} pod creates failed: {failed[0]}")


async def _wait_phase(
    plane: ControlPlane, observer: PodObserver, *, config: RunConfig, sink: ProgressSink,
    phase: str, count: int,
) -> None:  # fmt: skip
    sink.phase(f"{_label(config)}: {phase} pods bound", count)
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


async def _settle(
    client: Client, observer: PodObserver, *, config: RunConfig, phase: str, count: int
) -> None:
    """Let the pods' trailing writes land (kubelet Running status, PodSchedulingContext
    deletion) so that they are counted in their own phase. Best effort, bounded."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + config.timeouts.settle
    with contextlib.suppress(BenchTimeout):
        await observer.wait_all(
            phase=phase, state="running", expected=count,
            timeout=config.timeouts.settle, stall_timeout=config.timeouts.settle,
        )  # fmt: skip
    if not config.workload.templates or config.workload.structured:
        return  # structured parameters have no PodSchedulingContexts
    while loop.time() < deadline:
        listed = await client.list(kinds.POD_SCHEDULING_CONTEXTS, NAMESPACE, limit=1)
        if not listed.get("items"):
            return
        await asyncio.sleep(0.05)
    log.warning("%s: PodSchedulingContexts still present after settling", phase)


async def _init_phase(
    plane: ControlPlane, client: Client, observer: PodObserver, config: RunConfig,
    sink: ProgressSink,
) -> None:  # fmt: skip
    count = config.workload.init_pods
    await _create_pods(client, observer, wl=config.workload, phase="init", count=count)
    await _wait_phase(plane, observer, config=config, sink=sink, phase="init", count=count)
    await _settle(client, observer, config=config, phase="init", count=count)


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
                _create_pods(client, observer, wl=config.workload, phase="measured", count=count)
            )
            group.create_task(
                _wait_phase(
                    plane, observer, config=config, sink=sink, phase="measured", count=count
                )
            )
    except ExceptionGroup as failed:
        # A failed create means the wait can never finish: report the first cause plainly.
        raise failed.exceptions[0] from None
    await _settle(client, observer, config=config, phase="measured", count=count)
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


def _label(config: RunConfig) -> str:
    return f"{config.workload.name} hints={'on' if config.hints else 'off'}"
