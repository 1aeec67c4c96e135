"""`api-create`: how fast one client creates ~2 KB pods, one create at a time (sequential) and
with N concurrent writers, via LocalClient and over HTTPS (RESTClient, keep-alive), against a
fresh API server on the chosen store. Over HTTP the concurrent client also runs in its own
process (as a real client would), leaving the API server's process to itself.
The targets: >= 3,000/s local, >= 1,000/s HTTP.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from draplane.api import errors, kinds
from draplane.api.meta import Obj, deep_copy
from draplane.bench.apihost import ApiHost, Transport, sized_pod
from draplane.bench.stats import percentile
from draplane.bench.suite import Row, SuiteRun, SuiteWorkload
from draplane.client.interface import Client
from draplane.storage.etcd_local import etcd_cpu

NAMESPACE = "bench-create"
FULL_OBJECTS = 5000
"""Creates per mode at full scale."""
WRITERS = 50
WARMUP = 100
"""Creates before each mode's clock starts (connections, caches), not counted."""
LOCAL_TARGET = 3000.0
HTTP_TARGET = 1000.0
MODES: dict[Transport, tuple[str, ...]] = {
    "local": ("sequential", "concurrent"),
    "http": ("sequential", "concurrent", "process"),
}
"""process: concurrent writers in a separate client process."""


async def create_all(
    client: Client,
    share_out: list[Obj],
    *,
    writers: int,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[float, list[float]]:
    """Creates every object from `writers` concurrent tasks; seconds in all, and each create's
    latency in seconds."""
    latencies: list[float] = []

    async def writer(share: list[Obj]) -> None:
        for obj in share:
            started = time.perf_counter()
            await client.create(kinds.PODS, obj, NAMESPACE)
            latencies.append(time.perf_counter() - started)
            if on_progress is not None and len(latencies) % 250 == 0:
                on_progress(len(latencies))

    started = time.perf_counter()
    await asyncio.gather(*(writer(share_out[i::writers]) for i in range(writers)))
    return time.perf_counter() - started, latencies


def objects(prefix: str, count: int) -> list[Obj]:
    template = sized_pod("x", namespace=NAMESPACE)
    out = []
    for i in range(count):
        obj = deep_copy(template)
        obj["metadata"]["name"] = f"{prefix}-{i:06d}"
        out.append(obj)
    return out


async def _in_process(
    host: ApiHost, *, transport: Transport, prefix: str, count: int, writers: int, run: SuiteRun
) -> tuple[float, list[float]]:
    client = host.client(transport)
    await create_all(client, objects(f"warm-{prefix}", WARMUP), writers=writers)
    return await create_all(
        client, objects(prefix, count), writers=writers, on_progress=run.progress.update
    )


async def _client_process(host: ApiHost, *, prefix: str, count: int) -> tuple[float, list[float]]:
    """The concurrent HTTP client in a child process (it warms up with 2 * WRITERS creates)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "draplane.bench.createclient",
        "--kubeconfig", str(host.apiserver.kubeconfig_path), "--prefix", prefix,
        "--count", str(count), "--writers", str(WRITERS),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await child.communicate()
    if child.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:]
        raise errors.internal(f"the api-create client process failed: {tail}")
    result = orjson.loads(out)
    return float(result["seconds"]), [float(x) for x in result["latencies"]]


async def _mode(
    host: ApiHost, *, transport: Transport, mode: str, count: int, run: SuiteRun
) -> dict[str, Any]:
    writers = 1 if mode == "sequential" else WRITERS
    label, prefix = f"{transport}_{mode}", f"{transport}-{mode}"
    where = ", client process" if mode == "process" else ""
    plural = "s" if writers > 1 else ""
    run.progress.phase(f"api-create {transport} ({writers} writer{plural}{where})", count)
    if mode == "process":
        seconds, latencies = await _client_process(host, prefix=prefix, count=count)
    else:
        seconds, latencies = await _in_process(
            host, transport=transport, prefix=prefix, count=count, writers=writers, run=run
        )
    run.progress.update(count)
    return {
        f"creates_per_s_{label}": round(count / seconds, 1),
        f"create_latency_p50_ms_{label}": round(1000 * percentile(latencies, 50), 3),
        f"create_latency_p99_ms_{label}": round(1000 * percentile(latencies, 99), 3),
    }


async def run_api_create(run: SuiteRun) -> dict[str, Any]:
    count = run.size(FULL_OBJECTS)
    figures: dict[str, Any] = {"objects_per_mode": count, "writers": WRITERS}
    async with ApiHost(store=run.store, mode=run.kubernetes_version) as host:
        etcd_before = etcd_cpu(host.storage)
        admin = host.client("local")
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        await admin.create(kinds.NAMESPACES, namespace)
        probe = await admin.create(kinds.PODS, sized_pod("probe", namespace=NAMESPACE), NAMESPACE)
        figures["object_bytes"] = len(orjson.dumps(probe))
        expected = 0
        for transport in run.transports:
            for mode in MODES[transport]:
                figures.update(
                    await _mode(host, transport=transport, mode=mode, count=count, run=run)
                )
                expected += count + (2 * WRITERS if mode == "process" else WARMUP)
        listed = await admin.list(kinds.PODS, NAMESPACE)
        figures["created_objects"] = len(listed.get("items") or []) - 1
        figures["expected_objects"] = expected
        etcd_after = etcd_cpu(host.storage)
        if etcd_before is not None and etcd_after is not None:
            figures["etcd_cpu_s_per_create"] = round((etcd_after - etcd_before) / expected, 6)
    return figures


def _rows(run: SuiteRun) -> tuple[Row, ...]:
    rows = [Row("objects_per_mode", "creates per mode"), Row("object_bytes", "object size (B)")]
    for transport in run.transports:
        target = LOCAL_TARGET if transport == "local" else HTTP_TARGET
        for mode in MODES[transport]:
            label = f"{transport}_{mode}"
            writers = "1 writer" if mode == "sequential" else f"{WRITERS} writers"
            where = ", client process" if mode == "process" else ""
            rows.append(
                Row(
                    f"creates_per_s_{label}",
                    f"creates/s {transport}, {writers}{where}",
                    at_least=target,
                )
            )
            rows.append(Row(f"create_latency_p99_ms_{label}", f"  create p99 (ms) {transport}"))
    rows.append(Row("created_objects", "objects created (incl. warm-up)"))
    if run.store == "etcd":
        rows.append(Row("etcd_cpu_s_per_create", "etcd server CPU s per create"))
    return tuple(rows)


API_CREATE = SuiteWorkload(
    name="api-create",
    description="single-client create rate of ~2 KB pods, local and HTTP",
    run=run_api_create,
    rows=_rows,
    default_transports=("local", "http"),
)
