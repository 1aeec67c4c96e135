"""Structured-allocator cost per node: `python -m draplane.bench.structuredalloc [--profile]`.

A cluster of N nodes (default 500) with one ResourceSlice of D devices each (default 8, with
model/numa/driverVersion attributes and a memory capacity), one DeviceClass selecting the driver
and a typical claim (one request, one selector). For every pod it builds an `Allocator` (as
PreFilter would), calls `find()` once per node (as Filter does) and builds the results of the
first node that fits (as Reserve does for the node it is given). The first pod pays the
CEL evaluations (cold); later pods hit the per-device result cache (warm). `--allocated F` marks a
fraction of each node's devices as allocated. `--tracked` keeps the allocated devices as the
scheduler does (`AllocatedCounts`, one snapshot per pod) and gives every pod's device on one
node to it before the next pod, so each pod finds one node changed: the first-fit answers of
the others come from their fit memo (`--no-memo` turns it off to compare). Times are CPU time
of the process (time.process_time), so other load on the machine does not inflate them.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from draplane.dra.cel import Compiler, SelectorCache
from draplane.dra.structured import (
    AllocatedCounts,
    AllocatedState,
    Allocator,
    Answer,
    Features,
    SliceIndex,
)

DRIVER = "gpu.example.com"
SELECTOR = f'device.attributes["{DRIVER}"].model == "A100"'


def cluster(nodes: int, devices: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    node_objs = [
        {"metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}}}
        for i in range(nodes)
    ]
    slices = [
        {
            "metadata": {"name": f"node-{i}-{DRIVER}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": f"node-{i}",
                "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{j}",
                        "attributes": {
                            "model": {"string": "A100" if j % 2 == 0 else "H100"},
                            "numa": {"int": j // 4},
                            "driverVersion": {"version": "1.2.3"},
                        },
                        "capacity": {"memory": {"value": "80Gi"}},
                    }
                    for j in range(devices)
                ],
            },
        }
        for i in range(nodes)
    ]
    return node_objs, slices


CLASS = {
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
}


def claim(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"claim-{i}", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "allocationMode": "ExactCount",
                            "count": 1,
                            "selectors": [{"cel": {"expression": SELECTOR}}],
                        },
                    }
                ]
            }
        },
    }


def run(
    nodes: int,
    devices: int,
    pods: int,
    allocated_fraction: float,
    *,
    tracked: bool = False,
    memo: bool = True,
) -> dict[str, float]:
    node_objs, slices = cluster(nodes, devices)
    index = SliceIndex(slices)
    cache = SelectorCache(Compiler())
    features = Features()
    counts = AllocatedCounts()
    taken = int(devices * allocated_fraction)
    for i in range(nodes):
        counts.add(_allocation(i, range(taken)))
    fixed = AllocatedState(counts.snapshot().allocated_devices)
    per_pod: list[float] = []
    fits = 0
    for p in range(pods):
        start = time.process_time()
        state = counts.snapshot() if tracked else fixed
        alloc = Allocator(
            classes={"gpu": CLASS}, slices=index, allocated=state, cache=cache, features=features
        )
        alloc.fit_memo = memo
        c = [claim(p)]
        first: Answer | None = None
        for node in node_objs:
            found = alloc.find(node, c)
            if found is not None:
                fits += 1
                first = first or found
        # Reserve builds the AllocationResults of the node it was given only.
        results = None if first is None else first.results()
        per_pod.append(time.process_time() - start)
        if tracked and results is not None:
            counts.add(results[0])
    cold, warm = per_pod[0], per_pod[1:] or per_pod
    return {
        "nodes": nodes,
        "devices_per_node": devices,
        "pods": pods,
        "fits": fits,
        "cold_pod_s": cold,
        "cold_per_node_us": cold / nodes * 1e6,
        "warm_pod_median_s": statistics.median(warm),
        "warm_per_node_us": statistics.median(warm) / nodes * 1e6,
        "fit_memo_hits": index.fit_hits,
        "evaluations": cache.evaluations,
        "compilations": cache.compiler.compilations,
    }


def _allocation(node: int, devices: range) -> dict[str, Any]:
    results = [{"driver": DRIVER, "pool": f"node-{node}", "device": f"gpu-{j}"} for j in devices]
    return {"devices": {"results": results}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--pods", type=int, default=20)
    ap.add_argument("--allocated", type=float, default=0.0)
    ap.add_argument("--tracked", action="store_true", help="allocate each pod's device (see above)")
    ap.add_argument("--no-memo", action="store_true", help="without the first-fit memo")
    ap.add_argument("--profile", action="store_true", help="pyinstrument profile of the run")
    args = ap.parse_args(argv)
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    result = run(
        args.nodes,
        args.devices,
        args.pods,
        args.allocated,
        tracked=args.tracked,
        memo=not args.no_memo,
    )
    if args.profile:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    for k, v in result.items():
        print(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
