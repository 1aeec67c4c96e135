"""Suite-wide fixtures.

- logging: commands run in-process (`draplane ...` via main()) configure logging for a
  terminal; the logging state is restored afterwards so later tests see the default.
- `server`: a real HTTPS API server (`draplane.testing.httpserver`) for the test, with its data
  under `tmp_path/data`. A module changes how it is started by overriding `server_options`
  (keyword arguments of `start_http_server`), and seeds it by overriding `server` with a
  fixture of the same name that takes this one.
- `cluster`: the real in-process API (`draplane.testing.cluster.start_cluster`: the registry over
  MemoryStorage, clients per user). A module changes how it is started by overriding
  `cluster_options` (keyword arguments of `start_cluster`: `mode=`, `clock=`, `storage=`), and
  seeds it by overriding `cluster` with a fixture of the same name that takes this one.
- `clock`: a `FakeClock` for the test; a module runs `server` or `cluster` on it with
  `server_options`/`cluster_options` returning `{"clock": clock}`.
- `http` (admin bearer token) and `anonymous` (no token): aiohttp sessions against `server`.
- `etcd_cluster`: one real etcd for the session, started by the first test that asks for it.
- every test under tests/e2e is marked `e2e` (`make test-fast` leaves out e2e, kubectl and slow).
- every async test and fixture runs on the event loop the `draplane` commands run on
  (`draplane.eventloop`: uvloop, or asyncio's with `DRAPLANE_EVENT_LOOP=asyncio`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from draplane import eventloop
from draplane.storage.etcd_process import EtcdCluster
from draplane.testing.clock import FakeClock
from draplane.testing.cluster import Cluster, start_cluster
from draplane.testing.httpserver import HttpServer, start_http_server


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    name = eventloop.chosen()
    return {name: eventloop.LOOPS[name]}


_E2E = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(_E2E):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("draplane", "aiohttp.access")}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server_options() -> dict[str, Any]:
    """Keyword arguments for `start_http_server`; override in a module to change them."""
    return {}


@pytest.fixture
async def server(tmp_path: Path, server_options: dict[str, Any]) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path / "data", **server_options)
    yield srv
    await srv.stop()


@pytest.fixture
def cluster_options() -> dict[str, Any]:
    """Keyword arguments for `start_cluster`; override in a module to change them."""
    return {}


@pytest.fixture
async def cluster(cluster_options: dict[str, Any]) -> AsyncIterator[Cluster]:
    started = await start_cluster(**cluster_options)
    try:
        yield started
    finally:
        await started.stop()


def _session(server: HttpServer, headers: dict[str, str]) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        base_url=server.url,
        headers=headers,
        connector=aiohttp.TCPConnector(ssl=server.ssl_context()),
    )


@pytest.fixture
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    """A session with the admin's bearer token."""
    async with _session(server, {"Authorization": f"Bearer {server.token()}"}) as session:
        yield session


@pytest.fixture
async def anonymous(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    """A session without credentials."""
    async with _session(server, {}) as session:
        yield session


@pytest.fixture(scope="session")
def etcd_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    """One real single-member etcd for the whole session (started on first use); tests isolate
    their keys by prefix (`draplane.testing.etcd.etcd_store`)."""
    cluster = EtcdCluster(str(tmp_path_factory.mktemp("etcd")), unsafe_no_fsync=True)
    cluster.start()
    yield cluster
    cluster.stop()
