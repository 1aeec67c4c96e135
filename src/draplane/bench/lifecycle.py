"""`lifecycle`: the end-to-end figure. The whole control plane as `draplane up` wires it
(`ControlPlane`: API server, controller-manager, scheduler, example driver, simulated nodes);
all pods, each with one template claim (WaitForFirstConsumer), are created at once; each pod's
latency runs from the return of its create call to the receipt, on a pod watch, of the node's
status write that makes it Running. Full: 100 nodes, 1,000 pods; small: 10 nodes, 100 pods.
In 1.36 (the default) each claim requests one device of the example DeviceClass, allocated by
the scheduler from the nodes' ResourceSlices; in 1.28 the example driver allocates.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from draplane.api import kinds, versions
from draplane.apiserver.audit import Audit
from draplane.bench.figures import POD_RESOURCES
from draplane.bench.observer import PodObserver, PodTimes
from draplane.bench.phases import create_fixtures
from draplane.bench.runconfig import ATTEMPTS_METRIC, Timeouts
from draplane.bench.stats import counter_by_label, delta, percentile
from draplane.bench.suite import Row, SuiteRun, SuiteWorkload
from draplane.bench.workloads import (
    NAMESPACE,
    ClaimTemplate,
    Workload,
    in_mode,
    pod,
)
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig, DriverSpec

PHASE = "measured"
SHAPE = Workload(
    name="lifecycle",
    nodes=100,
    init_pods=0,
    measured_pods=1000,
    mode=versions.CLASSIC,
    drivers=(DriverSpec(name="driver.example.com", resource_class="example", devices_per_node=20),),
    templates=(ClaimTemplate("test-claim-template", "example", ("resource",)),),
    attempts_floor=2.0,
)


def shape(run: SuiteRun) -> Workload:
    """SHAPE at the run's scale (`--nodes` / `--pods` taking precedence) in the run's mode."""
    sized = replace(
        SHAPE,
        nodes=run.size(SHAPE.nodes) if run.nodes is None else run.nodes,
        measured_pods=run.size(SHAPE.measured_pods) if run.pods is None else run.pods,
    )
    return in_mode(sized, run.kubernetes_version)


async def _create_pods(client: Client, observer: PodObserver, wl: Workload) -> None:
    await create_fixtures(client, wl)

    async def create(name: str) -> None:
        await client.create(kinds.PODS, pod(wl, name=name, phase=PHASE), NAMESPACE)
        observer.mark_created(name)

    await asyncio.gather(*(create(f"pod-{i:05d}") for i in range(wl.measured_pods)))


def _latencies(pods: list[PodTimes], attr: str) -> list[float]:
    out = []
    for times in pods:
        reached = getattr(times, attr)
        start = times.created if times.created is not None else times.added
        if reached is not None:
            out.append(reached - start)
    return out


def running_figures(pods: list[PodTimes], *, start: float) -> dict[str, Any]:
    running = _latencies(pods, "running")
    bound = _latencies(pods, "bound")
    last = max((t.running for t in pods if t.running is not None), default=start)
    duration = last - start
    figures = {
        "running_pods": len(running),
        "bound_pods": len(bound),
        "duration_s": duration,
        "running_per_s": len(running) / duration if duration > 0 else 0.0,
        "latency_running_p50_s": percentile(running, 50),
        "latency_running_p90_s": percentile(running, 90),
        "latency_running_p99_s": percentile(running, 99),
        "latency_running_max_s": max(running, default=0.0),
        "latency_bound_p50_s": percentile(bound, 50),
        "latency_bound_p99_s": percentile(bound, 99),
    }
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()}


def cost_figures(plane: ControlPlane, *, pods: int, attempts_before: dict[str, float],
                  cpu: float) -> dict[str, Any]:  # fmt: skip
    """Writes, attempts and CPU per pod of an in-process run (its registry's audit, its
    metrics, the process's CPU)."""
    attempts = counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result")
    return {
        **write_figures(plane.registry.audit, pods=pods),
        **attempt_figures(attempts, attempts_before, pods=pods),
        "cpu_s_per_pod": round(cpu / pods, 5),
    }


def write_figures(audit: Audit, *, pods: int) -> dict[str, Any]:
    """The writes the API server answered, per pod: to pods and their claims, all of them,
    and by resource and verb; with the 409 conflicts."""
    writes = audit.writes
    pod_writes = sum(n for (_, res), n in writes.items() if res.split("/")[0] in POD_RESOURCES)
    return {
        "writes_per_pod": round(pod_writes / pods, 3),
        "writes_per_pod_all": round(sum(writes.values()) / pods, 3),
        "writes_by_resource_verb": {
            f"{verb} {res}": round(n / pods, 3) for (verb, res), n in sorted(writes.items())
        },
        "conflicts": int(sum(audit.conflicts.values())),
    }


def attempt_figures(
    after: dict[str, float], before: dict[str, float], *, pods: int
) -> dict[str, Any]:
    """Scheduling attempts per pod between two readings of the attempts counter."""
    return {"attempts_per_pod": round(sum(delta(after, before).values()) / pods, 3)}


async def _create_and_wait(
    client: Client, observer: PodObserver, *, wl: Workload, run: SuiteRun, timeouts: Timeouts
) -> None:
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(_create_pods(client, observer, wl))
            group.create_task(
                observer.wait_all(
                    phase=PHASE,
                    state="running",
                    expected=wl.measured_pods,
                    timeout=timeouts.phase(wl, wl.measured_pods),
                    stall_timeout=timeouts.stall_for(wl, wl.measured_pods),
                    on_progress=run.progress.update,
                )
            )
    except ExceptionGroup as failed:
        # A failed create means the wait can never finish: report the first cause plainly.
        raise failed.exceptions[0] from None


async def run_lifecycle(run: SuiteRun) -> dict[str, Any]:
    wl = shape(run)
    config = ControlPlaneConfig(
        port=0, nodes=wl.nodes, store=run.store, transport=run.transports[0],
        queueing_hints=run.hints, drivers=list(wl.drivers),
        kubernetes_version=run.kubernetes_version,
    )  # fmt: skip
    plane = ControlPlane(config)
    observer: PodObserver | None = None
    timeouts = Timeouts()
    try:
        run.progress.phase(f"lifecycle: start control plane ({wl.nodes} nodes)", 1)
        await asyncio.wait_for(plane.start(), timeout=timeouts.base + 0.5 * wl.nodes)
        client = plane.client()
        observer = PodObserver(client, namespace=NAMESPACE)
        await observer.start()
        attempts_before = counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result")
        plane.registry.audit.reset()
        run.progress.phase(f"lifecycle: {wl.measured_pods} pods Running", wl.measured_pods)
        cpu, start = time.process_time(), time.monotonic()
        await _create_and_wait(client, observer, wl=wl, run=run, timeouts=timeouts)
        cpu = time.process_time() - cpu
        pods = [t for t in observer.pods.values() if t.phase == PHASE]
        return {
            "nodes": wl.nodes,
            "pods": wl.measured_pods,
            "hints": "on" if run.hints else "off",
            **running_figures(pods, start=start),
            **cost_figures(plane, pods=wl.measured_pods, attempts_before=attempts_before, cpu=cpu),
        }
    finally:
        if observer is not None:
            await observer.stop()
        await plane.stop()


def _rows(run: SuiteRun) -> tuple[Row, ...]:
    return (
        Row("nodes", "nodes"),
        Row("pods", "pods (one template claim each)"),
        Row("running_pods", "pods Running"),
        Row("duration_s", "creation start -> last Running (s)"),
        Row("running_per_s", "pods Running per s (avg)"),
        Row("latency_running_p50_s", "creation -> Running p50 (s)"),
        Row("latency_running_p90_s", "creation -> Running p90 (s)"),
        Row("latency_running_p99_s", "creation -> Running p99 (s)"),
        Row("latency_running_max_s", "creation -> Running max (s)"),
        Row("latency_bound_p50_s", "creation -> bound p50 (s)"),
        Row("latency_bound_p99_s", "creation -> bound p99 (s)"),
        Row("attempts_per_pod", "scheduling attempts per pod"),
        Row("writes_per_pod", "writes per pod (pods, claims, contexts)"),
        Row("writes_per_pod_all", "writes per pod (all)"),
        Row("conflicts", "409 conflicts"),
        Row("cpu_s_per_pod", "CPU s per pod"),
    )


LIFECYCLE = SuiteWorkload(
    name="lifecycle",
    description="whole control plane: template-claim pods from creation to Running",
    run=run_lifecycle,
    rows=_rows,
)
