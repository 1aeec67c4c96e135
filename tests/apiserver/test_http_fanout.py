"""The HTTP path's shared work: a watch event is encoded once for every watcher that sends it
in the same form, all of them writing the same bytes; a watch writer takes the events already
queued together; and a client keeps one keep-alive connection for its sequential requests."""

from __future__ import annotations

import contextlib

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.apiserver.cachewatcher import CacheWatcher, WatchSpec
from draplane.storage.interface import Event
from draplane.testing.builders import make_pod
from draplane.testing.httpserver import HttpServer

WATCHERS = 4
PODS = "/api/v1/namespaces/default/pods"
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def _session(server: HttpServer, accept: str) -> aiohttp.ClientSession:
    """Its own connection pool: each watcher is a separate connection, as separate clients."""
    return aiohttp.ClientSession(
        base_url=server.url,
        headers={"Authorization": f"Bearer {server.token()}", "Accept": accept},
        connector=aiohttp.TCPConnector(ssl=server.ssl_context()),
    )


@pytest.mark.parametrize(
    ("accept", "expected_kind"),
    [("application/json", "Pod"), (METADATA, "PartialObjectMetadata")],
    ids=["object", "partial-object-metadata"],
)
async def test_one_event_is_encoded_once_for_every_watcher(
    server: HttpServer, accept: str, expected_kind: str
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(_session(server, accept)) for _ in range(WATCHERS)
        ]
        streams = []
        for session in sessions:
            # Headers arrive once the watch is registered, so every watcher sees the create.
            resp = await stack.enter_async_context(session.get(PODS, params={"watch": "true"}))
            assert resp.status == 200
            streams.append(resp)
        encoder = server.server._watches.encoder
        before = encoder.encodes
        await server.client().create(kinds.PODS, make_pod("fanned-out").obj(), "default")
        lines = [await resp.content.readline() for resp in streams]
    assert len(lines) == WATCHERS
    assert encoder.encodes - before == 1
    assert len(set(lines)) == 1
    event = orjson.loads(lines[0])
    assert (event["type"], event["object"]["kind"]) == ("ADDED", expected_kind)
    assert event["object"]["metadata"]["name"] == "fanned-out"


async def test_tables_are_built_per_watcher(server: HttpServer) -> None:
    """Table watches keep per-watcher state (column definitions only on the first row)."""
    accept = "application/json;as=Table;g=meta.k8s.io;v=v1"
    async with _session(server, accept) as first, _session(server, accept) as second:
        a = await first.get(PODS, params={"watch": "true"})
        b = await second.get(PODS, params={"watch": "true"})
        encoder = server.server._watches.encoder
        before = encoder.encodes
        await server.client().create(kinds.PODS, make_pod("tabled").obj(), "default")
        rows = [orjson.loads(await resp.content.readline()) for resp in (a, b)]
        a.close()
        b.close()
    assert encoder.encodes == before
    for row in rows:
        assert row["object"]["kind"] == "Table"
        assert row["object"]["columnDefinitions"]
        assert row["object"]["rows"][0]["cells"][0] == "tabled"


async def test_a_client_sends_sequential_requests_on_one_connection(server: HttpServer) -> None:
    client = server.client()
    peers: set[tuple[str, int]] = set()
    for i in range(5):
        await client.create(kinds.PODS, make_pod(f"reused-{i}").obj(), "default")
        await client.get(kinds.PODS, f"reused-{i}", "default")
        peers.update(server.server.connection_peers)
    listed = await client.list(kinds.PODS, "default")
    peers.update(server.server.connection_peers)
    assert len(listed["items"]) == 5
    assert len(peers) == 1


def _spec() -> WatchSpec:
    return WatchSpec("pods", "", lambda _: True, False, "Pod", "v1")


@pytest.mark.parametrize(("queued", "limit"), [(0, 4), (3, 2), (3, 8)], ids=["none", "some", "all"])
async def test_queued_events_are_taken_in_order_with_their_bytes_released(
    queued: int, limit: int
) -> None:
    """What a watch writer sends in one write: the events already queued, in order; the
    queue's counted bytes drop by what was taken."""
    watcher = CacheWatcher(_spec(), 0)
    for revision in range(1, queued + 1):
        pod = make_pod(f"p{revision}").obj()
        assert not watcher.offer(Event("ADDED", "pods", pod, revision, size=100))
    full = watcher.buffered_bytes
    taken = watcher.take_ready(limit)
    names = [event.object["metadata"]["name"] for event in taken]
    assert names == [f"p{r}" for r in range(1, min(queued, limit) + 1)]
    assert watcher.buffered_bytes == full * (queued - len(taken)) // max(queued, 1)
    watcher.close_now()
    rest = [event.object["metadata"]["name"] async for event in watcher]
    assert names + rest == [f"p{r}" for r in range(1, queued + 1)]
