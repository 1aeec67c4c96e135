"""Benchmark (not a test): how fast the resource claim controller turns template pods into
claims with recorded status, via LocalClient on memory or SQLite storage.

    .venv/bin/python tests/controllers/bench_resourceclaim.py [--pods 2000] [--store memory|sqlite]

Pods are created first; the clock runs from the controller's start (informers synced) until
every pod's status names its claim. Writes are counted per verb and resource.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from draplane.api import versions
from draplane.api.auth import CONTROLLER_MANAGER, UserInfo, controller_user
from draplane.api.kinds import PODS, RESOURCE_CLAIM_TEMPLATES
from draplane.client.informer import InformerFactory
from draplane.client.interface import Client
from draplane.controllers.context import ControllerContext
from draplane.controllers.resourceclaim import ResourceClaimController
from draplane.testing.builders import make_pod, make_template
from draplane.testing.cluster import start_cluster

WRITES = ("create", "update", "patch", "delete")


class WriteCounter:
    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.writes: Counter[str] = Counter()

    def __getattr__(self, verb: str) -> Any:
        method = getattr(self.inner, verb)
        if verb not in WRITES:
            return method

        async def call(rt: Any, *args: Any, **kw: Any) -> Any:
            sub = kw.get("subresource") or ""
            self.writes[f"{verb} {rt.resource}{'/' + sub if sub else ''}"] += 1
            return await method(rt, *args, **kw)

        return call


async def run(pods: int, store: str) -> None:
    storage = None
    with tempfile.TemporaryDirectory() as tmp:
        if store == "sqlite":
            from draplane.storage.sqlite import SqliteStorage

            storage = SqliteStorage(str(Path(tmp) / "db.sqlite"))
        cluster = await start_cluster(storage=storage)
        admin = cluster.client()
        await admin.create(RESOURCE_CLAIM_TEMPLATES, make_template("t").obj(), "default")
        for i in range(pods):
            await admin.create(PODS, make_pod(f"pod-{i}").claim_template("gpu", "t").obj())
        client = WriteCounter(cluster.client(controller_user("resource-claim-controller")))
        factory = InformerFactory(cluster.client(UserInfo(CONTROLLER_MANAGER)))
        context = ControllerContext.of(client, factory)  # type: ignore[arg-type]
        controller = ResourceClaimController(context, mode=versions.CLASSIC)
        await factory.start()
        await factory.wait_synced()
        start = time.perf_counter()
        cpu = time.process_time()
        running = asyncio.create_task(controller.run())
        lister = controller.ctx.pods
        while (
            sum(1 for p in lister.list() if (p.get("status") or {}).get("resourceClaimStatuses"))
            < pods
        ):
            await asyncio.sleep(0.02)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await factory.stop()
        await cluster.stop()
    total = sum(client.writes.values())
    print(
        f"store={store} pods={pods} seconds={elapsed:.2f} pods/s={pods / elapsed:.0f} "
        f"cpu_s={cpu:.2f} writes/pod={total / pods:.2f} writes={dict(client.writes)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    args = parser.parse_args()
    asyncio.run(run(args.pods, args.store))


if __name__ == "__main__":
    main()
