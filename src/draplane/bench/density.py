"""The `density` workload as the suite runs it: with the whole control plane in the bench's
process (`scale.run_density`), or with `--processes` (`run_density_processes`, here): the API
server, controller-manager, scheduler and nodes each in its own process over HTTPS, as
`draplane up --processes` runs them, and the bench a client creating the pods.

With `--processes` the figures come from the processes: CPU and peak RSS of each from /proc
(the total is the sum), attempts and the scheduler's algorithm cost from the scheduler's
/metrics, writes from the API server's `apiserver_request_total`, each process's collector
pauses from its `draplane_gc_pause_seconds` and its event loop's lag from
`draplane_event_loop_lag_seconds`. The `/readyz` probe is the same process of its
own as in-process, so its figures are the API server's answer time with nothing else in that
process.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prometheus_client import CollectorRegistry

from draplane.bench.figures import Snapshot
from draplane.bench.growth import AlgorithmSnapshot, algorithm_figures
from draplane.bench.histograms import HistogramSnapshot
from draplane.bench.lifecycle import attempt_figures, running_figures, write_figures
from draplane.bench.observer import PodObserver
from draplane.bench.processrun import (
    audit_between,
    loop_lag_figures,
    process_usages,
    racing,
    request_counts,
    scraped,
    server_write_figures,
    usage_figures,
)
from draplane.bench.readyz import ReadyzProbe
from draplane.bench.runconfig import ATTEMPTS_METRIC, BenchError, Timeouts
from draplane.bench.scale import (
    create_and_wait,
    density_rows,
    density_shape,
    lease_figures,
    run_density,
)
from draplane.bench.stats import counter_by_label
from draplane.bench.suite import SuiteRun, SuiteWorkload
from draplane.bench.workloads import NAMESPACE
from draplane.controlplane.processes import ComponentExited, ProcessPlane, ProcessPlaneConfig

GC_METRIC = "draplane_gc_pause_seconds"


def gc_generations(before: CollectorRegistry, after: CollectorRegistry) -> dict[str, Any]:
    """One process's collections between two scrapes of its `draplane_gc_pause_seconds`, per
    generation: how many, and the bucket bound the longest stayed within
    (`longest_at_most_ms`; None when it exceeded the largest bucket or there was none)."""
    earlier = HistogramSnapshot.by_label(before, name=GC_METRIC, label="generation")
    out: dict[str, Any] = {}
    for generation, later in sorted(
        HistogramSnapshot.by_label(after, name=GC_METRIC, label="generation").items()
    ):
        window = later.minus(earlier.get(generation, HistogramSnapshot()))
        bound = window.bound_of_all()
        out[f"gen{generation}"] = {
            "collections": int(window.count),
            "longest_at_most_ms": None if bound is None else round(1000 * bound, 1),
        }
    return out


async def run_density_processes(run: SuiteRun) -> dict[str, Any]:
    """density with every component in its own process."""
    wl = density_shape(run)
    plane = ProcessPlane(
        ProcessPlaneConfig(
            port=0,
            nodes=wl.nodes,
            store=run.store,
            kubernetes_version=run.kubernetes_version,
            drivers=[],
            queueing_hints=run.hints,
        ),
        output=lambda _line: None,
    )
    probe: ReadyzProbe | None = None
    observer: PodObserver | None = None
    client = None
    try:
        run.progress.phase(f"density: start 4 processes ({wl.nodes} nodes)", 1)
        started = time.monotonic()
        try:
            await asyncio.wait_for(plane.start(), timeout=Timeouts().base + 0.5 * wl.nodes)
        except (TimeoutError, ComponentExited) as err:
            raise BenchError(f"control plane did not start: {err or 'timed out'}") from err
        startup_s = time.monotonic() - started
        probe = ReadyzProbe(plane.url, plane.data_dir / "ca.crt")
        await probe.start()
        client = plane.admin_client()
        observer = PodObserver(client, namespace=NAMESPACE)
        await observer.start()
        names = [c.name for c in plane.children]
        before = {name: await scraped(plane, name) for name in names}
        requests_before = request_counts(before["apiserver"])
        usage_before = process_usages(plane, Snapshot.take())
        run.progress.phase(f"density: {wl.measured_pods} pods Running", wl.measured_pods)
        start = time.monotonic()
        await racing(plane, create_and_wait(client, observer, wl=wl, run=run))
        usage_after = process_usages(plane, Snapshot.take())
        await probe.stop()
        after = {name: await scraped(plane, name) for name in names}
        pods = [t for t in observer.pods.values() if t.phase == "measured"]
        gc_ms = {
            name: round(
                1000
                * HistogramSnapshot.take(after[name], name=GC_METRIC)
                .minus(HistogramSnapshot.take(before[name], name=GC_METRIC))
                .total,
                1,
            )
            for name in names
        }
        figures: dict[str, Any] = {
            "nodes": wl.nodes,
            "pods": wl.measured_pods,
            "hints": "on" if run.hints else "off",
            "startup_s": round(startup_s, 3),
            **running_figures(pods, start=start),
            **write_figures(
                audit_between(requests_before, request_counts(after["apiserver"])),
                pods=wl.measured_pods,
            ),
            **attempt_figures(
                counter_by_label(after["scheduler"], name=ATTEMPTS_METRIC, label="result"),
                counter_by_label(before["scheduler"], name=ATTEMPTS_METRIC, label="result"),
                pods=wl.measured_pods,
            ),
            **algorithm_figures(
                after=AlgorithmSnapshot.take(after["scheduler"]),
                before=AlgorithmSnapshot.take(before["scheduler"]),
                nodes=wl.nodes,
            ),
            **usage_figures(usage_before, usage_after, pods=wl.measured_pods),
            **server_write_figures(before["apiserver"], after["apiserver"]),
            **loop_lag_figures(before, after),
            **probe.figures(),
            "process_gc_ms": dict(sorted(gc_ms.items())),
            "process_gc_generations": {
                name: gc_generations(before[name], after[name]) for name in sorted(names)
            },
            "gc_total_ms": round(sum(gc_ms.values()), 1),
            "writes_source": "apiserver_request_total (resources without subresource)",
        }
        figures.update(lease_figures(figures, nodes=wl.nodes))
        await observer.stop()
        observer = None
        stopping = time.monotonic()
        await plane.stop()
        figures["stop_s"] = round(time.monotonic() - stopping, 3)
        return figures
    finally:
        if probe is not None:
            await probe.stop()
        if observer is not None:
            await observer.stop()
        if client is not None:
            await client.close()
        await plane.stop()


async def _run(run: SuiteRun) -> dict[str, Any]:
    return await (run_density_processes if run.processes else run_density)(run)


DENSITY_WORKLOAD = SuiteWorkload(
    name="density",
    description="5,000 simulated nodes, 50,000 pods created, scheduled and Running",
    run=_run,
    rows=density_rows,
    processes=True,
)
