"""`python -m draplane.bench.httpcost MODE`: process CPU per request on each side of the HTTPS
API, the server in this process and the RESTClient in a child process, against the same
request through LocalClient in one process.

MODE is `create` (~2 KB pods from W concurrent writers), `get` (W concurrent readers of 20
pods), `update` (PUT of N pods created before, W at once), `patch` (a merge patch of a label on
each of N pods), `status` (a merge patch of pods/status on each of N pods), `watch` (W
watchers, each its own RESTClient and connection, receiving N creates made locally in the
server's process) or `informer` (as watch, but each watcher is an Informer with one add
handler: decode, store and dispatch per event). Prints one JSON line: CPU ms per request (per
delivery for watch and informer) on the server and the client, and in-process for
`--transport local`. Wall-clock time is printed too but means little on a shared machine; the
CPU figures are the measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import orjson

from draplane import eventloop, gcpolicy
from draplane.api import kinds
from draplane.api.handler import WatchStream
from draplane.api.meta import Obj, deep_copy
from draplane.bench.apihost import ApiHost, sized_pod
from draplane.bench.clientprocess import ClientProcess
from draplane.client.informer import Informer
from draplane.client.interface import Client
from draplane.client.rest import RESTClient

NAMESPACE = "httpcost"
WARMUP = 100
READ_OBJECTS = 20


def _pods(prefix: str, count: int) -> list[Obj]:
    template = sized_pod("x", namespace=NAMESPACE)
    out = []
    for i in range(count):
        obj = deep_copy(template)
        obj["metadata"]["name"] = f"{prefix}-{i}"
        out.append(obj)
    return out


async def _create(client: Client, objs: list[Obj], writers: int) -> None:
    async def writer(share: list[Obj]) -> None:
        for obj in share:
            await client.create(kinds.PODS, obj, NAMESPACE)

    await asyncio.gather(*(writer(objs[i::writers]) for i in range(writers)))


async def _get(client: Client, count: int, readers: int) -> None:
    async def reader(k: int) -> None:
        for i in range(count // readers):
            await client.get(kinds.PODS, f"read-{(i + k) % READ_OBJECTS}", NAMESPACE)

    await asyncio.gather(*(reader(k) for k in range(readers)))


async def _written(client: Client, prefix: str, count: int) -> list[Obj]:
    """`count` pods created before the measured writes (the objects the server returned)."""
    return [await client.create(kinds.PODS, obj, NAMESPACE) for obj in _pods(prefix, count)]


async def _rewrite(client: Client, mode: str, objs: list[Obj], writers: int) -> None:
    """One PUT (update) or merge PATCH (patch) of a label, or a merge PATCH of pods/status
    (status), on each of `objs`."""

    async def writer(share: list[Obj]) -> None:
        for obj in share:
            if mode == "update":
                changed = deep_copy(obj)
                changed["metadata"]["labels"]["bench.draplane.io/step"] = "1"
                await client.update(kinds.PODS, changed)
            elif mode == "status":
                status = {"status": {"message": "step 1"}}
                name = obj["metadata"]["name"]
                await client.patch(kinds.PODS, name, status, NAMESPACE, subresource="status")
            else:
                name = obj["metadata"]["name"]
                labels = {"metadata": {"labels": {"bench.draplane.io/step": "1"}}}
                await client.patch(kinds.PODS, name, labels, NAMESPACE)

    await asyncio.gather(*(writer(objs[i::writers]) for i in range(writers)))


async def _informed(client: Client, count: int) -> asyncio.Future[None]:
    """An Informer on the namespace's pods, synced; the future ends after `count` adds."""
    informer = Informer(client, kinds.PODS, namespace=NAMESPACE)
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    got = [0]

    def on_add(obj: Obj) -> None:
        got[0] += 1
        if got[0] >= count and not done.done():
            done.set_result(None)

    informer.add_handler(on_add=on_add)
    task = asyncio.ensure_future(informer.run())
    await informer.wait_synced()
    done.add_done_callback(lambda _: task.cancel())
    return done


async def _receive(stream: WatchStream, count: int) -> None:
    got = 0
    async for event in stream:
        if event.type == "ADDED":
            got += 1
            if got >= count:
                return


async def _child(kubeconfig: str, mode: str, count: int, writers: int) -> None:
    """The HTTP side: waits for "go" (create, get) or for the events (watch); prints its CPU."""
    client = RESTClient.from_kubeconfig(kubeconfig)
    extra: list[RESTClient] = []
    written: list[Obj] = []
    receivers: list[asyncio.Future[None]] = []
    if mode == "create":
        await _create(client, _pods("warm", WARMUP), writers)
    elif mode == "get":
        await _create(client, _pods("read", READ_OBJECTS), 1)
    elif mode in ("update", "patch", "status"):
        await _rewrite(client, mode, await _written(client, "warm", WARMUP), writers)
        written = await _written(client, "u", count)
    else:
        extra = [RESTClient.from_kubeconfig(kubeconfig) for _ in range(writers)]
        if mode == "watch":
            streams = [await c.watch(kinds.PODS, NAMESPACE) for c in extra]
            receivers = [asyncio.ensure_future(_receive(s, count)) for s in streams]
        else:
            receivers = [await _informed(c, count) for c in extra]
    print("READY", flush=True)
    started = time.process_time()
    if receivers:
        await asyncio.gather(*receivers)
    else:
        await asyncio.to_thread(sys.stdin.readline)
        started = time.process_time()
        if mode == "create":
            await _create(client, _pods("c", count), writers)
        elif mode == "get":
            await _get(client, count, writers)
        else:
            await _rewrite(client, mode, written, writers)
    cpu = time.process_time() - started
    for c in [client, *extra]:
        await c.close()
    print(f"CPU {cpu}", flush=True)


async def _local(host: ApiHost, mode: str, count: int, writers: int) -> dict[str, Any]:
    client = host.client("local")
    if mode == "get":
        await _create(client, _pods("read", READ_OBJECTS), 1)
    written = await _written(client, "u", count) if mode in ("update", "patch", "status") else []
    receivers: list[asyncio.Future[None]] = []
    if mode == "watch":
        streams = [await host.client("local").watch(kinds.PODS, NAMESPACE) for _ in range(writers)]
        receivers = [asyncio.ensure_future(_receive(s, count)) for s in streams]
    elif mode == "informer":
        receivers = [await _informed(host.client("local"), count) for _ in range(writers)]
    started = time.process_time()
    if mode == "create":
        await _create(client, _pods("c", count), writers)
    elif mode == "get":
        await _get(client, count, writers)
    elif written:
        await _rewrite(client, mode, written, writers)
    else:
        for obj in _pods("w", count):
            await client.create(kinds.PODS, obj, NAMESPACE)
        await asyncio.gather(*receivers)
    cpu = time.process_time() - started
    n = count * writers if mode in ("watch", "informer") else count
    return {"in_process_ms_per_op": round(cpu / n * 1000, 4)}


async def _http(host: ApiHost, mode: str, count: int, writers: int) -> dict[str, Any]:
    child = await ClientProcess.start(
        "draplane.bench.httpcost", "--child", str(host.apiserver.kubeconfig_path), mode,
        "--count", str(count), "--concurrency", str(writers),
    )  # fmt: skip
    started, wall = time.process_time(), time.perf_counter()
    if mode in ("watch", "informer"):
        admin = host.client("local")
        for obj in _pods("w", count):
            await admin.create(kinds.PODS, obj, NAMESPACE)
            await asyncio.sleep(0.002)
    else:
        await child.go()
    client_cpu = await child.cpu_seconds()
    server_cpu = time.process_time() - started
    n = count * writers if mode in ("watch", "informer") else count
    return {
        "server_ms_per_op": round(server_cpu / n * 1000, 4),
        "client_ms_per_op": round(client_cpu / n * 1000, 4),
        "wall_s": round(time.perf_counter() - wall, 2),
    }


async def _main(args: argparse.Namespace) -> None:
    async with ApiHost(store=args.store) as host:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        await host.client("local").create(kinds.NAMESPACES, namespace)
        run = _local if args.transport == "local" else _http
        figures = await run(host, args.mode, args.count, args.concurrency)
    head = {"mode": args.mode, "transport": args.transport, "count": args.count}
    print(orjson.dumps({**head, "concurrency": args.concurrency, **figures}).decode())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m draplane.bench.httpcost")
    parser.add_argument("--child", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    parser.add_argument(
        "mode", choices=("create", "get", "update", "patch", "status", "watch", "informer")
    )
    parser.add_argument("--transport", choices=("http", "local"), default="http")
    parser.add_argument("--count", type=int, default=2000, help="requests (watch: events)")
    parser.add_argument("--concurrency", type=int, default=10, help="writers/readers/watchers")
    parser.add_argument("--store", default="memory", help="as `draplane bench --store`")
    args = parser.parse_args(argv)
    # As every draplane command (the components included) sets it at start.
    gcpolicy.configure()
    if args.child:
        eventloop.run(_child(args.child, args.mode, args.count, args.concurrency))
    else:
        eventloop.run(_main(args))


if __name__ == "__main__":
    main()
