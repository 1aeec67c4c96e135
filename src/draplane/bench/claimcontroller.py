"""`claim-controller`: how fast the controller-manager turns template pods into ResourceClaims
with their names recorded in pod status. The pods are created first, with no controller
running; then only the controller-manager starts, and the clock runs from its start (informer
sync included) until a pod watch has seen every pod's claim recorded. The targets:
>= 500 pods/s for 2,000 pods, 2 API writes per pod (claim create + pod status).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from prometheus_client import CollectorRegistry

from draplane.api import auth, errors, kinds, versions
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver.audit import Audit
from draplane.bench.apihost import ApiHost, Transport
from draplane.bench.observer import BenchTimeout
from draplane.bench.suite import Row, SuiteRun, SuiteWorkload
from draplane.bench.workloads import (
    ClaimTemplate,
    Workload,
    claim_template,
    in_mode,
    pod,
)
from draplane.client.interface import Client
from draplane.controllers.manager import ControllerManager

NAMESPACE = "bench"
FULL_PODS = 2000
CREATE_WRITERS = 50
TARGET_PODS_PER_S = 500.0
TARGET_WRITES = 2.0
TIMEOUT_BASE = 60.0
TIMEOUT_PER_POD = 0.1
SHAPE = Workload(
    name="claim-controller",
    nodes=0,
    init_pods=0,
    measured_pods=FULL_PODS,
    mode=versions.CLASSIC,
    templates=(ClaimTemplate("test-claim-template", "example", ("resource",)),),
)


def recorded(pod_obj: Obj) -> bool:
    """Every pod claim has a status entry naming its ResourceClaim."""
    claims = (pod_obj.get("spec") or {}).get("resourceClaims") or []
    statuses = (pod_obj.get("status") or {}).get("resourceClaimStatuses") or []
    named = {s.get("name") for s in statuses if s.get("resourceClaimName")}
    return bool(claims) and all(c.get("name") in named for c in claims)


async def _watch_recorded(
    client: Client, *, expected: int, done: set[str], ready: asyncio.Event
) -> None:
    """Adds to `done` each pod whose claims are recorded; returns when `expected` are.
    Sets `ready` once listed and watching."""
    listed = await client.list(kinds.PODS, NAMESPACE)
    done.update(p["metadata"]["name"] for p in listed.get("items") or [] if recorded(p))
    stream = await client.watch(
        kinds.PODS, NAMESPACE, resource_version=listed["metadata"]["resourceVersion"]
    )
    ready.set()
    try:
        async for event in stream:
            if len(done) >= expected:
                return
            if event.type in ("ADDED", "MODIFIED") and recorded(event.object):
                done.add(event.object["metadata"]["name"])
                if len(done) >= expected:
                    return
    finally:
        await stream.close()


async def _create_pods(client: Client, wl: Workload, count: int) -> None:
    template = claim_template(wl.templates[0], mode=wl.mode)
    await client.create(wl.mode.claim_templates, template, NAMESPACE)
    objects = [pod(wl, name=f"pod-{i:05d}", phase="measured") for i in range(count)]

    async def writer(share: list[Obj]) -> None:
        for obj in share:
            await client.create(kinds.PODS, obj, NAMESPACE)

    await asyncio.gather(*(writer(objects[i::CREATE_WRITERS]) for i in range(CREATE_WRITERS)))


async def _wait_synced(manager: ControllerManager, started: float) -> float:
    while not manager.has_synced():
        await asyncio.sleep(0.005)
    return time.perf_counter() - started


async def _settle(audit: Audit, *, quiet: float = 0.3, limit: float = 5.0) -> None:
    """Until no write landed for `quiet` seconds (bounded): trailing writes get counted."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    last = -1
    while loop.time() < deadline:
        total = sum(audit.writes.values())
        if total == last:
            return
        last = total
        await asyncio.sleep(quiet)


def _write_figures(audit: Audit, *, pods: int) -> dict[str, Any]:
    writes = {f"{verb} {res}": n for (verb, res), n in sorted(audit.writes.items())}
    return {
        "writes_per_pod": round(sum(writes.values()) / pods, 3),
        "writes_by_resource_verb": {k: round(n / pods, 3) for k, n in writes.items()},
        "conflicts": int(sum(audit.conflicts.values())),
    }


async def _measure(host: ApiHost, transport: Transport, *, pods: int, run: SuiteRun) -> Obj:
    manager = ControllerManager(
        host.client(transport, UserInfo(auth.CONTROLLER_MANAGER)),
        client_for=lambda name: host.client(transport, auth.controller_user(name)),
        metrics=CollectorRegistry(),
        mode=host.registry.kinds.mode,
    )
    done: set[str] = set()
    ready = asyncio.Event()
    observer = asyncio.create_task(
        _watch_recorded(host.client("local"), expected=pods, done=done, ready=ready)
    )
    await asyncio.wait_for(ready.wait(), timeout=TIMEOUT_BASE)
    host.registry.audit.reset()
    cpu, started = time.process_time(), time.perf_counter()
    running = asyncio.create_task(manager.run(), name="controller-manager")
    try:
        sync_s = await _wait_synced(manager, started)
        await _await_done(observer, running, done=done, pods=pods, run=run)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        await _settle(host.registry.audit)
    finally:
        for task in (observer, running):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    return {
        "seconds": round(elapsed, 4),
        "informer_sync_s": round(sync_s, 4),
        "pods_per_s": round(pods / elapsed, 1),
        "pods_per_s_after_sync": round(pods / max(elapsed - sync_s, 1e-9), 1),
        "recorded_pods": len(done),
        "cpu_s_per_pod": round(cpu / pods, 6),
        **_write_figures(host.registry.audit, pods=pods),
    }


async def _await_done(
    observer: asyncio.Task[None], running: asyncio.Task[None], *, done: set[str], pods: int,
    run: SuiteRun,
) -> None:  # fmt: skip
    timeout = TIMEOUT_BASE + TIMEOUT_PER_POD * pods
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not observer.done():
        if running.done():
            raise BenchTimeout("the controller-manager stopped") from running.exception()
        if loop.time() > deadline:
            raise BenchTimeout(f"only {len(done)} of {pods} pods recorded within {timeout:.0f} s")
        run.progress.update(len(done))
        await asyncio.wait([observer], timeout=0.1)
    observer.result()
    run.progress.update(len(done))


async def run_claim_controller(run: SuiteRun) -> dict[str, Any]:
    pods = run.size(FULL_PODS)
    transport = run.transports[0]
    async with ApiHost(store=run.store, mode=run.kubernetes_version) as host:
        admin = host.client("local")
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        await admin.create(kinds.NAMESPACES, namespace)
        # The service account controller would create these during the measurement.
        for ns in (NAMESPACE, "default", "kube-system", "kube-public", "kube-node-lease"):
            account = {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "default"},
            }
            with contextlib.suppress(errors.StatusError):
                await admin.create(kinds.SERVICE_ACCOUNTS, account, ns)
        run.progress.phase(f"claim-controller: create {pods} pods (no controller)", 1)
        await _create_pods(admin, in_mode(SHAPE, run.kubernetes_version), pods)
        run.progress.update(1)
        run.progress.phase(f"claim-controller ({transport}): pods with claims recorded", pods)
        figures = await _measure(host, transport, pods=pods, run=run)
        claims = await admin.list(run.kubernetes_version.resource_claims, NAMESPACE)
    return {"pods": pods, **figures, "claims": len(claims.get("items") or [])}


def _rows(run: SuiteRun) -> tuple[Row, ...]:
    return (
        Row("pods", "pods (one template claim each)"),
        Row("pods_per_s", "pods/s (from controller start)", at_least=TARGET_PODS_PER_S),
        Row("pods_per_s_after_sync", "pods/s after informer sync"),
        Row("informer_sync_s", "informer sync (s)"),
        Row("seconds", "total (s)"),
        Row("writes_per_pod", "API writes per pod", at_most=TARGET_WRITES),
        Row("conflicts", "409 conflicts"),
        Row("recorded_pods", "pods with claims recorded"),
        Row("claims", "ResourceClaims"),
        Row("cpu_s_per_pod", "CPU s per pod"),
    )


CLAIM_CONTROLLER = SuiteWorkload(
    name="claim-controller",
    description="claim controller: template pods to claims recorded in pod status",
    run=run_claim_controller,
    rows=_rows,
)
