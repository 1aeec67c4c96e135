"""resourceVersion semantics of GET and LIST over HTTPS, as kube-apiserver 1.28 serves them:
unset / "0" / N, resourceVersionMatch, snapshots for Exact and `continue`, 504 for a revision the
store has not reached, 410 for history that is gone, ListOptions validation."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.apiserver.listing import encode_continue
from draplane.storage.memory import MemoryStorage
from draplane.testing.httpserver import HttpServer

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def server_options() -> dict[str, Any]:
    return {"storage": MemoryStorage(history_size=20)}


@pytest.fixture
def server(server: HttpServer) -> HttpServer:
    server.registry.lists = dataclasses.replace(server.registry.lists, fresh_timeout=0.2)
    return server


async def _get(http: aiohttp.ClientSession, path: str, **params: str) -> tuple[int, Any]:
    async with http.get(path, params=params) as resp:
        return resp.status, orjson.loads(await resp.read())


async def _create(server: HttpServer, name: str, **data: str) -> dict[str, Any]:
    return await server.client().create(
        kinds.CONFIGMAPS, {"metadata": {"name": name}, "data": data}, "default"
    )


def _names(listing: dict[str, Any]) -> list[str]:
    return [o["metadata"]["name"] for o in listing["items"]]


@pytest.mark.parametrize("rv", ["", "0", "1"], ids=["unset", "zero", "older"])
async def test_get_serves_the_latest_state_for_current_or_older_versions(
    server: HttpServer, http: aiohttp.ClientSession, rv: str
) -> None:
    await _create(server, "a", k="1")
    patched = await server.client().patch(kinds.CONFIGMAPS, "a", {"data": {"k": "2"}}, "default")

    code, body = await _get(http, f"{CM}/a", resourceVersion=rv)

    assert code == 200
    assert body["data"] == {"k": "2"}
    assert body["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


@pytest.mark.parametrize("path", [f"{CM}/a", CM], ids=["get", "list"])
async def test_future_resource_version_times_out_with_504(
    server: HttpServer, http: aiohttp.ClientSession, path: str
) -> None:
    await _create(server, "a")
    future = server.storage.revision + 100

    code, body = await _get(http, path, resourceVersion=str(future))

    assert code == 504
    assert body["reason"] == "Timeout"
    assert body["message"] == (
        f"Timeout: Too large resource version: {future}, current: {server.storage.revision}"
    )
    assert body["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    assert body["details"]["retryAfterSeconds"] == 1


async def test_get_waits_for_a_revision_about_to_be_written(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await _create(server, "a")
    server.registry.lists = dataclasses.replace(server.registry.lists, fresh_timeout=5)
    next_rv = server.storage.revision + 1

    waiting = asyncio.create_task(_get(http, f"{CM}/a", resourceVersion=str(next_rv)))
    await asyncio.sleep(0.05)
    await server.client().patch(kinds.CONFIGMAPS, "a", {"data": {"k": "new"}}, "default")
    code, body = await asyncio.wait_for(waiting, 5)

    assert code == 200
    assert body["data"] == {"k": "new"}


@pytest.mark.parametrize("path", [f"{CM}/a", CM, f"{CM}?watch=true"], ids=["get", "list", "watch"])
async def test_unparsable_resource_version_is_400(
    server: HttpServer, http: aiohttp.ClientSession, path: str
) -> None:
    await _create(server, "a")

    async with http.get(path, params={"resourceVersion": "abc"}) as resp:
        body = orjson.loads(await resp.read())

    assert (resp.status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == 'invalid resource version "abc"'


async def test_list_resource_version_zero_ignores_limit(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    for name in ("a", "b", "c"):
        await _create(server, name)

    _, zero = await _get(http, CM, resourceVersion="0", limit="1")
    _, unset = await _get(http, CM, limit="1")

    assert _names(zero) == ["a", "b", "c"] and "continue" not in zero["metadata"]
    assert _names(unset) == ["a"] and unset["metadata"]["remainingItemCount"] == 2


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"resourceVersionMatch": "Exact"}, id="exact"),
        pytest.param({"limit": "10"}, id="legacy-limit"),
    ],
)
async def test_exact_list_is_the_snapshot_at_that_revision(
    server: HttpServer, http: aiohttp.ClientSession, params: dict[str, str]
) -> None:
    await _create(server, "kept", v="old")
    await _create(server, "removed")
    at = server.storage.revision
    await server.client().patch(kinds.CONFIGMAPS, "kept", {"data": {"v": "new"}}, "default")
    await server.client().delete(kinds.CONFIGMAPS, "removed", "default")
    await _create(server, "later")

    code, body = await _get(http, CM, resourceVersion=str(at), **params)

    assert code == 200
    assert body["metadata"]["resourceVersion"] == str(at)
    assert _names(body) == ["kept", "removed"]
    assert body["items"][0]["data"] == {"v": "old"}


async def test_not_older_than_serves_the_latest_state(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    first = await _create(server, "a")
    await _create(server, "b")

    _, body = await _get(
        http,
        CM,
        resourceVersion=first["metadata"]["resourceVersion"],
        resourceVersionMatch="NotOlderThan",
    )

    assert _names(body) == ["a", "b"]
    assert body["metadata"]["resourceVersion"] == str(server.storage.revision)


async def test_exact_list_older_than_history_is_410(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    for i in range(25):
        await _create(server, f"c{i}")
    revision_before = server.storage.revision

    code, body = await _get(http, CM, resourceVersion="2", resourceVersionMatch="Exact")

    assert (code, body["reason"]) == (410, "Expired")
    assert body["message"] == "The resourceVersion for the provided list is too old."
    assert server.storage.revision == revision_before


_FORBIDDEN = "resourceVersionMatch: Forbidden: "


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"resourceVersionMatch": "Exact"},
            _FORBIDDEN + "resourceVersionMatch is forbidden unless resourceVersion is provided",
            id="match-without-version",
        ),
        pytest.param(
            {"resourceVersionMatch": "Exact", "resourceVersion": "0"},
            _FORBIDDEN + 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            id="exact-zero",
        ),
        pytest.param(
            {"resourceVersionMatch": "Newest", "resourceVersion": "1"},
            'resourceVersionMatch: Unsupported value: "Newest": supported values: '
            '"Exact", "NotOlderThan", ""',
            id="unsupported-match",
        ),
        pytest.param(
            {"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1", "continue": "x"},
            _FORBIDDEN + "resourceVersionMatch is forbidden when continue is provided",
            id="match-with-continue",
        ),
        pytest.param(
            {"watch": "true", "resourceVersionMatch": "NotOlderThan"},
            _FORBIDDEN + "resourceVersionMatch is forbidden for watch unless sendInitialEvents "
            "is provided",
            id="watch-with-match",
        ),
        pytest.param(
            {"watch": "true", "sendInitialEvents": "true"},
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the "
            "WatchList feature gate is enabled",
            id="watch-list",
        ),
    ],
)
async def test_invalid_list_options_are_422(
    http: aiohttp.ClientSession, params: dict[str, str], message: str
) -> None:
    code, body = await _get(http, CM, **params)

    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'
    assert (body["details"]["group"], body["details"]["kind"]) == ("meta.k8s.io", "ListOptions")
    assert body["details"]["causes"][0]["field"] == message.split(":")[0]


async def _pages(http: aiohttp.ClientSession, first: dict[str, Any]) -> list[str]:
    names, token = _names(first), first["metadata"].get("continue")
    while token:
        code, page = await _get(http, CM, limit="2", **{"continue": token})
        assert code == 200
        names += _names(page)
        token = page["metadata"].get("continue")
    return names


async def test_continue_pages_form_one_consistent_snapshot(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    for name in ("a", "b", "c", "d", "e"):
        await _create(server, name, v="1")
    _, first = await _get(http, CM, limit="2")
    await server.client().delete(kinds.CONFIGMAPS, "d", "default")
    await _create(server, "f")
    await server.client().patch(kinds.CONFIGMAPS, "e", {"data": {"v": "2"}}, "default")

    _, second = await _get(http, CM, limit="2", **{"continue": first["metadata"]["continue"]})
    names = await _pages(http, first)

    assert first["metadata"]["remainingItemCount"] == 3
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert names == ["a", "b", "c", "d", "e"]


async def test_expired_continue_is_410_with_a_token_for_the_rest(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    for name in ("a", "b", "c", "d"):
        await _create(server, name)
    _, first = await _get(http, CM, limit="2")
    for i in range(25):
        await server.client().patch(kinds.CONFIGMAPS, "a", {"data": {"i": str(i)}}, "default")

    code, body = await _get(http, CM, limit="2", **{"continue": first["metadata"]["continue"]})
    _, rest = await _get(http, CM, limit="2", **{"continue": body["metadata"]["continue"]})

    assert (code, body["reason"]) == (410, "Expired")
    assert body["message"].startswith(
        "The provided continue parameter is too old to display a consistent list result."
    )
    assert _names(rest) == ["c", "d"]
    assert rest["metadata"]["resourceVersion"] == str(server.storage.revision)


@pytest.mark.parametrize(
    ("token", "message"),
    [
        pytest.param(
            encode_continue(0, "default/a"),
            "invalid continue token: continue key is not valid: incorrect encoded start "
            "resourceVersion (version meta.k8s.io/v1)",
            id="zero-revision",
        ),
        pytest.param(
            encode_continue(5, ""),
            "invalid continue token: continue key is not valid: encoded start key empty "
            "(version meta.k8s.io/v1)",
            id="empty-start",
        ),
        pytest.param("bm90LWpzb24", None, id="not-json"),
        pytest.param("%%%", None, id="not-base64"),
    ],
)
async def test_bad_continue_tokens_are_400(
    http: aiohttp.ClientSession, token: str, message: str | None
) -> None:
    code, body = await _get(http, CM, limit="1", **{"continue": token})

    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"].startswith(message or "invalid continue token: continue key is not")


async def test_continue_with_a_resource_version_is_400(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    for name in ("a", "b"):
        await _create(server, name)
    _, first = await _get(http, CM, limit="1")

    code, body = await _get(
        http, CM, limit="1", resourceVersion="3", **{"continue": first["metadata"]["continue"]}
    )

    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == "specifying resource version is not allowed when using continue"
