"""The steady-state workloads (scheduler_perf SteadyStateClusterResourceClaimTemplate).

`preallocate`: the workload's `allocated_claims` claims are created and allocated through the
structured allocator, first fit over the nodes in name order, and their `status.allocation`
written (allocResourceClaims), so the cluster starts empty, half full or full. `measured_phase`:
`steady_pods` measured pods exist at all times; each one bound is deleted (grace period 0) and
replaced by a new one, for `steady_seconds` (longer only on a machine too slow to bind one
replacement in that time: the window then stays open until one is bound). Every per-pod figure
counts the pods bound in that window.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from draplane.api import kinds, versions
from draplane.api.meta import Obj
from draplane.bench.figures import Snapshot, build_result
from draplane.bench.histograms import (
    ATTEMPT_DURATION_METRIC,
    HistogramSnapshot,
    attempt_duration_figures,
)
from draplane.bench.observer import PodObserver
from draplane.bench.result import RunResult
from draplane.bench.runconfig import ATTEMPTS_METRIC, RunConfig
from draplane.bench.stats import counter_by_label
from draplane.bench.workloads import NAMESPACE, Workload, claim_template, pod
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane
from draplane.dra.structured import AllocatedState, Allocator, SliceIndex

_BATCH = 100
_SLICES_TIMEOUT = 120.0


class SteadyStateError(RuntimeError):
    """The cluster could not be prepared (slices missing, claims that do not fit)."""


def allocated_claim(wl: Workload, index: int) -> Obj:
    """A claim with the template's spec, named like scheduler_perf's `resourceclaim-N`."""
    template = claim_template(wl.templates[0], mode=versions.STRUCTURED)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"resourceclaim-{index:05d}", "namespace": NAMESPACE},
        "spec": template["spec"]["spec"],
    }


async def _slices(client: Client, wl: Workload) -> list[Obj]:
    """The ResourceSlices, once every node has published its own."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _SLICES_TIMEOUT
    while True:
        items: list[Obj] = (await client.list(kinds.RESOURCE_SLICES)).get("items") or []
        if len(items) >= wl.nodes * len(wl.drivers) or loop.time() >= deadline:
            return items
        await asyncio.sleep(0.1)


async def preallocate(client: Client, wl: Workload) -> None:
    count = wl.allocated_claims
    if not count:
        return
    slices = await _slices(client, wl)
    nodes: list[Obj] = (await client.list(kinds.NODES)).get("items") or []
    nodes.sort(key=lambda n: str(n["metadata"]["name"]))
    classes = {
        str(c["metadata"]["name"]): c
        for c in (await client.list(kinds.DEVICE_CLASSES)).get("items") or []
    }
    index = SliceIndex(slices)
    allocated = AllocatedState()
    node = 0
    for start in range(0, count, _BATCH):
        claims = await asyncio.gather(
            *(
                client.create(kinds.RESOURCE_CLAIMS_V1, allocated_claim(wl, i), NAMESPACE)
                for i in range(start, min(count, start + _BATCH))
            )
        )
        for claim in claims:
            result: list[Any] | None = None
            while node < len(nodes):
                alloc = Allocator(classes=classes, slices=index, allocated=allocated)
                result = alloc.allocate(nodes[node], [claim])
                if result is not None:
                    break
                node += 1
            if result is None:
                raise SteadyStateError(
                    f"claim {claim['metadata']['name']} does not fit: {count} claims for "
                    f"{len(slices)} slices"
                )
            allocated.add(result[0])
            claim.setdefault("status", {})["allocation"] = result[0]
        await asyncio.gather(
            *(client.update(kinds.RESOURCE_CLAIMS_V1, c, subresource="status") for c in claims)
        )


async def measured_phase(
    plane: ControlPlane, client: Client, observer: PodObserver, config: RunConfig
) -> RunResult:
    """Keep `steady_pods` pods in the scheduler's way for `steady_seconds`; the figures."""
    wl = config.workload
    attempts_before = counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result")
    durations_before = HistogramSnapshot.take(plane.metrics, name=ATTEMPT_DURATION_METRIC)
    plane.registry.audit.reset()
    start = Snapshot.take(plane.storage)
    loop = asyncio.get_running_loop()
    began = loop.time()
    deadline = began + wl.steady_seconds
    # A slow machine may bind none of the replacements within the window: it then stays open
    # until one is bound (the figures are about reusing freed devices), or a stall timeout.
    give_up = deadline + config.timeouts.stall
    closed = False
    waiting: set[str] = set()
    tasks: set[asyncio.Task[None]] = set()
    created = 0

    async def create(name: str) -> None:
        await client.create(kinds.PODS, pod(wl, name=name, phase="measured"), NAMESPACE)
        observer.mark_created(name)

    async def replace_pod(name: str) -> None:
        await client.delete(kinds.PODS, name, NAMESPACE, grace_period_seconds=0)
        if not closed:
            await new_pod()

    async def new_pod() -> None:
        nonlocal created
        name = f"measured-{created:05d}"
        created += 1
        waiting.add(name)
        await create(name)

    def spawn(coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    for _ in range(wl.steady_pods):
        spawn(new_pod())

    def bound() -> int:
        return sum(
            1 for t in observer.pods.values() if t.phase == "measured" and t.bound is not None
        )

    while (now := loop.time()) < deadline or (bound() <= wl.steady_pods and now < give_up):
        for name in [n for n in waiting if (t := observer.pods.get(n)) and t.bound is not None]:
            waiting.discard(name)
            spawn(replace_pod(name))
        await observer.changed(timeout=min(0.25, deadline - now) if now < deadline else 0.25)
    closed = True
    window = loop.time() - began
    end = Snapshot.take(plane.storage)
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    scheduled = bound()
    result = build_result(
        config=replace(config, workload=replace(wl, measured_pods=max(1, scheduled))),
        observer=observer,
        start=start,
        end=end,
        attempts=counter_by_label(plane.metrics, name=ATTEMPTS_METRIC, label="result"),
        attempts_before=attempts_before,
        audit=plane.registry.audit,
    )
    durations = HistogramSnapshot.take(plane.metrics, name=ATTEMPT_DURATION_METRIC)
    result.figures.update(attempt_duration_figures(after=durations, before=durations_before))
    # scheduler_perf's SchedulingThroughput over the steady window, not up to the last bind.
    result.figures["duration_s"] = round(max(window, wl.steady_seconds), 3)
    result.figures["throughput_avg"] = round(scheduled / max(window, wl.steady_seconds), 3)
    result.figures.update(
        {
            "steady_pods": wl.steady_pods,
            "steady_seconds": wl.steady_seconds,
            "allocated_claims": wl.allocated_claims,
            "created_pods": created,
        }
    )
    return result
