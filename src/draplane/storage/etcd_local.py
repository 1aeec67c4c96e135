"""`LocalEtcdStorage`: an `EtcdStorage` on a single-member etcd this process runs itself
(`draplane up --store etcd` without `--etcd-servers`), data in `<data dir>/etcd`, log in
`<data dir>/etcd/etcd-0.log`, on free ports kept across restarts; stopped when the store closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_process import EtcdCluster, cpu_seconds, free_port
from draplane.storage.etcd_rpc import EtcdConfig
from draplane.storage.interface import StoreError

PORTS_FILE = "ports.json"


def _ports(base: str) -> tuple[int, int]:
    path = os.path.join(base, PORTS_FILE)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        with open(path) as f:
            saved = json.load(f)
        return int(saved["client"]), int(saved["peer"])
    ports = free_port(), free_port()
    os.makedirs(base, mode=0o700, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"client": ports[0], "peer": ports[1]}, f)
    return ports


class LocalEtcdStorage(EtcdStorage):
    def __init__(self, data_dir: str, *, prefix: str = "/registry", **kwargs: Any) -> None:
        base = os.path.join(data_dir, "etcd")
        self.cluster = EtcdCluster(base)
        member = self.cluster.members[0]
        member.client_port, member.peer_port = _ports(base)
        member.initial_cluster = f"{member.name}={member.peer_url}"
        super().__init__(EtcdConfig((member.client_url,), prefix=prefix), **kwargs)

    async def start(self) -> None:
        try:
            await asyncio.to_thread(self.cluster.start)
        except (OSError, RuntimeError, TimeoutError) as exc:
            raise StoreError(f"cannot start etcd: {exc}") from exc
        try:
            await super().start()
        except BaseException:
            await asyncio.to_thread(self.cluster.stop)
            raise

    async def close(self) -> None:
        await super().close()
        await asyncio.to_thread(self.cluster.stop)


def etcd_cpu(storage: object) -> float | None:
    """CPU seconds the local etcd process of `storage` used so far (None for another store)."""
    if not isinstance(storage, LocalEtcdStorage):
        return None
    pid = storage.cluster.members[0].pid
    return None if pid is None else cpu_seconds(pid)
