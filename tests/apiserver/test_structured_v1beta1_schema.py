"""resource.k8s.io/v1beta1 has its own schema in the 1.36 mode: flat request fields and
`basic` devices decode under Strict field validation (unknown fields are 400s with v1beta1's
paths, decoded before conversion to v1), unknown fields are dropped under Warn, and the
OpenAPI v3 document of the version describes the v1beta1 shapes (what `kubectl explain` reads)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from draplane.api import versions
from draplane.testing.httpserver import HttpServer, start_http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

BASE = "/apis/resource.k8s.io/v1beta1"
CLAIMS = f"{BASE}/namespaces/default/resourceclaims"
SLICES = f"{BASE}/resourceslices"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    srv = await start_http_server(tmp_path_factory.mktemp("v1beta1"), mode=versions.STRUCTURED)
    yield srv
    await srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http(server: HttpServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with server.session() as session:
        yield session


# Hand-built, not draplane.testing.structured: v1beta1 objects (flat requests, `basic` devices),
# a shape the v1 builders do not write.
def _claim(name: str, **extra: Any) -> dict[str, Any]:
    request = {
        "name": "gpu",
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": 2,
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
        **extra,
    }
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [request]}},
    }


def _slice(name: str, **extra: Any) -> dict[str, Any]:
    basic = {
        "attributes": {"model": {"string": "a100"}},
        "capacity": {"memory": {"value": "40Gi"}},
        **extra,
    }
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "node-0", "generation": 0, "resourceSliceCount": 1},
            "nodeName": "node-0",
            "devices": [{"name": "gpu-0", "basic": basic}],
        },
    }


async def _post(
    http: aiohttp.ClientSession, path: str, obj: dict[str, Any], mode: str
) -> tuple[int, Any, list[str]]:
    async with http.post(
        path,
        data=orjson.dumps(obj),
        params={"fieldValidation": mode},
        headers={"Content-Type": "application/json"},
    ) as resp:
        return resp.status, await resp.json(), resp.headers.getall("Warning", [])


@pytest.mark.parametrize(
    ("path", "obj", "mode", "status", "problem"),
    [
        pytest.param(CLAIMS, _claim("flat"), "Strict", 201, "", id="flat-request"),
        pytest.param(SLICES, _slice("basic"), "Strict", 201, "", id="basic-device"),
        pytest.param(
            CLAIMS,
            _claim("typo", deviceClassNmae="x"),
            "Strict",
            400,
            'ResourceClaim in version "v1beta1" cannot be handled as a ResourceClaim: strict '
            'decoding error: unknown field "spec.devices.requests[0].deviceClassNmae"',
            id="unknown-request-field",
        ),
        pytest.param(
            CLAIMS,
            _claim("exactly", exactly={"deviceClassName": "gpu"}),
            "Strict",
            400,
            'unknown field "spec.devices.requests[0].exactly"',
            id="v1-field-at-v1beta1",
        ),
        pytest.param(
            SLICES,
            _slice("typo-slice", attributez={}),
            "Strict",
            400,
            'ResourceSlice in version "v1beta1" cannot be handled as a ResourceSlice: strict '
            'decoding error: unknown field "spec.devices[0].basic.attributez"',
            id="unknown-basic-field",
        ),
        pytest.param(
            CLAIMS,
            _claim("warned", deviceClassNmae="x"),
            "Warn",
            201,
            'unknown field "spec.devices.requests[0].deviceClassNmae"',
            id="warn-drops",
        ),
    ],
)
async def test_v1beta1_field_validation(
    http: aiohttp.ClientSession,
    path: str,
    obj: dict[str, Any],
    mode: str,
    status: int,
    problem: str,
) -> None:
    got, body, warnings = await _post(http, path, obj, mode)

    assert got == status, body
    if status == 400:
        assert problem in body["message"]
    elif problem:
        assert any(problem.replace('"', '\\"') in w for w in warnings), warnings
        assert "deviceClassNmae" not in body["spec"]["devices"]["requests"][0]
    if path == CLAIMS and status == 201:
        request = body["spec"]["devices"]["requests"][0]
        assert (request["deviceClassName"], request["count"]) == ("gpu", 2)
    if path == SLICES and status == 201:
        device = body["spec"]["devices"][0]
        assert device["basic"]["capacity"] == {"memory": {"value": "40Gi"}}


async def test_openapi_v3_describes_the_v1beta1_shapes(http: aiohttp.ClientSession) -> None:
    async with http.get(f"/openapi/v3{BASE}") as resp:
        assert resp.status == 200
        doc = await resp.json()
    schemas = doc["components"]["schemas"]
    request = schemas["io.k8s.api.resource.v1beta1.DeviceRequest"]["properties"]
    device = schemas["io.k8s.api.resource.v1beta1.Device"]["properties"]

    assert {"deviceClassName", "allocationMode", "count", "selectors", "adminAccess"} <= set(
        request
    )
    assert "firstAvailable" in request and "exactly" not in request
    assert set(device) == {"name", "basic"}
    assert "attributes" in schemas["io.k8s.api.resource.v1beta1.BasicDevice"]["properties"]
