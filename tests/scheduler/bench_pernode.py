"""Scheduler cost per node and per plugin for `basic`'s pods (benchmark, not a test).

    PYTHONPATH=$PWD/src .venv/bin/python tests/scheduler/bench_pernode.py [--nodes 1000]

Builds the 1.36 scheduler's default profile, a cache of `--nodes` empty nodes and one `basic`
pod, then reports thread CPU (best of 7 batches): the PreFilter plugins per attempt, each
Filter and Score plugin per node, the Score phase per node, `schedule_pod` over every node
(percentageOfNodesToScore 100) per node, and `schedule_pod` on two nodes (the fixed cost of
an attempt's algorithm).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from draplane.api import versions
from draplane.bench.workloads import WORKLOADS, pod
from draplane.client.informer import InformerFactory
from draplane.scheduler.algorithm import SchedulingAlgorithm
from draplane.scheduler.cache import SchedulerCache
from draplane.scheduler.framework import CycleState, PodInfo
from draplane.scheduler.scheduler import Scheduler
from draplane.testing.builders import make_node
from draplane.testing.cluster import start_cluster


def cpu_seconds(fn: Callable[[], object], rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(7):
        start = time.thread_time()
        for _ in range(rounds):
            fn()
        best = min(best, (time.thread_time() - start) / rounds)
    return best


async def main(nodes: int) -> None:
    cluster = await start_cluster(mode=versions.STRUCTURED)
    client = cluster.client()
    scheduler = Scheduler(
        client,
        informers=InformerFactory(client),
        metrics=CollectorRegistry(),
        mode=versions.STRUCTURED,
    )
    fw = scheduler.framework
    cache = SchedulerCache()
    for i in range(nodes):
        cache.add_node(make_node(f"node-{i:05d}").obj())
    obj = pod(WORKLOADS["basic"], name="p", phase="measured")
    obj["metadata"]["uid"] = "uid-p"
    info = PodInfo(obj)
    infos = cache.node_infos()
    state = CycleState()
    us = 1e6
    pre_filter = cpu_seconds(lambda: fw.run_pre_filter_plugins(CycleState(), info))
    print(f"PreFilter, per attempt: {pre_filter * us:.1f} us")
    fw.run_pre_filter_plugins(state, info)
    empty = cpu_seconds(lambda: [None for _ in infos])
    for name, fn in fw.filters(state):
        per = cpu_seconds(lambda fn=fn: [fn(state, info, n) for n in infos]) - empty
        print(f"Filter {name}: {per / nodes * us:.2f} us/node")
    fw.run_pre_score_plugins(state, info, infos)
    for plugin in fw.score_plugins:
        per = cpu_seconds(lambda p=plugin: [p.score(state, info, n) for n in infos]) - empty
        print(f"Score {plugin.name}: {per / nodes * us:.2f} us/node")
    per = cpu_seconds(lambda: fw.run_score_plugins(state, info, infos))
    print(f"Score phase (all plugins, weights, totals): {per / nodes * us:.2f} us/node")
    everything = SchedulingAlgorithm(framework=fw, percentage_of_nodes_to_score=100)
    per = cpu_seconds(lambda: everything.schedule_pod(CycleState(), info, infos))
    print(
        f"schedule_pod over all {nodes} nodes: {per * 1e3:.3f} ms, {per / nodes * us:.2f} us/node"
    )
    per = cpu_seconds(lambda: everything.schedule_pod(CycleState(), info, infos[:2]))
    print(f"schedule_pod on 2 nodes (fixed cost): {per * us:.1f} us")
    await cluster.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    asyncio.run(main(parser.parse_args().nodes))
