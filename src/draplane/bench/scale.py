"""Scale runs: `--nodes N --pods P` sizes for `basic` and `lifecycle`, the `density` workload
(every pod created, scheduled and Running on thousands of simulated nodes, each with its Lease,
heartbeats and kubelet pod watch) and the `/readyz` probe that runs beside it.

`density` mirrors clusterloader2's density test and KWOK's scale claim (1k nodes, 100k pods):
full is 5,000 nodes and 50,000 pods without claims (10 per node), created through a bounded
pool of concurrent creates; `--scale small` is a tenth. Its figures: pods Running per s, CPU per
pod, the scheduler's algorithm CPU per attempt against the nodes the adaptive
percentageOfNodesToScore examines, peak RSS, and the p50/p99/max latency of `GET /readyz` over
HTTPS, probed from a process of its own (`draplane.bench.readyz`) for the whole run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from typing import Any

from draplane import gcpolicy
from draplane.api import errors, kinds, versions
from draplane.bench.figures import peak_rss_mib
from draplane.bench.growth import AlgorithmSnapshot, algorithm_figures
from draplane.bench.lifecycle import cost_figures, running_figures
from draplane.bench.observer import PodObserver
from draplane.bench.readyz import ReadyzProbe
from draplane.bench.runconfig import ATTEMPTS_METRIC, Timeouts
from draplane.bench.stats import counter_by_label
from draplane.bench.suite import Row, SuiteRun
from draplane.bench.workloads import NAMESPACE, Workload, pod
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.node import LEASE_RENEW_SECONDS

CREATE_CONCURRENCY = 32
"""Pod creates in flight at once (scheduler_perf creates through a bounded worker pool too)."""

DENSITY = Workload(
    name="density", nodes=5000, init_pods=0, measured_pods=50_000, mode=versions.CLASSIC
)


def sized(wl: Workload, *, nodes: int | None, pods: int | None) -> Workload:
    """`wl` with its node and measured pod counts replaced where given (`--nodes`, `--pods`)."""
    if (nodes is not None and nodes < 1) or (pods is not None and pods < 1):
        raise ValueError("--nodes and --pods must be at least 1")
    return replace(
        wl,
        nodes=wl.nodes if nodes is None else nodes,
        measured_pods=wl.measured_pods if pods is None else pods,
    )


def density_shape(run: SuiteRun) -> Workload:
    return sized(
        replace(
            DENSITY,
            nodes=run.size(DENSITY.nodes),
            measured_pods=run.size(DENSITY.measured_pods),
        ),
        nodes=run.nodes,
        pods=run.pods,
    )


async def create_pods(client: Client, observer: PodObserver, wl: Workload, *, phase: str) -> None:
    """The namespace and `wl.measured_pods` pods, CREATE_CONCURRENCY creates in flight."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    with contextlib.suppress(errors.StatusError):
        await client.create(kinds.NAMESPACES, namespace)
    names = iter(f"pod-{i:06d}" for i in range(wl.measured_pods))

    async def worker() -> None:
        for name in names:
            await client.create(kinds.PODS, pod(wl, name=name, phase=phase), NAMESPACE)
            observer.mark_created(name)

    await asyncio.gather(*(worker() for _ in range(min(CREATE_CONCURRENCY, wl.measured_pods))))


async def create_and_wait(
    client: Client, observer: PodObserver, *, wl: Workload, run: SuiteRun
) -> None:
    """Create the measured pods and wait until every one is Running."""
    timeouts = Timeouts()
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(create_pods(client, observer, wl, phase="measured"))
            group.create_task(
                observer.wait_all(
                    phase="measured",
                    state="running",
                    expected=wl.measured_pods,
                    timeout=timeouts.phase(wl, wl.measured_pods),
                    stall_timeout=timeouts.stall + 0.01 * wl.measured_pods,
                    on_progress=run.progress.update,
                )
            )
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None


async def run_density(run: SuiteRun) -> dict[str, Any]:
    """density with the whole control plane in this process."""
    wl = density_shape(run)
    config = ControlPlaneConfig(
        port=0, nodes=wl.nodes, store=run.store, transport=run.transports[0],
        queueing_hints=run.hints, drivers=[],
    )  # fmt: skip
    plane = ControlPlane(config)
    observer: PodObserver | None = None
    probe: ReadyzProbe | None = None
    pauses = gcpolicy.GcPauses()
    stopped = False
    try:
        run.progress.phase(f"density: start control plane ({wl.nodes} nodes)", 1)
        started = time.monotonic()
        await asyncio.wait_for(plane.start(), timeout=Timeouts().base + 0.5 * wl.nodes)
        startup_s = time.monotonic() - started
        probe = ReadyzProbe(plane.apiserver.url, plane.data_dir / "ca.crt")
        await probe.start()
        observer = PodObserver(plane.client(), namespace=NAMESPACE)
        await observer.start()
        attempts_before = counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result")
        algorithm_before = AlgorithmSnapshot.take(plane.metrics)
        plane.registry.audit.reset()
        rss_before = peak_rss_mib()
        run.progress.phase(f"density: {wl.measured_pods} pods Running", wl.measured_pods)
        pauses.install()
        cpu, start = time.process_time(), time.monotonic()
        await create_and_wait(plane.client(), observer, wl=wl, run=run)
        cpu = time.process_time() - cpu
        pauses.uninstall()
        await probe.stop()
        pods = [t for t in observer.pods.values() if t.phase == "measured"]
        algorithm = algorithm_figures(
            after=AlgorithmSnapshot.take(plane.metrics),
            before=algorithm_before,
            nodes=wl.nodes,
        )
        figures = {
            "nodes": wl.nodes,
            "pods": wl.measured_pods,
            "hints": "on" if run.hints else "off",
            "startup_s": round(startup_s, 3),
            "rss_before_pods_mib": rss_before,
            **running_figures(pods, start=start),
            **cost_figures(plane, pods=wl.measured_pods, attempts_before=attempts_before, cpu=cpu),
            **algorithm,
            **probe.figures(),
            **pauses.figures(),
            "peak_rss_mib": peak_rss_mib(),
        }
        figures.update(lease_figures(figures, nodes=wl.nodes))
        await observer.stop()
        observer = None
        # What Ctrl-C on `draplane up` with this many nodes and pods would wait for.
        stopping = time.monotonic()
        await plane.stop()
        stopped = True
        figures["stop_s"] = round(time.monotonic() - stopping, 3)
        return figures
    finally:
        pauses.uninstall()
        if probe is not None:
            await probe.stop()
        if observer is not None:
            await observer.stop()
        if not stopped:
            await plane.stop()


def lease_figures(figures: dict[str, Any], *, nodes: int) -> dict[str, Any]:
    """Lease renewals per s over the measured phase, against what `nodes` renewing every
    LEASE_RENEW_SECONDS write: fewer means renewals waited (behind the nodes' other requests or
    a saturated API server) and Leases were older than the kubelet keeps them."""
    per_pod = figures["writes_by_resource_verb"].get("update leases", 0.0)
    duration = figures.get("duration_s") or 0.0
    rate = per_pod * figures["pods"] / duration if duration > 0 else 0.0
    return {
        "lease_renewals_per_s": round(rate, 1),
        "lease_renewals_expected_per_s": round(nodes / LEASE_RENEW_SECONDS, 1),
    }


def density_rows(run: SuiteRun) -> tuple[Row, ...]:
    return (
        Row("nodes", "nodes (Lease, heartbeats, kubelet pod watch each)"),
        Row("pods", "pods (no claims)"),
        Row("startup_s", "control plane start, all nodes registered (s)"),
        Row("running_pods", "pods Running"),
        Row("duration_s", "creation start -> last Running (s)"),
        Row("running_per_s", "pods Running per s (avg)"),
        Row("latency_running_p99_s", "creation -> Running p99 (s)"),
        Row("attempts_per_pod", "scheduling attempts per pod", at_most=1.0),
        Row("lease_renewals_per_s", "Lease renewals per s"),
        Row("lease_renewals_expected_per_s", "Lease renewals per s, every node every 10 s"),
        Row("algorithm_cpu_ms_per_attempt", "scheduler algorithm CPU per attempt (ms)"),
        Row("nodes_to_find", "nodes examined per attempt (adaptive percentageOfNodesToScore)"),
        Row(
            "cpu_s_per_pod",
            "CPU s per pod (every process)" if run.processes else "CPU s per pod (whole process)",
        ),
        Row("readyz_p99_ms", "GET /readyz p99 (ms)", at_most=100.0),
        Row("readyz_max_ms", "GET /readyz max (ms)"),
        Row("gc_total_ms", "garbage collector pauses in all (ms)"),
        Row("gc_gen1_max_ms", "longest generation-1 collection (ms)"),
        Row("gc_gen2_max_ms", "longest full collection (ms)"),
        Row(
            "peak_rss_mib",
            "peak RSS, sum of the processes (MiB)" if run.processes else "peak RSS (MiB)",
            at_most=4096.0,
        ),
        Row("stop_s", "control plane stop (s)"),
    )
