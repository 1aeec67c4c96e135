"""The API server on etcd, through the real HTTPS request path: objects land under kube-apiserver's
keys with etcd's revisions as resourceVersions, LIST pages with limit/continue (the rest read at
the first page's revision), WATCH from a resourceVersion; and with etcd stopped, requests get 503
Status errors and /readyz reports `[-]etcd failed` until etcd is back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from draplane.api import errors, kinds
from draplane.storage.etcd import EtcdStorage
from draplane.storage.etcd_process import EtcdCluster
from draplane.storage.etcd_rpc import pb
from draplane.testing.builders import make_pod
from draplane.testing.etcd import etcd_store
from draplane.testing.httpserver import HttpServer, start_http_server


@pytest.fixture
async def server(tmp_path: Path, etcd_cluster: EtcdCluster) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path / "data", storage=etcd_store(etcd_cluster.client_urls))
    yield srv
    await srv.stop()


async def test_create_list_watch_on_etcd(server: HttpServer) -> None:
    client = server.client()
    store = server.storage
    assert isinstance(store, EtcdStorage)
    created = [
        await client.create(kinds.PODS, make_pod(n).obj(), "default") for n in ("a", "b", "c")
    ]
    stored = await store.stubs.kv.Range(
        pb.RangeRequest(key=store.layout.key(kinds.PODS.key, "default", "a"))
    )
    first = await client.list(kinds.PODS, "default", limit=2)
    rest = await client.list(kinds.PODS, "default", continue_=first["metadata"]["continue"])
    watch = await client.watch(
        kinds.PODS, "default", resource_version=created[0]["metadata"]["resourceVersion"]
    )
    await client.delete(kinds.PODS, "a", "default")
    events: list[tuple[str, str]] = []
    async with asyncio.timeout(10):
        async for ev in watch:
            events.append((ev.type, ev.object["metadata"]["name"]))
            if len(events) == 3:
                break
    await watch.close()

    assert created[0]["metadata"]["resourceVersion"] == str(stored.kvs[0].mod_revision)
    assert [p["metadata"]["name"] for p in first["items"]] == ["a", "b"]
    assert [p["metadata"]["name"] for p in rest["items"]] == ["c"]
    assert events == [("ADDED", "b"), ("ADDED", "c"), ("DELETED", "a")]


async def _readyz(server: HttpServer) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.ssl_context())) as s,
        s.get(f"{server.url}/readyz", params={"verbose": "1"}) as resp,
    ):
        return resp.status, await resp.text()


async def _until(check: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_etcd_down_is_503_and_readyz_fails_until_it_is_back(tmp_path: Path) -> None:
    cluster = EtcdCluster(str(tmp_path / "etcd"), unsafe_no_fsync=True)
    cluster.start()
    server = await start_http_server(tmp_path / "data", storage=etcd_store(cluster.client_urls))
    client = server.client()
    try:
        await client.create(kinds.PODS, make_pod("before").obj(), "default")
        await asyncio.to_thread(cluster.members[0].stop)
        await _until(lambda: _ready_is(server, False))
        down = await _readyz(server)
        with pytest.raises(errors.StatusError) as create_err:
            await client.create(kinds.PODS, make_pod("during").obj(), "default")
        with pytest.raises(errors.StatusError) as get_err:
            await client.get(kinds.PODS, "before", "default")

        await asyncio.to_thread(cluster.members[0].start)
        await _until(lambda: _ready_is(server, True))
        up = await _readyz(server)
        after = await client.create(kinds.PODS, make_pod("after").obj(), "default")
    finally:
        await server.stop()
        cluster.stop()

    assert down[0] == 500 and "[-]etcd failed" in down[1]
    assert (create_err.value.code, create_err.value.reason) == (503, "ServiceUnavailable")
    assert get_err.value.code == 503
    assert up[0] == 200 and "[+]etcd ok" in up[1]
    assert after["metadata"]["name"] == "after"


async def _ready_is(server: HttpServer, ready: bool) -> bool:
    return (await _readyz(server))[0] == (200 if ready else 500)
