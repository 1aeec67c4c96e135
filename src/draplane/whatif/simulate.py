"""Scheduling a forked state with the real control plane: an in-process draplane (memory store,
API server, controller-manager with the claim and workload controllers, scheduler; no kubelets
and no drivers, so the forked ResourceSlices are the only ones) is seeded with the state before
its components start, then runs until every pod is bound or has been found unschedulable and
nothing changed for a while. Pods still pending are explained (`draplane.explain`) on the
fork's final state, once per group of pods alike. The cluster the state came from is never
contacted.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

from draplane.api import meta, versions
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.controlplane import ControlPlane, ControlPlaneConfig
from draplane.explain import Report, Snapshot, explain_snapshot
from draplane.explain.snapshot import TERMINAL_PHASES
from draplane.whatif.seed import seed_state
from draplane.whatif.state import read_state


@dataclass
class Outcome:
    """The fork after scheduling."""

    state: Snapshot
    """Everything read back from the fork at the end."""
    seconds: float
    settled: bool
    """False: the timeout ran out with pods neither bound nor tried."""
    pending: list[Report] = field(default_factory=list)
    """Explanations of the pods still pending: one per group of pods alike (`shape`), at most
    `explain_limit`."""
    alike: dict[str, list[str]] = field(default_factory=dict)
    """Explained pod -> the other pending pods of its shape (the same reasons)."""
    pending_count: int = 0


def plane_config(*, queueing_hints: bool = True) -> ControlPlaneConfig:
    """An in-memory 1.36 control plane without simulated nodes or drivers."""
    return ControlPlaneConfig(
        port=0,
        nodes=0,
        drivers=[],
        store="memory",
        kubernetes_version=versions.STRUCTURED,
        queueing_hints=queueing_hints,
    )


def is_pending(pod: Obj) -> bool:
    """Not bound, not finished, not being deleted."""
    phase = meta.pod_status(pod).get("phase")
    return (
        not meta.node_name(pod)
        and phase not in TERMINAL_PHASES
        and not (meta.deletion_timestamp(pod))
    )


def shape(pod: Obj) -> str:
    """Pods of one shape (namespace and spec, as a workload's replicas) are pending for the
    same reasons, so one explanation serves them all."""
    return meta.namespace(pod) + json.dumps(pod.get("spec"), sort_keys=True)


def was_tried(pod: Obj) -> bool:
    """The scheduler found no node for it (PodScheduled False)."""
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        for c in meta.pod_status(pod).get("conditions") or ()
    )


def queue_idle(plane: ControlPlane) -> bool:
    """The scheduler has no pod to try now or after a backoff (scheduler_pending_pods)."""
    return not any(
        plane.metrics.get_sample_value("scheduler_pending_pods", {"queue": queue})
        for queue in ("active", "backoff")
    )


async def wait_settled(plane: ControlPlane, *, timeout: float, settle: float) -> bool:
    """Poll pods until every pending one was tried, the scheduler's active and backoff queues
    are empty and the bound set held still for `settle` seconds; False when `timeout` ran out
    first."""
    client = plane.client()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: tuple[int, frozenset[str]] | None = None
    since = loop.time()
    while loop.time() < deadline:
        if not queue_idle(plane):  # busy: no need to list (and slow) the scheduler
            last = None
            await asyncio.sleep(0.25)
            continue
        pods = (await client.list(PODS)).get("items") or []
        bound = frozenset(meta.namespaced_key(p) for p in pods if meta.node_name(p))
        pending = [p for p in pods if is_pending(p)]
        seen = (len(pods), bound)
        if seen != last:
            last, since = seen, loop.time()
        elif (
            loop.time() - since >= settle
            and all(was_tried(p) for p in pending)
            and queue_idle(plane)
        ):
            return True
        await asyncio.sleep(0.2)
    return False


async def simulate(
    state: Snapshot,
    *,
    timeout: float = 300.0,
    settle: float = 2.0,
    explain_limit: int = 20,
    queueing_hints: bool = True,
) -> Outcome:
    """Seed a fresh control plane with `state`, let it schedule, read the result back."""
    started = time.monotonic()
    plane = ControlPlane(plane_config(queueing_hints=queueing_hints))
    try:

        async def seed(client: Client) -> None:
            await seed_state(client, state)

        await plane.start(seed=seed)
        client = plane.client()
        settled = await wait_settled(plane, timeout=timeout, settle=settle)
        final = await read_state(client)
        pending = [p for _, p in sorted(final.kind(PODS).items()) if is_pending(p)]
        outcome = Outcome(
            state=final,
            seconds=time.monotonic() - started,
            settled=settled,
            pending_count=len(pending),
        )
        alike: dict[str, list[Obj]] = {}
        for pod in pending:
            alike.setdefault(shape(pod), []).append(pod)
        for pods in list(alike.values())[:explain_limit]:
            report = explain_snapshot(client, final, pods[0], fixes=False)
            outcome.pending.append(report)
            outcome.alike[report.pod] = [meta.namespaced_key(p) for p in pods[1:]]
        return outcome
    finally:
        await plane.stop()
