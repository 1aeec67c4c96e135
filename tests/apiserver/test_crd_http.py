"""Custom resources over HTTPS: discovery of the CRD's group as soon as it is Established and
not after it is deleted, the REST paths with field selectors, deletecollection and watch, a
422 with causes, and the official Python client's DynamicClient driving a custom resource."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import config as k8s_config, dynamic  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from draplane.api import kinds  # noqa: E402
from draplane.testing.apistate import wait_for  # noqa: E402
from draplane.testing.crds import make_crd, make_widget  # noqa: E402
from draplane.testing.httpserver import HttpServer  # noqa: E402

BASE = "/apis/example.com/v1"


async def _json(http: aiohttp.ClientSession, method: str, path: str, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    data = orjson.dumps(body) if body is not None else None
    async with http.request(method, path, data=data, headers=headers) as resp:
        return resp.status, orjson.loads(await resp.read())


async def test_preferred_version_by_version_priority(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(
        kinds.CUSTOM_RESOURCE_DEFINITIONS, make_crd(versions=("v1beta1", "v1", "v2alpha1"))
    )

    _, group = await _json(http, "GET", "/apis/example.com")

    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1", "v2alpha1"]
    assert group["preferredVersion"]["version"] == "v1"


@pytest.fixture
async def crd_server(server: HttpServer) -> HttpServer:
    await server.client().create(kinds.CUSTOM_RESOURCE_DEFINITIONS, make_crd(scope="Namespaced"))
    return server


async def test_discovery_follows_the_crd(
    crd_server: HttpServer, http: aiohttp.ClientSession
) -> None:
    _, groups = await _json(http, "GET", "/apis")
    _, group = await _json(http, "GET", "/apis/example.com")
    _, resources = await _json(http, "GET", BASE)

    await crd_server.client().delete(kinds.CUSTOM_RESOURCE_DEFINITIONS, "widgets.example.com")
    await wait_for(lambda: not crd_server.registry.kinds.custom(), what="CRD gone")
    gone, _ = await _json(http, "GET", BASE)
    _, groups_after = await _json(http, "GET", "/apis")

    assert {
        "name": "example.com",
        "versions": [{"groupVersion": "example.com/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "example.com/v1", "version": "v1"},
    } in groups["groups"]
    assert group["preferredVersion"]["groupVersion"] == "example.com/v1"
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["widgets"]["kind"] == "Widget" and by_name["widgets"]["namespaced"] is True
    assert by_name["widgets"]["singularName"] == "widget"
    assert by_name["widgets/status"]["verbs"] == ["get", "patch", "update"]
    assert (by_name["widgets/scale"]["group"], by_name["widgets/scale"]["kind"]) == (
        "autoscaling",
        "Scale",
    )
    assert gone == 404
    assert "example.com" not in {g["name"] for g in groups_after["groups"]}


async def test_rest_paths_selectors_deletecollection_and_watch(
    crd_server: HttpServer, http: aiohttp.ClientSession
) -> None:
    watch = await http.get(f"{BASE}/namespaces/default/widgets?watch=1")
    created = [
        await _json(http, "POST", f"{BASE}/namespaces/default/widgets", make_widget(n))
        for n in ("a", "b")
    ]
    invalid = await _json(
        http, "POST", f"{BASE}/namespaces/default/widgets", make_widget("c", replicas="x")
    )
    _, selected = await _json(http, "GET", f"{BASE}/widgets?fieldSelector=metadata.name%3Db")
    bad_selector, _ = await _json(http, "GET", f"{BASE}/widgets?fieldSelector=spec.size%3Dx")
    _, deleted = await _json(http, "DELETE", f"{BASE}/namespaces/default/widgets")
    events = []
    while len(events) < 4:
        events.append(orjson.loads(await watch.content.readline()))
    watch.close()

    assert [code for code, _ in created] == [201, 201]
    assert invalid[0] == 422
    assert invalid[1]["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "string": spec.replicas in body must be of type '
            'integer: "string"',
            "field": "spec.replicas",
        }
    ]
    assert [i["metadata"]["name"] for i in selected["items"]] == ["b"]
    assert selected["kind"] == "WidgetList" and selected["apiVersion"] == "example.com/v1"
    assert bad_selector == 400
    assert sorted(i["metadata"]["name"] for i in deleted["items"]) == ["a", "b"]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("DELETED", "a"),
        ("DELETED", "b"),
    ]


async def test_python_dynamic_client_drives_a_custom_resource(crd_server: HttpServer) -> None:
    api = k8s_config.new_client_from_config(config_file=str(crd_server.kubeconfig_path))

    def scenario() -> tuple[Any, ...]:
        client = dynamic.DynamicClient(api)
        widgets = client.resources.get(api_version="example.com/v1", kind="Widget")
        created = widgets.create(body=make_widget("py", replicas=2), namespace="default")
        listed = widgets.get(namespace="default")
        patched = widgets.patch(
            name="py",
            namespace="default",
            body={"spec": {"size": "large"}},
            content_type="application/merge-patch+json",
        )
        try:
            widgets.create(body=make_widget("bad", size="huge"), namespace="default")
            invalid = 0
        except ApiException as err:
            invalid = err.status
        widgets.delete(name="py", namespace="default")
        return created, listed, patched, invalid

    try:
        created, listed, patched, invalid = await asyncio.to_thread(scenario)
    finally:
        api.close()
        api.rest_client.pool_manager.clear()

    assert created.metadata.uid and created.spec.replicas == 2
    assert [i.metadata.name for i in listed.items] == ["py"]
    assert patched.spec.size == "large"
    assert invalid == 422
