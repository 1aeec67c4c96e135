"""`object-memory`: bytes per stored and per cached object, for pods, nodes and claims.

One API server (`Registry` over a `MemoryStorage`, or the store `--store` names) in this
process. For each kind, `tracemalloc` measures the Python heap after `count` objects are
created through the API (the store's decoded objects, the watch cache's ring of events, the
indexes that follow the store), then after an informer in the same process has listed and
watched them (its store and indexes), then after a second informer. Figures are bytes per
object: `stored_bytes_per_<kind>`, `informer_bytes_per_<kind>` (the first informer) and
`second_informer_bytes_per_<kind>`. With the local transport an informer holds the objects the
watch cache hands out (the API server's decoded copy, shared, never mutated: every writer
deep-copies before it changes an object), so what it adds is its own index entries; over HTTP
each client decodes its own copy, as every client process of kube-apiserver does.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from draplane.api import auth, kinds, versions
from draplane.api.meta import Obj
from draplane.apiserver.registry import Registry
from draplane.bench.suite import Row, SuiteRun, SuiteWorkload
from draplane.bench.workloads import NAMESPACE, Workload, pod
from draplane.client.informer import Informer
from draplane.client.local import LocalClient
from draplane.node import _objects
from draplane.storage.memory import MemoryStorage

COUNT = 5000
CREATE_CONCURRENCY = 64
_POD_SHAPE = Workload(
    name="object-memory", nodes=1, init_pods=0, measured_pods=1, mode=versions.CLASSIC
)


def _pod(i: int) -> Obj:
    obj = pod(_POD_SHAPE, name=f"pod-{i:06d}", phase="measured")
    obj["spec"]["nodeName"] = f"node-{i % 100}"
    return obj


def _node(i: int) -> Obj:
    return _objects.node_object(f"node-{i}", index=i, now="2026-01-01T00:00:00Z")


def _claim(i: int) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{i:06d}", "namespace": NAMESPACE},
        "spec": {"resourceClassName": "example", "allocationMode": "WaitForFirstConsumer"},
    }


KINDS: tuple[tuple[str, kinds.ResourceType, Callable[[int], Obj], str], ...] = (
    ("pod", kinds.PODS, _pod, NAMESPACE),
    ("node", kinds.NODES, _node, ""),
    ("claim", kinds.RESOURCE_CLAIMS, _claim, NAMESPACE),
)


def _heap() -> int:
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    return current


async def _create_all(
    client: LocalClient, rt: kinds.ResourceType, make: Callable[[int], Obj], ns: str, count: int
) -> None:
    numbers = iter(range(count))

    async def worker() -> None:
        for i in numbers:
            await client.create(rt, make(i), ns)

    await asyncio.gather(*(worker() for _ in range(min(CREATE_CONCURRENCY, count))))


async def _start_informer(
    client: LocalClient, rt: kinds.ResourceType, count: int, tasks: list[asyncio.Task[None]]
) -> int:
    """The heap bytes one more informer of `rt` adds once it holds all `count` objects; it
    keeps running (in `tasks`) so that the next one is measured beside it."""
    before = _heap()
    informer = Informer(client, rt)
    tasks.append(asyncio.create_task(informer.run()))
    await informer.wait_synced()
    while len(informer.lister.list()) < count:
        await asyncio.sleep(0.01)
    return _heap() - before


async def measure(count: int) -> dict[str, Any]:
    storage = MemoryStorage()
    await storage.start()
    registry = Registry(storage, mode=versions.CLASSIC)
    await registry.start()
    admin = LocalClient(registry, auth.ADMIN_USER)
    await admin.create(
        kinds.NAMESPACES,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
    )
    figures: dict[str, Any] = {"objects_per_kind": count}
    tracemalloc.start()
    try:
        for label, rt, make, ns in KINDS:
            before = _heap()
            await _create_all(admin, rt, make, ns, count)
            await registry.wait_committed(storage.revision)
            figures[f"stored_bytes_per_{label}"] = round((_heap() - before) / count)
            informers: list[asyncio.Task[None]] = []
            first = await _start_informer(admin, rt, count, informers)
            second = await _start_informer(admin, rt, count, informers)
            for task in informers:
                task.cancel()
            await asyncio.gather(*informers, return_exceptions=True)
            figures[f"informer_bytes_per_{label}"] = round(first / count)
            figures[f"second_informer_bytes_per_{label}"] = round(second / count)
    finally:
        tracemalloc.stop()
        await registry.stop()
        await storage.close()
    return figures


async def run_object_memory(run: SuiteRun) -> dict[str, Any]:
    count = run.size(COUNT, floor=10) if run.pods is None else run.pods
    return await measure(count)


def _rows(run: SuiteRun) -> tuple[Row, ...]:
    rows = [Row("objects_per_kind", "objects of each kind")]
    for label, *_ in KINDS:
        rows += [
            Row(f"stored_bytes_per_{label}", f"{label}: bytes stored (store, watch cache)"),
            Row(f"informer_bytes_per_{label}", f"{label}: bytes per object, first informer"),
            Row(f"second_informer_bytes_per_{label}", f"{label}: bytes, second informer"),
        ]
    return tuple(rows)


OBJECT_MEMORY = SuiteWorkload(
    name="object-memory",
    description="tracemalloc bytes per stored and per cached pod, node and claim",
    run=run_object_memory,
    rows=_rows,
)
