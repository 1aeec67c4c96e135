"""The phases both benchmark runs share (in-process, `runner`, and over processes,
`processrun`): the namespace and claim templates, a phase's pods created all at once, and the
wait for their trailing writes."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from draplane.api import errors, kinds
from draplane.bench.observer import BenchTimeout, PodObserver
from draplane.bench.runconfig import BenchError, RunConfig
from draplane.bench.workloads import NAMESPACE, Workload, claim_template, pod, pod_names
from draplane.client.interface import Client

log = logging.getLogger(__name__)


async def create_fixtures(client: Client, wl: Workload) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    with contextlib.suppress(errors.StatusError):
        await client.create(kinds.NAMESPACES, namespace)
    for template in wl.templates:
        await client.create(
            wl.mode.claim_templates, claim_template(template, mode=wl.mode), NAMESPACE
        )


async def create_pods(
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


async def settle(
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
    if (
        not config.workload.templates
        or kinds.POD_SCHEDULING_CONTEXTS not in config.workload.mode.served
    ):
        return  # only classic DRA has PodSchedulingContexts
    while loop.time() < deadline:
        listed = await client.list(kinds.POD_SCHEDULING_CONTEXTS, NAMESPACE, limit=1)
        if not listed.get("items"):
            return
        await asyncio.sleep(0.05)
    log.warning("%s: PodSchedulingContexts still present after settling", phase)
