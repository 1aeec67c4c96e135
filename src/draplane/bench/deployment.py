"""`deployment`: the lifecycle figure for a Deployment. The whole control plane as `draplane
up` wires it; one Deployment whose pod template has one template claim (WaitForFirstConsumer)
is applied, and each pod's latency runs from the apply to the receipt, on a pod watch, of the
node's status write that makes it Running. Full: 100 nodes, 1,000 replicas; small: 10, 100.

The writes per pod compare with `lifecycle`'s bare pods: the difference is what the Deployment
and ReplicaSet controllers add (the ReplicaSet, its status, one event per pod).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from draplane.api import kinds
from draplane.bench.lifecycle import PHASE, cost_figures, running_figures, shape
from draplane.bench.observer import PodObserver
from draplane.bench.phases import create_fixtures
from draplane.bench.runconfig import ATTEMPTS_METRIC, Timeouts
from draplane.bench.stats import counter_by_label
from draplane.bench.suite import Row, SuiteRun, SuiteWorkload
from draplane.bench.workloads import (
    NAMESPACE,
    PHASE_LABEL,
    Workload,
    pod,
)
from draplane.controlplane import ControlPlane, ControlPlaneConfig

NAME = "bench"
APP_LABEL = "app"


def deployment(wl: Workload) -> dict[str, Any]:
    """One Deployment of `wl.measured_pods` replicas of the lifecycle workload's pod."""
    template = pod(wl, name="", phase=PHASE)
    labels = {APP_LABEL: NAME, PHASE_LABEL: PHASE}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": wl.measured_pods,
            "selector": {"matchLabels": {APP_LABEL: NAME}},
            "template": {"metadata": {"labels": labels}, "spec": template["spec"]},
        },
    }


async def run_deployment(run: SuiteRun) -> dict[str, Any]:
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
        run.progress.phase(f"deployment: start control plane ({wl.nodes} nodes)", 1)
        await asyncio.wait_for(plane.start(), timeout=timeouts.base + 0.5 * wl.nodes)
        client = plane.client()
        await create_fixtures(client, wl)
        observer = PodObserver(client, namespace=NAMESPACE)
        await observer.start()
        attempts_before = counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result")
        plane.registry.audit.reset()
        run.progress.phase(f"deployment: {wl.measured_pods} replicas Running", wl.measured_pods)
        cpu, start = time.process_time(), time.monotonic()
        await client.create(kinds.DEPLOYMENTS, deployment(wl), NAMESPACE)
        await observer.wait_all(
            phase=PHASE,
            state="running",
            expected=wl.measured_pods,
            timeout=timeouts.phase(wl, wl.measured_pods),
            stall_timeout=timeouts.stall_for(wl, wl.measured_pods),
            on_progress=run.progress.update,
        )
        cpu = time.process_time() - cpu
        pods = [t for t in observer.pods.values() if t.phase == PHASE]
        for times in pods:
            times.created = start
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
        Row("pods", "replicas (one template claim each)"),
        Row("running_pods", "pods Running"),
        Row("duration_s", "apply -> last Running (s)"),
        Row("running_per_s", "pods Running per s (avg)", at_least=150),
        Row("latency_running_p50_s", "apply -> Running p50 (s)"),
        Row("latency_running_p99_s", "apply -> Running p99 (s)"),
        Row("attempts_per_pod", "scheduling attempts per pod"),
        Row("writes_per_pod", "writes per pod (pods, claims, contexts)"),
        Row("writes_per_pod_all", "writes per pod (all)"),
        Row("conflicts", "409 conflicts"),
        Row("cpu_s_per_pod", "CPU s per pod"),
    )


DEPLOYMENT = SuiteWorkload(
    name="deployment",
    description="whole control plane: one Deployment with a claim template, apply to Running",
    run=run_deployment,
    rows=_rows,
)
