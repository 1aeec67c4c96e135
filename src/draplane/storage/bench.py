"""Storage write throughput: `python -m draplane.storage.bench [--writers 50] [--count 20000]`.

Creates `count` objects of about `--size` bytes from `--writers` concurrent tasks against a fresh
store ("memory", "sqlite" in a temporary directory, or a factory spec) and prints creates/s.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

from draplane import eventloop
from draplane.api.kinds import PODS
from draplane.api.meta import Obj
from draplane.storage.factory import open_storage


def _object(index: int, size: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{index:07d}", "namespace": "default", "uid": f"uid-{index}"},
        "spec": {"padding": "x" * max(0, size - 150)},
    }


async def run(*, spec: str, data_dir: str, writers: int, count: int, size: int) -> float:
    """Returns creates per second."""
    store = open_storage(spec, data_dir)
    await store.start()
    objects = [_object(i, size) for i in range(count)]

    async def writer(offset: int) -> None:
        for obj in objects[offset::writers]:
            await store.create(PODS.key, obj)

    try:
        started = time.perf_counter()
        await asyncio.gather(*(writer(w) for w in range(writers)))
        elapsed = time.perf_counter() - started
    finally:
        await store.close()
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default="sqlite")
    parser.add_argument("--writers", type=int, default=50)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=2048)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        rate = eventloop.run(
            run(
                spec=args.store,
                data_dir=data_dir,
                writers=args.writers,
                count=args.count,
                size=args.size,
            )
        )
    label = f"{args.store}: {args.count} creates of ~{args.size} B, {args.writers} writers"
    print(f"{label}: {rate:,.0f}/s")


if __name__ == "__main__":
    main()
