"""The etcd store alone (no API server): N concurrent writers creating ~2.5 KB pods on a fresh
local single-member etcd (fsync on). Not a test; run as

    python tests/storage/bench_etcd_store.py [COUNT] [WRITERS]

Prints creates/s, this process's CPU per create and the etcd server's CPU per create.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time

from draplane.bench.apihost import sized_pod
from draplane.storage.etcd_process import EtcdCluster, cpu_seconds
from draplane.testing.etcd import etcd_store


async def run(cluster: EtcdCluster, count: int, writers: int) -> str:
    store = etcd_store(cluster.client_urls)
    await store.start()
    names = [f"p{i}" for i in range(count)]
    pid = cluster.members[0].pid
    assert pid is not None

    async def writer() -> None:
        while names:
            await store.create("pods", sized_pod(names.pop(), namespace="bench"))

    etcd0, wall0, cpu0 = cpu_seconds(pid), time.perf_counter(), time.process_time()
    await asyncio.gather(*(writer() for _ in range(writers)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    etcd = cpu_seconds(pid) - etcd0
    await store.close()
    return (
        f"{writers} writers: {count / wall:.0f} creates/s, {cpu / count * 1e6:.0f} us "
        f"client CPU per create, {etcd / count * 1e6:.0f} us etcd CPU per create"
    )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    writers = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    with tempfile.TemporaryDirectory() as tmp, EtcdCluster(tmp) as cluster:
        print(asyncio.run(run(cluster, count, writers)))


if __name__ == "__main__":
    main()
