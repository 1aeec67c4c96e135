"""DELETE over HTTPS as kube-apiserver answers it: Status or object per kind, finalizers, a
second DELETE, propagation policies carried out by the garbage collector (ControllerManager),
and no new content in a terminating namespace."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import errors, kinds, versions
from draplane.api.meta import Obj
from draplane.api.request import resource_path
from draplane.client.rest import RESTClient
from draplane.controllers.manager import ControllerManager
from draplane.testing.apistate import wait_for
from draplane.testing.builders import make_claim, make_pod, make_template
from draplane.testing.httpserver import HttpServer


async def _delete(
    http: aiohttp.ClientSession, path: str, body: Obj | None = None
) -> tuple[int, Any]:
    data = orjson.dumps(body) if body is not None else None
    async with http.delete(path, data=data, headers={"Content-Type": "application/json"}) as resp:
        return resp.status, orjson.loads(await resp.read())


@pytest.mark.parametrize(
    ("rt", "obj", "returns_object"),
    [
        pytest.param(kinds.PODS, make_pod("x").obj(), True, id="pod"),
        pytest.param(kinds.RESOURCE_CLAIMS, make_claim("x").obj(), True, id="resourceclaim"),
        pytest.param(
            kinds.RESOURCE_CLAIM_TEMPLATES,
            make_template("x").obj(),
            True,
            id="resourceclaimtemplate",
        ),
        pytest.param(
            kinds.CONFIGMAPS,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
            False,
            id="configmap",
        ),
    ],
)
async def test_immediate_delete_returns_the_object_or_a_success_status_as_upstream(
    server: HttpServer,
    http: aiohttp.ClientSession,
    rt: kinds.ResourceType,
    obj: Obj,
    returns_object: bool,
) -> None:
    created = await server.client().create(rt, obj, "default")

    code, body = await _delete(
        http, resource_path(rt, "default", "x"), {"propagationPolicy": "Background"}
    )

    assert code == 200
    if returns_object:
        assert (body["kind"], body["metadata"]["uid"]) == (rt.kind, created["metadata"]["uid"])
        assert int(body["metadata"]["resourceVersion"]) == server.storage.revision
    else:
        details = {"name": "x", "kind": rt.resource, "uid": created["metadata"]["uid"]}
        assert body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }


async def test_finalizers_keep_the_object_until_the_last_one_is_removed(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    client = server.client()
    await client.create(kinds.RESOURCE_CLAIMS, make_claim("held").finalizer("example.com/x").obj())
    path = resource_path(kinds.RESOURCE_CLAIMS, "default", "held")

    first_code, first = await _delete(http, path)
    revision = server.storage.revision
    second_code, second = await _delete(http, path)
    revision_after_second = server.storage.revision
    await client.patch(kinds.RESOURCE_CLAIMS, "held", {"metadata": {"finalizers": None}}, "default")

    assert first_code == second_code == 200
    assert first["kind"] == "ResourceClaim" and first["metadata"]["deletionTimestamp"]
    assert first["metadata"]["deletionGracePeriodSeconds"] == 0
    assert second == first
    assert revision_after_second == revision
    with pytest.raises(errors.StatusError) as err:
        await client.get(kinds.RESOURCE_CLAIMS, "held", "default")
    assert err.value.code == 404


async def test_finalizers_cannot_be_added_once_deletion_started(server: HttpServer) -> None:
    client = server.client()
    await client.create(
        kinds.CONFIGMAPS, {"metadata": {"name": "x", "finalizers": ["a/b"]}}, "default"
    )
    await client.delete(kinds.CONFIGMAPS, "x", "default")
    revision = server.storage.revision

    with pytest.raises(errors.StatusError) as err:
        await client.patch(
            kinds.CONFIGMAPS, "x", {"metadata": {"finalizers": ["a/b", "c/d"]}}, "default"
        )

    assert (err.value.code, err.value.reason) == (422, "Invalid")
    assert server.storage.revision == revision


async def _exists(client: RESTClient, rt: Any, name: str) -> bool:
    try:
        await client.get(rt, name, "default")
    except errors.StatusError as err:
        if err.code == 404:
            return False
        raise
    return True


async def _owned_claims(client: RESTClient, pod: Obj, count: int) -> None:
    for i in range(count):
        owned = make_claim(f"claim-{i}").owner("Pod", "owner", pod["metadata"]["uid"]).obj()
        owned["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = True
        await client.create(kinds.RESOURCE_CLAIMS, owned)


@pytest.fixture
async def controllers(server: HttpServer) -> AsyncIterator[ControllerManager]:
    manager = ControllerManager(server.client(), mode=versions.CLASSIC)
    task = asyncio.create_task(manager.run())
    yield manager
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
async def test_cascading_delete_removes_dependents(
    server: HttpServer, controllers: ControllerManager, policy: str
) -> None:
    client = server.client()
    pod = await client.create(kinds.PODS, make_pod("owner").node("n1").obj())
    await _owned_claims(client, pod, 2)

    deleted = await client.delete(
        kinds.PODS, "owner", "default", propagation_policy=policy, grace_period_seconds=0
    )

    if policy == "Foreground":
        assert deleted["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert deleted["metadata"]["deletionTimestamp"]
    await wait_for(lambda: _count(client, kinds.RESOURCE_CLAIMS, 0), timeout=10)
    await wait_for(lambda: _not(_exists(client, kinds.PODS, "owner")), timeout=10)
    assert (await client.list(kinds.RESOURCE_CLAIMS, "default"))["items"] == []


async def _count(client: RESTClient, rt: Any, want: int) -> bool:
    return len((await client.list(rt, "default"))["items"]) == want


async def _not(value: Awaitable[bool]) -> bool:
    return not await value


async def test_orphan_delete_strips_owner_references(
    server: HttpServer, controllers: ControllerManager
) -> None:
    client = server.client()
    pod = await client.create(kinds.PODS, make_pod("owner").obj())
    await _owned_claims(client, pod, 2)

    deleted = await client.delete(kinds.PODS, "owner", "default", propagation_policy="Orphan")

    assert deleted["metadata"]["finalizers"] == ["orphan"]
    await wait_for(lambda: _not(_exists(client, kinds.PODS, "owner")), timeout=10)
    claims = (await client.list(kinds.RESOURCE_CLAIMS, "default"))["items"]
    assert [c["metadata"]["name"] for c in claims] == ["claim-0", "claim-1"]
    assert [c["metadata"].get("ownerReferences") for c in claims] == [None, None]


async def test_create_in_a_terminating_namespace_is_403(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    client = server.client()
    await client.create(kinds.NAMESPACES, {"metadata": {"name": "leaving"}})
    deleted = await client.delete(kinds.NAMESPACES, "leaving")
    revision = server.storage.revision

    async with http.post(
        resource_path(kinds.CONFIGMAPS, "leaving"), json={"metadata": {"name": "late"}}
    ) as resp:
        body = orjson.loads(await resp.read())

    assert deleted["status"]["phase"] == "Terminating"
    assert (resp.status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'configmaps "late" is forbidden: unable to create new content in namespace leaving '
        "because it is being terminated"
    )
    assert body["details"] == {
        "name": "late",
        "kind": "configmaps",
        "causes": [
            {
                "reason": "NamespaceTerminating",
                "message": "namespace leaving is being terminated",
                "field": "metadata.namespace",
            }
        ],
    }
    assert server.storage.revision == revision
