"""Scheduler CPU per pod of DynamicResources' structured mode: `python -m
draplane.bench.structuredcycle [--pods P] [--nodes N] [--devices D] [--all-nodes] [--profile]`.

The cluster of `structuredalloc` (N nodes, default 500, one ResourceSlice of D devices each,
default 8) and pods with one template-generated claim each (one request, one CEL selector). Each
pod runs the plugin's whole scheduling cycle: PreEnqueue, PreFilter (allocated state, one
Allocator), Filter on the nodes the scheduler would try (numFeasibleNodesToFind of N, or every
node with `--all-nodes`), Reserve (in-flight allocation) and PreBind (finalizer and status writes
to an in-memory claim store, assumed); the informer then catches up. Allocations accumulate, so
later pods see fuller nodes. CPU time of the process (time.process_time).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from draplane import eventloop
from draplane.bench.structuredalloc import CLASS, claim, cluster
from draplane.scheduler.algorithm import num_feasible_nodes_to_find
from draplane.scheduler.framework import CycleState, NodeInfo, PodInfo
from draplane.scheduler.plugins.dynamicresources import StructuredDynamicResources
from draplane.testing.claimstore import ClaimStore, structured_handle


def _pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"pod-{i}-uid"},
        "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]},
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"claim-{i}"}]},
    }


def _claim(i: int) -> dict[str, Any]:
    c = claim(i)
    c["metadata"]["uid"] = f"claim-{i}-uid"
    c["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": f"pod-{i}", "uid": f"pod-{i}-uid"}
        | {"controller": True}
    ]
    return c


async def run(nodes: int, devices: int, pods: int, all_nodes: bool) -> dict[str, float]:
    node_objs, slices = cluster(nodes, devices)
    for node_obj in node_objs:
        node_obj.setdefault("status", {})["allocatable"] = {
            "cpu": "64",
            "memory": "256Gi",
            "pods": "110",
        }
    store = ClaimStore([_claim(i) for i in range(pods)])
    plugin = StructuredDynamicResources(structured_handle(store, classes=[CLASS], slices=slices))
    infos = [NodeInfo(n) for n in node_objs]
    wanted = nodes if all_nodes else num_feasible_nodes_to_find(nodes)
    per_pod: list[float] = []
    scheduled = 0
    filtered = 0
    for i in range(pods):
        start = time.process_time()
        info = PodInfo(_pod(i))
        state = CycleState()
        assert plugin.pre_enqueue(info.pod).is_success
        assert plugin.pre_filter(state, info).is_success
        feasible: list[str] = []
        for n in infos:
            filtered += 1
            if plugin.filter(state, info, n).is_success:
                feasible.append(n.name)
                if len(feasible) >= wanted:
                    break
        if feasible:
            node = feasible[i % len(feasible)]
            assert (await plugin.reserve(state, info, node)).is_success
            assert (await plugin.pre_bind(state, info, node)).is_success
            scheduled += 1
        per_pod.append(time.process_time() - start)
        store.sync()
    warm = per_pod[1:] or per_pod
    return {
        "nodes": nodes,
        "devices_per_node": devices,
        "pods": pods,
        "scheduled": scheduled,
        "filter_calls_per_pod": filtered / pods,
        "cold_pod_s": per_pod[0],
        "pod_median_s": statistics.median(warm),
        "pod_mean_s": statistics.fmean(warm),
        "last_pod_s": per_pod[-1],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--pods", type=int, default=50)
    ap.add_argument(
        "--all-nodes", action="store_true", help="Filter every node, not numFeasibleNodesToFind"
    )
    ap.add_argument("--profile", action="store_true", help="pyinstrument profile of the run")
    args = ap.parse_args(argv)
    profiler: Any = None
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    result = eventloop.run(run(args.nodes, args.devices, args.pods, args.all_nodes))
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    for k, v in result.items():
        print(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
