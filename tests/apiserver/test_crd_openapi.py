"""Custom resources in /openapi/v3 and under fieldValidation, over HTTP: the index lists each
established CRD's group-versions (a CRD change gives a new hash, a deleted CRD's group-version
goes), each document has the kind's schema, the meta/v1 schemas it references and the REST
operations kubectl's field-validation check reads; an unknown field of a custom resource is a
400 under Strict, a warning under Warn and pruned silently under Ignore."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from draplane.testing.apistate import wait_for
from draplane.testing.crds import make_crd, make_widget
from draplane.testing.httpserver import HttpServer, start_http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")
_names = itertools.count()
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
WARNED = ['unknown field "spec.sizee"', 'unknown field "stats"']


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("crdopenapi"))
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        async with session.post(CRDS, json=make_crd(versions=("v1", "v2"))) as resp:
            assert resp.status == 201
        await wait_for(lambda: _index_has(session, "apis/example.com/v1"))
        yield session


async def _json(http: aiohttp.ClientSession, path: str) -> Any:
    async with http.get(path) as resp:
        assert resp.status == 200, path
        return await resp.json()


async def _index(http: aiohttp.ClientSession) -> dict[str, Any]:
    return (await _json(http, "/openapi/v3"))["paths"]  # type: ignore[no-any-return]


async def _index_has(http: aiohttp.ClientSession, key: str, present: bool = True) -> bool:
    return (key in await _index(http)) == present


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


@pytest.mark.parametrize("version", ["v1", "v2"])
async def test_crd_documents_have_schemas_and_operations(
    http: aiohttp.ClientSession, version: str
) -> None:
    url = (await _index(http))[f"apis/example.com/{version}"]["serverRelativeURL"]
    doc = await _json(http, url)

    schemas = doc["components"]["schemas"]
    assert {f"com.example.{version}.Widget", f"com.example.{version}.WidgetList"} <= set(schemas)
    assert {META + "ObjectMeta", META + "ListMeta", META + "Status", META + "Patch"} <= set(schemas)
    unresolved = {r for r in _refs(doc) if r.removeprefix("#/components/schemas/") not in schemas}
    assert unresolved == set()
    widget = schemas[f"com.example.{version}.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Widget", "version": version}
    ]
    assert widget["properties"]["spec"]["properties"]["size"]["enum"] == ["small", "large"]
    base = f"/apis/example.com/{version}/namespaces/{{namespace}}/widgets"
    assert set(doc["paths"]) == {base, base + "/{name}", base + "/{name}/status"}
    patch = doc["paths"][base + "/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "example.com",
        "kind": "Widget",
        "version": version,
    }
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    listed = doc["paths"][base]["get"]["responses"]["200"]["content"]["application/json"]
    assert listed["schema"] == {"$ref": f"#/components/schemas/com.example.{version}.WidgetList"}


async def test_index_follows_crd_changes(http: aiohttp.ClientSession) -> None:
    key = "apis/gadgets.example.org/v1"
    crd = make_crd(group="gadgets.example.org", plural="gadgets", kind="Gadget")
    async with http.post(CRDS, json=crd) as resp:
        assert resp.status == 201
    await wait_for(lambda: _index_has(http, key))
    first = (await _index(http))[key]["serverRelativeURL"]

    name = "/gadgets.gadgets.example.org"
    stored = await _json(http, CRDS + name)
    spec_schema = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["weight"] = {"type": "integer"}
    async with http.put(CRDS + name, json=stored) as resp:
        assert resp.status == 200

    async def changed() -> bool:
        return (await _index(http))[key]["serverRelativeURL"] != first

    await wait_for(changed)
    doc = await _json(http, (await _index(http))[key]["serverRelativeURL"])
    gadget = doc["components"]["schemas"]["org.example.gadgets.v1.Gadget"]
    assert gadget["properties"]["spec"]["properties"]["weight"] == {"type": "integer"}

    async with http.delete(CRDS + name) as resp:
        assert resp.status == 200
    await wait_for(lambda: _index_has(http, key, present=False))
    async with http.get("/openapi/v3/" + key) as resp:
        assert resp.status == 404


def _widget_with_unknown_fields() -> dict[str, Any]:
    obj = make_widget(f"w{next(_names)}", extra={"kept": 1})
    obj["spec"]["sizee"] = "x"
    obj["spec"]["tags"] = ["a"]
    obj["stats"] = {"n": 1}
    return obj


@pytest.mark.parametrize(
    ("mode", "code", "warned"),
    [
        pytest.param("Strict", 400, [], id="strict"),
        pytest.param("Warn", 201, WARNED, id="warn"),
        pytest.param(None, 201, WARNED, id="default"),
        pytest.param("Ignore", 201, [], id="ignore"),
    ],
)
@pytest.mark.parametrize("verb", ["create", "update"])
async def test_unknown_fields_of_a_custom_resource(
    http: aiohttp.ClientSession, verb: str, mode: str | None, code: int, warned: list[str]
) -> None:
    obj = _widget_with_unknown_fields()
    path = WIDGETS
    if verb == "update":
        async with http.post(WIDGETS, json=make_widget(obj["metadata"]["name"])) as resp:
            assert resp.status == 201
        path = f"{WIDGETS}/{obj['metadata']['name']}"
        code = 200 if code == 201 else code
    params = {"fieldValidation": mode} if mode else {}
    method = http.post if verb == "create" else http.put
    async with method(path, json=obj, params=params) as resp:
        result = await resp.json()
        headers = resp.headers.getall("Warning", [])

    assert resp.status == code, result
    assert headers == [f'299 - "{w.replace(chr(34), chr(92) + chr(34))}"' for w in warned]
    if code == 400:
        assert result["reason"] == "BadRequest"
        assert result["message"] == (
            'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
            'unknown field "spec.sizee", unknown field "stats"'
        )
        return
    assert "stats" not in result
    assert "sizee" not in result["spec"]
    assert result["spec"]["extra"] == {"kept": 1}
