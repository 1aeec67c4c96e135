"""/openapi/v3 and /openapi/v2 (JSON): every served kind has a schema with its
group-version-kind, every $ref resolves, and each PATCH operation carries what kubectl looks for
(the kind, the fieldValidation parameter, the strategic-merge content type)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from draplane.api import kinds, schema
from draplane.apiserver import openapi


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


async def _json(http: aiohttp.ClientSession, path: str) -> Any:
    async with http.get(path) as resp:
        assert resp.status == 200, path
        return await resp.json()


async def test_v3_index_and_documents(http: aiohttp.ClientSession) -> None:
    index = await _json(http, "/openapi/v3")
    # Every group-version with a kind of a registered schema: apiextensions.k8s.io/v1 too.
    base = schema.schemas_for()
    with_schema = [rt for rt in kinds.SERVED if schema.for_resource(base, rt) is not schema.GENERIC]
    expected = {openapi.gv_path(rt.group, rt.version) for rt in with_schema}
    assert "apis/apiextensions.k8s.io/v1" in expected
    assert set(index["paths"]) == expected
    gvks_with_patch: set[tuple[str, str, str]] = set()
    gvks_with_schema: set[tuple[str, str, str]] = set()
    for entry in index["paths"].values():
        assert "?hash=" in entry["serverRelativeURL"]
        doc = await _json(http, entry["serverRelativeURL"])
        assert doc["openapi"] == "3.0.0"
        schemas = doc["components"]["schemas"]
        unresolved = {
            ref for ref in _refs(doc) if ref.removeprefix("#/components/schemas/") not in schemas
        }
        assert unresolved == set()
        for definition in schemas.values():
            for gvk in definition.get("x-kubernetes-group-version-kind", []):
                gvks_with_schema.add((gvk["group"], gvk["version"], gvk["kind"]))
        for item in doc["paths"].values():
            patch = item.get("patch")
            if patch is None:
                continue
            gvk = patch["x-kubernetes-group-version-kind"]
            assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
            assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
            gvks_with_patch.add((gvk["group"], gvk["version"], gvk["kind"]))
    served = {(rt.group, rt.version, rt.kind) for rt in with_schema}
    assert served <= gvks_with_schema
    assert gvks_with_patch == {
        (rt.group, rt.version, rt.kind) for rt in with_schema if "patch" in rt.verbs
    }


@pytest.mark.parametrize(
    ("path", "code"),
    [
        pytest.param("/openapi/v3/apis/resource.k8s.io/v1alpha2", 200, id="group"),
        pytest.param("/openapi/v3/api/v1", 200, id="core"),
        pytest.param("/openapi/v3/apis/nothing.example.com/v1", 404, id="unknown-group"),
        pytest.param("/openapi/v3/apis/resource.k8s.io", 404, id="group-without-version"),
    ],
)
async def test_v3_document_paths(http: aiohttp.ClientSession, path: str, code: int) -> None:
    async with http.get(path) as resp:
        assert resp.status == code


async def test_claim_schema_fields(http: aiohttp.ClientSession) -> None:
    doc = await _json(http, "/openapi/v3/apis/resource.k8s.io/v1alpha2")
    schemas = doc["components"]["schemas"]
    claim = schemas["io.k8s.api.resource.v1alpha2.ResourceClaim"]
    assert claim["x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "kind": "ResourceClaim", "version": "v1alpha2"}
    ]
    assert claim["required"] == ["spec"]
    spec = schemas["io.k8s.api.resource.v1alpha2.ResourceClaimSpec"]["properties"]
    assert spec["allocationMode"]["enum"] == ["Immediate", "WaitForFirstConsumer"]
    reserved = schemas["io.k8s.api.resource.v1alpha2.ResourceClaimStatus"]["properties"][
        "reservedFor"
    ]
    assert (reserved["x-kubernetes-list-type"], reserved["x-kubernetes-list-map-keys"]) == (
        "map",
        ["uid"],
    )


async def test_v2_json_has_definitions(http: aiohttp.ClientSession) -> None:
    async with http.get("/openapi/v2", headers={"Accept": "application/json"}) as resp:
        doc = await resp.json()
    definitions = doc["definitions"]
    assert "io.k8s.api.core.v1.Pod" in definitions
    unresolved = {
        ref for ref in _refs(doc) if ref.removeprefix("#/definitions/") not in definitions
    }
    assert unresolved == set()
    containers = definitions["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
