"""An in-process API for tests: the real registry over MemoryStorage, clients per user.

cluster = await start_cluster()
client = cluster.client()            # LocalClient as admin
node_client = cluster.client(node_user("node-0"))
...
await cluster.stop()

`mode=` defaults to classic DRA (`versions.CLASSIC`, 1.28), not the commands' 1.36 (`DEFAULT`):
structured tests pass `mode=versions.STRUCTURED`.
"""

from __future__ import annotations

from dataclasses import dataclass

from draplane.api import versions
from draplane.api.auth import ADMIN_USER, UserInfo
from draplane.apiserver.registry import Registry
from draplane.client.local import LocalClient
from draplane.clock import REAL_CLOCK, Clock
from draplane.storage.interface import Storage
from draplane.storage.memory import MemoryStorage


@dataclass
class Cluster:
    storage: Storage
    registry: Registry
    clock: Clock

    def client(self, user: UserInfo = ADMIN_USER) -> LocalClient:
        return LocalClient(self.registry, user)

    async def stop(self) -> None:
        await self.registry.stop()
        await self.storage.close()


async def start_cluster(
    *,
    clock: Clock = REAL_CLOCK,
    storage: Storage | None = None,
    mode: versions.Mode = versions.CLASSIC,
) -> Cluster:
    store = storage if storage is not None else MemoryStorage()
    await store.start()
    registry = Registry(store, clock=clock, mode=mode)
    await registry.start()
    return Cluster(store, registry, clock)
