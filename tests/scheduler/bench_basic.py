"""Scheduler throughput for pods without claims on 500 nodes (benchmark, not a test).

    .venv/bin/python tests/scheduler/bench_basic.py [--nodes 500] [--pods 1000]

Prints the scheduling-cycle cost (algorithm only, no API) and the end-to-end rate through
the real API (LocalClient over memory storage): pods created up front, then the scheduler
starts and the time from its start (informer sync included) until every pod is bound.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.api.auth import SCHEDULER, UserInfo
from draplane.api.kinds import NODES, PODS
from draplane.client.informer import InformerFactory
from draplane.scheduler.algorithm import SchedulingAlgorithm
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.framework import CycleState, PodInfo
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.builders import make_node, make_pod
from draplane.testing.cluster import start_cluster


async def cycle_only(nodes: int, pods: int) -> None:
    cluster = await start_cluster()
    client = cluster.client()
    scheduler = Scheduler(
        client,
        informers=InformerFactory(client),
        metrics=CollectorRegistry(),
        mode=versions.CLASSIC,
    )
    cache = SchedulerCache()
    for i in range(nodes):
        cache.add_node(make_node(f"node-{i}").obj())
    algorithm = SchedulingAlgorithm(framework=scheduler.framework)
    infos = [PodInfo(make_pod(f"p-{i}").obj()) for i in range(pods)]
    start = time.perf_counter()
    for info in infos:
        node = algorithm.schedule_pod(CycleState(), info, cache.node_infos())
        cache.assume_pod(info, node)
    elapsed = time.perf_counter() - start
    print(
        f"scheduling cycle only: {pods} pods on {nodes} nodes: "
        f"{elapsed / pods * 1e6:.0f} us/pod, {pods / elapsed:.0f} pods/s"
    )
    await cluster.stop()


async def end_to_end(nodes: int, pods: int) -> None:
    cluster = await start_cluster()
    admin = cluster.client()
    for i in range(nodes):
        await admin.create(NODES, make_node(f"node-{i}").obj())
    for i in range(pods):
        await admin.create(PODS, make_pod(f"p-{i}").obj(), "default")
    metrics = CollectorRegistry()
    client = cluster.client(UserInfo(SCHEDULER))
    scheduler = Scheduler(
        client, informers=InformerFactory(client), metrics=metrics, mode=versions.CLASSIC
    )
    # Timed from the start, informer sync included: polling for the sync instead let the
    # clock start after most pods were already bound (the scheduler does not wait for us).
    start = time.perf_counter()
    task = asyncio.create_task(scheduler.run())
    label = {"result": "scheduled", "profile": "default-scheduler"}
    while (metrics.get_sample_value("scheduler_schedule_attempts_total", label) or 0) < pods:
        await asyncio.sleep(0.005)
    elapsed = time.perf_counter() - start
    attempts = sum(
        metrics.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": r, "profile": "default-scheduler"}
        )
        or 0
        for r in ("scheduled", "unschedulable", "error")
    )
    print(
        f"end to end (LocalClient, memory storage): {pods} pods on {nodes} nodes in "
        f"{elapsed:.2f} s: {pods / elapsed:.0f} pods/s, attempts per pod {attempts / pods:.2f}"
    )
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(cycle_only(args.nodes, args.pods))
    asyncio.run(end_to_end(args.nodes, args.pods))


if __name__ == "__main__":
    main()
