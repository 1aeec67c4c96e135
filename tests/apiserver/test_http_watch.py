"""Watch streaming over HTTPS: event lines, Table events, bookmarks, timeoutSeconds, 410 and
dropped clients."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import errors, kinds
from draplane.api.handler import WatchEvent
from draplane.client.rest import RESTClient
from draplane.storage.memory import MemoryStorage
from draplane.testing.apistate import wait_for
from draplane.testing.httpserver import HttpServer, start_http_server

CM_PATH = "/api/v1/namespaces/default/configmaps"
TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def _cm(name: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": data}


@pytest.fixture
def server_options() -> dict[str, Any]:
    return {"bookmark_interval": 0.05}


@pytest.fixture
def client(server: HttpServer) -> RESTClient:
    return server.client()


async def _next(it: AsyncIterator[WatchEvent]) -> WatchEvent:
    return await asyncio.wait_for(anext(it), timeout=5)


async def test_watch_from_list_revision_sees_changes(client: RESTClient) -> None:
    await client.create(kinds.CONFIGMAPS, _cm("before"))
    listing = await client.list(kinds.CONFIGMAPS, "default")
    stream = await client.watch(
        kinds.CONFIGMAPS, "default", resource_version=listing["metadata"]["resourceVersion"]
    )
    events = aiter(stream)

    created = await client.create(kinds.CONFIGMAPS, _cm("a", k="1"))
    await client.patch(kinds.CONFIGMAPS, "a", {"data": {"k": "2"}}, "default")
    await client.delete(kinds.CONFIGMAPS, "a", "default")
    seen = [await _next(events) for _ in range(3)]
    await stream.close()

    assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("DELETED", "a"),
    ]
    assert seen[0].object["metadata"]["uid"] == created["metadata"]["uid"]
    assert seen[1].object["data"] == {"k": "2"}


async def test_watch_without_revision_starts_with_current_state(client: RESTClient) -> None:
    await client.create(kinds.CONFIGMAPS, _cm("x"))

    stream = await client.watch(kinds.CONFIGMAPS, "default")
    first = await _next(aiter(stream))
    await stream.close()

    assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "x")


async def test_wire_format_is_one_json_event_per_line(
    client: RESTClient, http: aiohttp.ClientSession
) -> None:
    await client.create(kinds.CONFIGMAPS, _cm("multi", text="line1\nline2"))

    async with http.get(CM_PATH, params={"watch": "True", "timeoutSeconds": "1"}) as resp:
        body = await resp.read()

    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("application/json")
    assert resp.headers["Transfer-Encoding"] == "chunked"
    lines = body.split(b"\n")
    assert lines[-1] == b""
    event = orjson.loads(lines[0])
    assert (event["type"], event["object"]["data"]["text"]) == ("ADDED", "line1\nline2")


async def test_timeout_seconds_ends_the_stream(client: RESTClient) -> None:
    stream = await client.watch(kinds.CONFIGMAPS, "default", timeout_seconds=1)

    events = await asyncio.wait_for(_collect(stream), timeout=5)

    assert events == []


async def _collect(stream: Any) -> list[WatchEvent]:
    return [e async for e in stream]


async def test_bookmarks_only_when_requested(client: RESTClient) -> None:
    rv = (await client.list(kinds.CONFIGMAPS, "default"))["metadata"]["resourceVersion"]
    stream = await client.watch(
        kinds.CONFIGMAPS, "default", resource_version=rv, allow_bookmarks=True
    )

    bookmark = await _next(aiter(stream))
    await stream.close()

    assert bookmark.type == "BOOKMARK"
    assert bookmark.object["kind"] == "ConfigMap"
    assert bookmark.object["metadata"]["resourceVersion"]


async def test_no_bookmarks_unless_requested(client: RESTClient) -> None:
    stream = await client.watch(
        kinds.CONFIGMAPS, "default", resource_version="1", timeout_seconds=1
    )

    assert [e.type for e in await _collect(stream)] == []


async def test_too_old_revision_is_a_410_error_event(tmp_path: Path) -> None:
    srv = await start_http_server(tmp_path, storage=MemoryStorage(history_size=2), watch_history=2)
    try:
        client = srv.client()
        for i in range(6):
            await client.create(kinds.CONFIGMAPS, _cm(f"c{i}"))

        stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version="2")
        events = await asyncio.wait_for(_collect(stream), timeout=5)
    finally:
        await srv.stop()

    assert [e.type for e in events] == ["ERROR"]
    status = events[0].object
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")


async def test_bad_selector_fails_before_streaming(client: RESTClient) -> None:
    with pytest.raises(errors.StatusError) as err:
        await client.watch(kinds.PODS, label_selector="a in (")

    assert (err.value.code, err.value.reason) == (400, "BadRequest")


async def test_table_watch_sends_column_definitions_once(
    client: RESTClient, http: aiohttp.ClientSession
) -> None:
    await client.create(kinds.CONFIGMAPS, _cm("t1", a="1"))
    await client.create(kinds.CONFIGMAPS, _cm("t2"))

    async with http.get(
        CM_PATH, params={"watch": "true", "timeoutSeconds": "1"}, headers={"Accept": TABLE_ACCEPT}
    ) as resp:
        events = [orjson.loads(line) for line in (await resp.read()).splitlines()]

    tables = [e["object"] for e in events]
    assert [t["kind"] for t in tables] == ["Table", "Table"]
    assert [c["name"] for c in tables[0]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert tables[1]["columnDefinitions"] == []
    assert [t["rows"][0]["cells"][:2] for t in tables] == [["t1", 1], ["t2", 0]]
    assert tables[0]["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


async def test_watch_of_named_object_via_legacy_watch_path(
    client: RESTClient, http: aiohttp.ClientSession
) -> None:
    await client.create(kinds.CONFIGMAPS, _cm("one"))
    await client.create(kinds.CONFIGMAPS, _cm("two"))

    async with http.get(
        "/api/v1/watch/namespaces/default/configmaps/two", params={"timeoutSeconds": "1"}
    ) as resp:
        events = [orjson.loads(line) for line in (await resp.read()).splitlines()]

    assert [e["object"]["metadata"]["name"] for e in events] == ["two"]


async def test_dropped_client_closes_the_server_stream(
    server: HttpServer, client: RESTClient
) -> None:
    stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version="1")
    await wait_for(lambda: server.server.active_watches == 1)

    await stream.close()

    await wait_for(lambda: server.server.active_watches == 0)
    assert server.server.active_watches == 0


def _watch_requests(server: HttpServer) -> dict[str, float]:
    """apiserver_request_total of configmap WATCHes, by code."""
    return {
        sample.labels["code"]: sample.value
        for metric in server.server.metrics.collect()
        if metric.name == "apiserver_request"
        for sample in metric.samples
        if sample.name == "apiserver_request_total"
        and sample.labels["verb"] == "WATCH"
        and sample.labels["resource"] == "configmaps"
    }


async def test_watch_the_client_closes_counts_as_a_200(
    server: HttpServer, client: RESTClient
) -> None:
    stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version="1")
    await client.create(kinds.CONFIGMAPS, _cm("seen"))
    assert (await _next(aiter(stream))).type == "ADDED"

    await stream.close()

    assert await wait_for(lambda: _watch_requests(server), what="the watch counted") == {"200": 1.0}


def _watch_sent(server: HttpServer) -> dict[str, float]:
    """apiserver_watch_events_total and draplane_watch_writes_total of configmaps."""
    return {
        sample.name: sample.value
        for metric in server.server.metrics.collect()
        for sample in metric.samples
        if sample.name in ("apiserver_watch_events_total", "draplane_watch_writes_total")
        and sample.labels["resource"] == "configmaps"
    }


async def test_watch_events_and_writes_counted_per_resource(
    server: HttpServer, client: RESTClient
) -> None:
    listing = await client.list(kinds.CONFIGMAPS, "default")
    stream = await client.watch(
        kinds.CONFIGMAPS, "default", resource_version=listing["metadata"]["resourceVersion"]
    )
    events = aiter(stream)
    for name in ("a", "b", "c"):
        await client.create(kinds.CONFIGMAPS, _cm(name))
    seen = [await _next(events) for _ in range(3)]
    await stream.close()

    def all_counted() -> dict[str, float] | None:
        sent = _watch_sent(server)
        return sent if sent.get("apiserver_watch_events_total") == 3.0 else None

    sent = await wait_for(all_counted, what="3 watch events counted")
    assert [e.object["metadata"]["name"] for e in seen] == ["a", "b", "c"]
    # Events already queued behind one go out in its write: 1 to 3 writes for 3 events.
    assert 1.0 <= sent["draplane_watch_writes_total"] <= 3.0


async def test_server_stop_ends_open_watches(tmp_path: Path) -> None:
    srv = await start_http_server(tmp_path)
    stream = await srv.client().watch(kinds.CONFIGMAPS, "default", resource_version="1")
    collecting = asyncio.create_task(_collect(stream))

    await asyncio.wait_for(srv.stop(), timeout=10)

    assert await asyncio.wait_for(collecting, timeout=5) == []
