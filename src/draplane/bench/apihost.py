"""`ApiHost`: storage, registry and the HTTPS API server without any component, for the API
and controller benchmarks; clients over either transport, and the ~2 KB pod they write.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import TracebackType
from typing import Literal

import orjson

from draplane.api import auth, versions
from draplane.api.auth import UserInfo
from draplane.api.meta import Obj
from draplane.apiserver import authn
from draplane.apiserver.kubeconfig import build_kubeconfig
from draplane.apiserver.registry import Registry
from draplane.apiserver.server import ApiServer
from draplane.client.interface import Client
from draplane.client.kubeconfig import parse_kubeconfig
from draplane.client.local import LocalClient
from draplane.client.rest import RESTClient
from draplane.storage.factory import open_storage

Transport = Literal["local", "http"]
OBJECT_BYTES = 2048
"""Size of the benchmark pod as JSON on the wire (the server adds ~300 B of metadata)."""


class ApiHost:
    """Opened by `start()` (or `async with`); `stop()` closes every client it handed out."""

    def __init__(self, *, store: str, mode: versions.Mode = versions.DEFAULT) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="draplane-bench-")
        self.data_dir = Path(self._tmp.name)
        self.storage = open_storage(store, str(self.data_dir))
        self.registry = Registry(self.storage, mode=mode)
        self.apiserver = ApiServer(
            self.data_dir, port=0, storage=self.storage, handler=self.registry
        )
        self._rest_clients: list[RESTClient] = []
        self._started = False

    async def start(self) -> None:
        await self.storage.start()
        await self.registry.start()
        await self.apiserver.start()
        self._started = True

    async def __aenter__(self) -> ApiHost:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def client(self, transport: Transport, user: UserInfo = auth.ADMIN_USER) -> Client:
        """A client acting as `user`; every RESTClient has its own keep-alive pool."""
        if transport == "local":
            return LocalClient(self.registry, user)
        token = authn.ensure_user_token(self.data_dir, user.name, user.groups or None)
        config = build_kubeconfig(
            server=self.apiserver.url,
            ca_pem=(self.data_dir / "ca.crt").read_bytes(),
            user=user.name,
            token=token,
        )
        client = RESTClient(parse_kubeconfig(config, base=self.data_dir))
        self._rest_clients.append(client)
        return client

    async def stop(self) -> None:
        for client in self._rest_clients:
            await client.close()
        self._rest_clients.clear()
        if self._started:
            await self.apiserver.stop()
            await self.registry.stop()
            await self.storage.close()
            self._started = False
        self._tmp.cleanup()


def sized_pod(name: str, *, namespace: str, size: int = OBJECT_BYTES) -> Obj:
    """A pod whose JSON body is about `size` bytes: realistic labels and env, then padding in
    an annotation (as a last-applied-configuration annotation would)."""
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": "bench", "tier": "backend", "bench.draplane.io/run": "api"},
            "annotations": {},
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.9",
                    "env": [{"name": f"ENV_{i}", "value": f"value-{i:04d}"} for i in range(8)],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
        },
    }
    missing = size - len(orjson.dumps(pod)) - len('"bench.draplane.io/padding":""')
    pod["metadata"]["annotations"]["bench.draplane.io/padding"] = "x" * max(0, missing)
    return pod
