"""Watches the server cannot serve or keep up with: a watch from a resourceVersion the store has
not reached fails with 504 "Too large resource version" (one ERROR event, as kube-apiserver's
cacher answers), and a watcher whose client stops reading is closed once its queue passes its
byte bound, while the other watchers keep receiving; the buffered bytes stay bounded."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import auth, kinds
from draplane.api.handler import WatchEvent
from draplane.client.local import LocalClient
from draplane.storage.memory import MemoryStorage
from draplane.testing.httpserver import HttpServer, start_http_server

CM_PATH = "/api/v1/namespaces/default/configmaps"
WATCHER_BYTES = 256 * 1024
VALUE = 64 * 1024


def _cm(name: str, size: int = 10) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"v": "x" * size}}


@pytest.fixture
def server_options() -> dict[str, Any]:
    return {"watcher_bytes": WATCHER_BYTES}


@pytest.fixture
def server(server: HttpServer) -> HttpServer:
    server.registry.watch_cache.fresh_timeout = 0.2
    return server


async def _lines(resp: aiohttp.ClientResponse) -> list[dict[str, Any]]:
    return [orjson.loads(line) async for line in resp.content if line.strip()]


async def test_watch_from_a_future_resource_version_is_a_504_error_event(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(kinds.CONFIGMAPS, _cm("a"), "default")
    current = server.storage.revision
    future = current + 100

    async with http.get(CM_PATH, params={"watch": "1", "resourceVersion": str(future)}) as resp:
        events = await asyncio.wait_for(_lines(resp), 10)

    assert resp.status == 200
    assert [e["type"] for e in events] == ["ERROR"]
    status = events[0]["object"]
    assert (status["code"], status["reason"]) == (504, "Timeout")
    assert status["message"] == f"Timeout: Too large resource version: {future}, current: {current}"
    assert status["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    assert status["details"]["retryAfterSeconds"] == 1


async def test_watch_from_the_next_resource_version_waits_for_it(server: HttpServer) -> None:
    server.registry.watch_cache.fresh_timeout = 10
    client = server.client()
    await client.create(kinds.CONFIGMAPS, _cm("a"), "default")
    next_rv = server.storage.revision + 1

    watching = asyncio.create_task(
        client.watch(kinds.CONFIGMAPS, "default", resource_version=str(next_rv))
    )
    await client.create(kinds.CONFIGMAPS, _cm("b"), "default")
    await client.create(kinds.CONFIGMAPS, _cm("c"), "default")
    stream = await asyncio.wait_for(watching, 10)
    try:
        event = await asyncio.wait_for(anext(aiter(stream)), 10)
    finally:
        await stream.close()

    assert (event.type, event.object["metadata"]["name"]) == ("ADDED", "c")


async def _collect(events: AsyncIterator[WatchEvent], want: int) -> list[str]:
    seen: list[str] = []
    while len(seen) < want:
        event = await anext(events)
        assert event.type == "ADDED"
        seen.append(event.object["metadata"]["name"])
    return seen


async def test_an_unread_watch_is_closed_and_others_keep_receiving(server: HttpServer) -> None:
    """In process: the slow watch is a stream nobody iterates."""
    admin = LocalClient(server.registry, auth.ADMIN_USER)
    rv = server.storage.revision
    cache = server.registry.watch_cache
    slow = await admin.watch(kinds.CONFIGMAPS, "default", resource_version=str(rv))
    fast = await admin.watch(kinds.CONFIGMAPS, "default", resource_version=str(rv))
    count = 3 * WATCHER_BYTES // VALUE
    names = [f"cm-{i:03d}" for i in range(count)]

    async def write() -> None:
        for name in names:
            await admin.create(kinds.CONFIGMAPS, _cm(name, VALUE), "default")

    received, _ = await asyncio.wait_for(asyncio.gather(_collect(aiter(fast), count), write()), 30)
    buffered_after_writes = cache.buffered_bytes()
    leftover = [e async for e in slow]
    await fast.close()

    assert received == names
    assert cache.slow_watchers_closed == 1
    assert buffered_after_writes <= WATCHER_BYTES
    assert len(leftover) == 0


def _slow_socket(port: int) -> socket.socket:
    """A client socket with a small receive buffer, so that unread events back up quickly."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    return sock


async def _read_to_end(reader: asyncio.StreamReader) -> bool:
    """Reads until the peer closes or resets the connection (True)."""
    try:
        while await reader.read(65536):
            pass
    except (ConnectionError, ssl.SSLError):
        pass
    return True


async def test_a_watch_client_that_stops_reading_is_closed_with_bounded_buffers(
    server: HttpServer,
) -> None:
    cache = server.registry.watch_cache
    rv = server.storage.revision
    reader, writer = await asyncio.open_connection(
        sock=_slow_socket(server.server.port),
        ssl=server.ssl_context(),
        server_hostname="127.0.0.1",
    )
    request = (
        f"GET {CM_PATH}?watch=1&resourceVersion={rv} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {server.token()}\r\n\r\n"
    )
    writer.write(request.encode())
    await writer.drain()
    client = server.client()
    fast = await client.watch(kinds.CONFIGMAPS, "default", resource_version=str(rv))
    # Far more than the kernel's socket buffers and the watcher's bound can hold.
    count = 16 * 1024 * 1024 // VALUE
    names = [f"cm-{i:03d}" for i in range(count)]
    high_water = 0

    async def write() -> None:
        nonlocal high_water
        for name in names:
            await client.create(kinds.CONFIGMAPS, _cm(name, VALUE), "default")
            high_water = max(high_water, cache.buffered_bytes())

    events = aiter(fast)
    try:
        received, _ = await asyncio.wait_for(asyncio.gather(_collect(events, count), write()), 60)
        await client.create(kinds.CONFIGMAPS, _cm("after"), "default")
        after = await asyncio.wait_for(anext(events), 10)
        # The server dropped the slow client's connection: reading what was left ends.
        dropped = await asyncio.wait_for(_read_to_end(reader), 10)
    finally:
        await fast.close()
        writer.close()

    assert received == names
    assert after.object["metadata"]["name"] == "after"
    assert dropped
    assert cache.slow_watchers_closed == 1
    assert cache.watcher_count(kinds.CONFIGMAPS.key) == 1
    # Two watchers, each within its bound (plus the one event that crossed it).
    assert high_water <= 2 * (WATCHER_BYTES + VALUE + 1024)
    assert cache.history_bytes <= 64 * 1024 * 1024


@pytest.mark.parametrize(
    ("history_bytes", "expired"),
    [
        pytest.param(4 * VALUE, True, id="history-bytes-exceeded"),
        pytest.param(64 * VALUE, False, id="within-history-bytes"),
    ],
)
async def test_store_history_is_bounded_in_bytes(
    tmp_path: Path, history_bytes: int, expired: bool
) -> None:
    server = await start_http_server(
        tmp_path, storage=MemoryStorage(history_bytes=history_bytes), watch_history=2
    )
    try:
        client = server.client()
        start = server.storage.revision
        for i in range(16):
            await client.create(kinds.CONFIGMAPS, _cm(f"cm-{i}", VALUE), "default")
        stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version=str(start))
        try:
            first: WatchEvent = await asyncio.wait_for(anext(aiter(stream)), 10)
        finally:
            await stream.close()
    finally:
        await server.stop()

    if expired:
        assert (first.type, first.object["code"]) == ("ERROR", 410)
    else:
        assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "cm-0")
