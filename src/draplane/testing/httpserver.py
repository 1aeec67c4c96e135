"""A real HTTPS API server for tests: Registry over MemoryStorage on 127.0.0.1, a free port.

server = await start_http_server(tmp_path)
client = server.client()                 # RESTClient as admin, from DIR/kubeconfig
async with server.session() as http:     # raw aiohttp session as admin
...
await server.stop()

`mode=` defaults to classic DRA (`versions.CLASSIC`, 1.28), not the commands' 1.36 (`DEFAULT`):
structured tests pass `mode=versions.STRUCTURED`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from draplane.api import versions
from draplane.api.auth import ADMIN
from draplane.apiserver import authn
from draplane.apiserver.registry import Registry
from draplane.apiserver.server import ApiServer
from draplane.apiserver.watchcache import DEFAULT_WATCHER_BYTES, WatchCache
from draplane.client.kubeconfig import KubeConfig, load_kubeconfig
from draplane.client.rest import RESTClient
from draplane.clock import REAL_CLOCK, Clock
from draplane.storage.interface import Storage
from draplane.storage.memory import MemoryStorage


@dataclass
class HttpServer:
    server: ApiServer
    storage: Storage
    registry: Registry
    _clients: list[RESTClient] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def data_dir(self) -> Path:
        return self.server.data_dir

    @property
    def kubeconfig_path(self) -> Path:
        return self.server.kubeconfig_path

    def token(self, user: str = ADMIN, groups: tuple[str, ...] | None = None) -> str:
        return authn.ensure_user_token(self.data_dir, user, groups)

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.data_dir / "ca.crt"))

    def session(
        self, user: str = ADMIN, groups: tuple[str, ...] | None = None
    ) -> aiohttp.ClientSession:
        """A raw aiohttp session against the server as `user` (base URL, bearer token, the
        server's CA): for tests of exact HTTP requests and responses. Use as a context manager."""
        return aiohttp.ClientSession(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token(user, groups)}"},
            connector=aiohttp.TCPConnector(ssl=self.ssl_context()),
        )

    def kubeconfig(self) -> KubeConfig:
        return load_kubeconfig(self.kubeconfig_path)

    def client(self, user: str = ADMIN, groups: tuple[str, ...] | None = None) -> RESTClient:
        """A RESTClient acting as `user` (closed by `stop()`)."""
        base = self.kubeconfig()
        config = KubeConfig(
            server=base.server, user=user, token=self.token(user, groups), ca_pem=base.ca_pem
        )
        client = RESTClient(config)
        self._clients.append(client)
        return client

    async def stop(self) -> None:
        await self.server.stop()
        for client in self._clients:
            await client.close()
        await self.registry.stop()
        await self.storage.close()


async def start_http_server(
    data_dir: Path,
    *,
    clock: Clock = REAL_CLOCK,
    storage: Storage | None = None,
    bookmark_interval: float = 5.0,
    watch_history: int = 10_000,
    watcher_bytes: int = DEFAULT_WATCHER_BYTES,
    mode: versions.Mode = versions.CLASSIC,
) -> HttpServer:
    """`storage` defaults to a fresh MemoryStorage (pass one with a small history, and a small
    `watch_history`, to provoke 410s); `bookmark_interval` is the watch cache's bookmark period;
    `watcher_bytes` how far a watcher may fall behind before it is closed."""
    storage = storage if storage is not None else MemoryStorage()
    await storage.start()
    registry = Registry(storage, clock=clock, mode=mode)
    registry.watch_cache = WatchCache(
        storage,
        history=watch_history,
        bookmark_interval=bookmark_interval,
        watcher_bytes=watcher_bytes,
    )
    await registry.start()
    server = ApiServer(data_dir, port=0, storage=storage, handler=registry, clock=clock)
    await server.start()
    return HttpServer(server, storage, registry)
