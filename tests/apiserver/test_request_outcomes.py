"""The outcome a client sees is the outcome stored: concurrent writers get no false conflicts
(the server retries stored-revision conflicts, as GuaranteedUpdate does), every option is
checked before anything is written, only GET is a watch, and the system namespaces stay."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import errors, kinds
from draplane.storage.sqlite import SqliteStorage
from draplane.testing.httpserver import HttpServer

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def server_options(tmp_path: Path) -> dict[str, Any]:
    # SQLite: writers wait for their commit, so concurrent read-modify-writes interleave.
    return {"storage": SqliteStorage(str(tmp_path / "db.sqlite"))}


async def _request(
    server: HttpServer,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=server.ssl_context()),
            headers={"Authorization": f"Bearer {server.token()}"},
        ) as session,
        session.request(
            method,
            server.url + path,
            data=None if body is None else orjson.dumps(body),
            headers={"Content-Type": content_type},
        ) as resp,
    ):
        raw = await resp.read()
        return resp.status, orjson.loads(raw) if raw else None


async def test_concurrent_updates_without_resource_version_all_succeed(server: HttpServer) -> None:
    client = server.client()
    await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "c"}}, "default")

    async def put(i: int) -> Any:
        return await client.update(
            kinds.CONFIGMAPS,
            {"metadata": {"name": "c", "namespace": "default"}, "data": {"writer": str(i)}},
        )

    results = await asyncio.gather(*(put(i) for i in range(30)), return_exceptions=True)

    assert [r for r in results if isinstance(r, BaseException)] == []
    stored = await client.get(kinds.CONFIGMAPS, "c", "default")
    assert int(stored["metadata"]["resourceVersion"]) == server.storage.revision


async def test_concurrent_merge_patches_all_apply(server: HttpServer) -> None:
    client = server.client()
    await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "c"}}, "default")

    results = await asyncio.gather(
        *(
            client.patch(kinds.CONFIGMAPS, "c", {"data": {f"k{i}": "v"}}, "default")
            for i in range(30)
        ),
        return_exceptions=True,
    )

    assert [r for r in results if isinstance(r, BaseException)] == []
    stored = await client.get(kinds.CONFIGMAPS, "c", "default")
    assert set(stored["data"]) == {f"k{i}" for i in range(30)}


async def test_a_stale_resource_version_the_client_sent_is_still_a_conflict(
    server: HttpServer,
) -> None:
    client = server.client()
    created = await client.create(kinds.CONFIGMAPS, {"metadata": {"name": "c"}}, "default")
    await client.patch(kinds.CONFIGMAPS, "c", {"data": {"a": "b"}}, "default")

    with pytest.raises(errors.StatusError) as err:
        await client.update(kinds.CONFIGMAPS, {**created, "data": {"x": "y"}})

    assert (err.value.code, err.value.reason) == (409, "Conflict")


async def test_delete_with_uid_precondition_succeeds_while_others_write(
    server: HttpServer,
) -> None:
    client = server.client()
    created = await client.create(
        kinds.CONFIGMAPS, {"metadata": {"name": "c", "finalizers": []}}, "default"
    )
    patches = [
        client.patch(kinds.CONFIGMAPS, "c", {"data": {f"k{i}": "v"}}, "default") for i in range(20)
    ]
    delete = client.delete(
        kinds.CONFIGMAPS, "c", "default", preconditions={"uid": created["metadata"]["uid"]}
    )

    results = await asyncio.gather(delete, *patches, return_exceptions=True)

    assert not isinstance(results[0], BaseException), results[0]
    assert await server.storage.get(kinds.CONFIGMAPS.key, "default", "c") is None


async def test_bad_pretty_is_refused_before_the_write(server: HttpServer) -> None:
    revision = server.storage.revision

    code, body = await _request(server, "POST", CM + "?pretty=bogus", {"metadata": {"name": "p"}})

    assert (code, body["reason"]) == (400, "BadRequest")
    assert server.storage.revision == revision
    assert await server.storage.get(kinds.CONFIGMAPS.key, "default", "p") is None


@pytest.mark.parametrize("method", ["POST", "DELETE", "PUT", "PATCH"])
async def test_only_get_is_a_watch(server: HttpServer, method: str) -> None:
    code, body = await _request(
        server, method, "/api/v1/watch/namespaces/default/configmaps", {"metadata": {"name": "w"}}
    )

    assert (code, body["reason"]) == (405, "MethodNotAllowed")


@pytest.mark.parametrize("namespace", ["default", "kube-system", "kube-public"])
async def test_system_namespaces_may_not_be_deleted(server: HttpServer, namespace: str) -> None:
    code, body = await _request(server, "DELETE", f"/api/v1/namespaces/{namespace}")

    assert code == 403
    assert (
        body["message"]
        == f'namespaces "{namespace}" is forbidden: this namespace may not be deleted'
    )
    assert await server.storage.get(kinds.NAMESPACES.key, "", namespace) is not None


async def test_namespaces_offer_no_deletecollection(server: HttpServer) -> None:
    code, body = await _request(server, "DELETE", "/api/v1/namespaces")

    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    assert await server.storage.get(kinds.NAMESPACES.key, "", "default") is not None
