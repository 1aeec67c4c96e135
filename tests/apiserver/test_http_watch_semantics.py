"""Watch start semantics over HTTPS as kube-apiserver serves them: unset / "0" / N, the 410
ERROR event for a too old revision, bookmark shape, DELETED with the last state, and a dropped
client removed from the watch cache while the watch is idle."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.storage.memory import MemoryStorage
from draplane.testing.apistate import wait_for
from draplane.testing.httpserver import HttpServer

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def server_options() -> dict[str, Any]:
    return {"storage": MemoryStorage(history_size=5), "watch_history": 5, "bookmark_interval": 0.05}


async def _create(server: HttpServer, name: str, **data: str) -> dict[str, Any]:
    return await server.client().create(
        kinds.CONFIGMAPS, {"metadata": {"name": name}, "data": data}, "default"
    )


async def _events(
    http: aiohttp.ClientSession, count: int, *, during: Any = None, **params: str
) -> list[dict[str, Any]]:
    """The first `count` events of a watch; `during` (a coroutine function) runs once the
    stream is open."""
    async with http.get(CM, params={"watch": "true", **params}) as resp:
        assert resp.status == 200
        if during is not None:
            await during()
        events = []
        while len(events) < count:
            line = await asyncio.wait_for(resp.content.readline(), 5)
            assert line, "stream ended early"
            events.append(orjson.loads(line))
        return events


def _summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


@pytest.mark.parametrize("rv", ["", "0"], ids=["unset", "zero"])
async def test_unset_or_zero_starts_with_synthetic_added(
    server: HttpServer, http: aiohttp.ClientSession, rv: str
) -> None:
    await _create(server, "a")
    await _create(server, "b")

    async def change() -> None:
        await _create(server, "c")

    events = await _events(http, 3, during=change, resourceVersion=rv)

    assert _summary(events) == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c")]


async def test_revision_n_sends_only_later_changes(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    first = await _create(server, "a")
    await _create(server, "b")

    async def change() -> None:
        await server.client().patch(kinds.CONFIGMAPS, "a", {"data": {"k": "v"}}, "default")

    events = await _events(
        http, 2, during=change, resourceVersion=first["metadata"]["resourceVersion"]
    )

    assert _summary(events) == [("ADDED", "b"), ("MODIFIED", "a")]


async def test_deleted_carries_the_last_state_with_a_new_revision(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    created = await _create(server, "gone", k="last")

    async def delete() -> None:
        await server.client().delete(kinds.CONFIGMAPS, "gone", "default")

    (event,) = await _events(
        http, 1, during=delete, resourceVersion=created["metadata"]["resourceVersion"]
    )

    assert event["type"] == "DELETED"
    assert event["object"]["data"] == {"k": "last"}
    assert event["object"]["metadata"]["uid"] == created["metadata"]["uid"]
    assert int(event["object"]["metadata"]["resourceVersion"]) == server.storage.revision


async def test_too_old_revision_is_200_with_one_410_error_then_end(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    for i in range(10):
        await _create(server, f"c{i}")
    oldest = server.storage.oldest_revision - 1

    async with http.get(CM, params={"watch": "true", "resourceVersion": "2"}) as resp:
        body = await asyncio.wait_for(resp.read(), 5)

    assert resp.status == 200
    assert resp.headers["Transfer-Encoding"] == "chunked"
    (event,) = [orjson.loads(line) for line in body.splitlines()]
    assert event == {
        "type": "ERROR",
        "object": {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"too old resource version: 2 ({oldest})",
            "reason": "Expired",
            "code": 410,
        },
    }


@pytest.mark.parametrize(
    ("path", "kind", "api_version"),
    [
        pytest.param(CM, "ConfigMap", "v1", id="configmaps"),
        pytest.param(
            "/apis/resource.k8s.io/v1alpha2/resourceclaims",
            "ResourceClaim",
            "resource.k8s.io/v1alpha2",
            id="resourceclaims",
        ),
    ],
)
async def test_bookmark_is_the_watched_kind_with_only_resource_version(
    server: HttpServer, http: aiohttp.ClientSession, path: str, kind: str, api_version: str
) -> None:
    start = str(server.storage.revision)
    await _create(server, "a")
    params = {"watch": "True", "allowWatchBookmarks": "true", "resourceVersion": start}

    async with http.get(path, params=params) as resp:
        lines = []
        while not lines or orjson.loads(lines[-1])["type"] != "BOOKMARK":
            lines.append(await asyncio.wait_for(resp.content.readline(), 5))

    bookmark = orjson.loads(lines[-1])["object"]
    assert bookmark == {
        "kind": kind,
        "apiVersion": api_version,
        "metadata": {"resourceVersion": str(server.storage.revision)},
    }


async def test_timeout_seconds_ends_the_stream_cleanly(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await _create(server, "a")
    loop = asyncio.get_running_loop()
    start = loop.time()

    async with http.get(CM, params={"watch": "1", "timeoutSeconds": "1"}) as resp:
        body = await asyncio.wait_for(resp.read(), 5)

    assert 0.9 <= loop.time() - start < 3
    assert [orjson.loads(line)["type"] for line in body.splitlines()] == ["ADDED"]


async def test_dropped_idle_client_is_removed_from_the_watch_cache(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    cache = server.registry.watch_cache
    rv = str(server.storage.revision)
    resp = await http.get(CM, params={"watch": "true", "resourceVersion": rv})
    await wait_for(lambda: cache.watcher_count(kinds.CONFIGMAPS.key) == 1)

    resp.close()  # no event is ever sent: only the closed connection can tell the server

    await wait_for(lambda: cache.watcher_count(kinds.CONFIGMAPS.key) == 0)
    assert server.server.active_watches == 0
