"""Request bodies over raw HTTP: JSON with and without Content-Type, YAML, the protobuf envelope,
patch content types, DeleteOptions, and the 400 / 413 / 415 errors for bodies that do not fit."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from draplane.api import kinds
from draplane.apiserver.negotiation import MAX_BODY
from draplane.testing.httpserver import HttpServer

CM_PATH = "/api/v1/namespaces/default/configmaps"


async def _send(
    http: aiohttp.ClientSession, method: str, path: str, body: bytes, content_type: str | None
) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": content_type} if content_type is not None else {}
    async with http.request(method, path, data=body, headers=headers) as resp:
        # Without an explicit header aiohttp would label bytes application/octet-stream.
        return resp.status, orjson.loads(await resp.read())


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _pb(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _pb_envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _pb(1, api_version.encode()) + _pb(2, kind.encode())
    return b"k8s\x00" + _pb(1, type_meta) + _pb(2, raw) + _pb(3, b"") + _pb(4, b"")


def _pb_metadata(name: str, *, labels: dict[str, str] | None = None) -> bytes:
    # gogo-protobuf writes every string field and a zero creationTimestamp message.
    md = _pb(1, name.encode()) + _pb(2, b"") + _pb(3, b"") + _pb(8, b"")
    for k, v in (labels or {}).items():
        md += _pb(11, _pb(1, k.encode()) + _pb(2, v.encode()))
    return md


@dataclass(frozen=True)
class BodyCase:
    content_type: str | None
    body: bytes


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            BodyCase("application/json", b'{"metadata":{"name":"cm"},"data":{"a":"1"}}'), id="json"
        ),
        pytest.param(
            BodyCase(
                "application/json; charset=utf-8",
                b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm"},"data":{"a":"1"}}',
            ),
            id="json-with-charset-and-type",
        ),
        pytest.param(
            BodyCase("", b'{"metadata":{"name":"cm"},"data":{"a":"1"}}'),
            id="no-content-type-is-json",
        ),
        pytest.param(
            BodyCase(
                "application/yaml",
                b"kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: cm\ndata:\n  a: '1'\n",
            ),
            id="yaml",
        ),
        pytest.param(
            BodyCase(
                "application/vnd.kubernetes.protobuf",
                _pb_envelope(
                    "v1",
                    "ConfigMap",
                    _pb(1, _pb_metadata("cm")) + _pb(2, _pb(1, b"a") + _pb(2, b"1")),
                ),
            ),
            id="protobuf-configmap",
        ),
    ],
)
async def test_create_body_encodings(
    server: HttpServer, http: aiohttp.ClientSession, case: BodyCase
) -> None:
    code, created = await _send(http, "POST", CM_PATH, case.body, case.content_type)

    assert code == 201, created
    stored = await server.client().get(kinds.CONFIGMAPS, "cm", "default")
    assert (stored["kind"], stored["data"]) == ("ConfigMap", {"a": "1"})
    assert created["metadata"]["uid"] == stored["metadata"]["uid"]


async def test_protobuf_namespace_create(server: HttpServer, http: aiohttp.ClientSession) -> None:
    body = _pb_envelope(
        "v1",
        "Namespace",
        _pb(1, _pb_metadata("pb-ns", labels={"team": "a"})) + _pb(2, b"") + _pb(3, b""),
    )

    code, created = await _send(
        http, "POST", "/api/v1/namespaces", body, "application/vnd.kubernetes.protobuf"
    )

    assert code == 201, created
    stored = await server.client().get(kinds.NAMESPACES, "pb-ns")
    assert stored["metadata"]["labels"] == {"team": "a"}
    assert "creationTimestamp" in stored["metadata"]


async def test_post_without_content_type_header_is_json(server: HttpServer) -> None:
    # The Python client posts without Content-Type; aiohttp always adds one, so write by hand.
    body = b'{"metadata":{"name":"raw"}}'
    request = (
        f"POST {CM_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.token()}"
        f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", server.server.port, ssl=server.ssl_context()
    )
    writer.write(request)
    response = await reader.read()
    writer.close()

    assert response.startswith(b"HTTP/1.1 201"), response[:200]
    stored = await server.client().get(kinds.CONFIGMAPS, "raw", "default")
    assert stored["metadata"]["name"] == "raw"


@dataclass(frozen=True)
class RejectCase:
    method: str
    path: str
    content_type: str
    body: bytes
    code: int
    reason: str


_PB = "application/vnd.kubernetes.protobuf"
_POD_PATH = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            RejectCase("POST", CM_PATH, "application/json", b'{"metadata": {', 400, "BadRequest"),
            id="malformed-json",
        ),
        pytest.param(
            RejectCase(
                "POST", CM_PATH, "application/yaml", b"metadata: [unclosed", 400, "BadRequest"
            ),
            id="malformed-yaml",
        ),
        pytest.param(
            RejectCase("POST", CM_PATH, "application/json", b"[1, 2]", 400, "BadRequest"),
            id="json-not-an-object",
        ),
        pytest.param(
            RejectCase("POST", CM_PATH, "application/json", b"", 400, "BadRequest"), id="empty-body"
        ),
        pytest.param(
            RejectCase(
                "POST",
                CM_PATH,
                "application/json",
                b'{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"}}',
                400,
                "BadRequest",
            ),
            id="kind-mismatch",
        ),
        pytest.param(
            RejectCase(
                "POST",
                CM_PATH,
                "application/json",
                b'{"kind":"ConfigMap","apiVersion":"v2","metadata":{"name":"s"}}',
                400,
                "BadRequest",
            ),
            id="api-version-mismatch",
        ),
        pytest.param(
            RejectCase(
                "POST",
                CM_PATH,
                "application/json",
                b'{"metadata":{"name":"s","namespace":"other"}}',
                400,
                "BadRequest",
            ),
            id="namespace-mismatch",
        ),
        pytest.param(
            RejectCase("POST", CM_PATH, "text/plain", b"hello", 415, "UnsupportedMediaType"),
            id="text-plain",
        ),
        pytest.param(
            RejectCase(
                "POST",
                CM_PATH,
                _PB,
                _pb_envelope("example.com/v1", "Widget", _pb(1, _pb_metadata("p"))),
                415,
                "UnsupportedMediaType",
            ),
            id="protobuf-of-a-kind-without-protobuf-form",
        ),
        pytest.param(
            RejectCase("POST", CM_PATH, _PB, b"not-protobuf", 400, "BadRequest"),
            id="protobuf-without-magic",
        ),
        pytest.param(
            RejectCase("POST", CM_PATH, _PB, b"k8s\x00\x0a\xff", 400, "BadRequest"),
            id="truncated-protobuf",
        ),
        pytest.param(
            RejectCase(
                "PATCH", CM_PATH + "/x", "application/json", b"{}", 415, "UnsupportedMediaType"
            ),
            id="patch-with-plain-json",
        ),
        pytest.param(
            RejectCase(
                "PATCH", CM_PATH + "/x", "application/json-patch+json", b"{}", 400, "BadRequest"
            ),
            id="json-patch-not-a-list",
        ),
        pytest.param(
            RejectCase(
                "PATCH", CM_PATH + "/x", "application/merge-patch+json", b"{", 400, "BadRequest"
            ),
            id="malformed-merge-patch",
        ),
        pytest.param(
            RejectCase(
                "POST",
                CM_PATH,
                "application/json",
                b'{"metadata":{"name":"big"},"data":{"a":"' + b"x" * MAX_BODY + b'"}}',
                413,
                "RequestEntityTooLarge",
            ),
            id="body-over-3-mib",
        ),
        pytest.param(
            RejectCase(
                "DELETE", CM_PATH + "/x", "application/json", b'{"kind":"Pod"}', 400, "BadRequest"
            ),
            id="delete-options-of-wrong-kind",
        ),
    ],
)
async def test_rejected_bodies(http: aiohttp.ClientSession, case: RejectCase) -> None:
    code, status = await _send(http, case.method, case.path, case.body, case.content_type)

    assert (code, status["kind"], status["reason"], status["code"]) == (
        case.code,
        "Status",
        case.reason,
        case.code,
    )


async def test_json_patch_test_failure_is_invalid(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(
        kinds.CONFIGMAPS, {"metadata": {"name": "x", "namespace": "default"}}
    )
    patch = orjson.dumps([{"op": "test", "path": "/metadata/resourceVersion", "value": "0"}])

    code, status = await _send(http, "PATCH", CM_PATH + "/x", patch, "application/json-patch+json")

    assert (code, status["reason"]) == (422, "Invalid")


async def test_apply_patch_yaml_body_creates_object(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  k: v\n"

    code, obj = await _send(
        http, "PATCH", CM_PATH + "/ssa?fieldManager=test", body, "application/apply-patch+yaml"
    )

    assert code in (200, 201), obj
    assert (await server.client().get(kinds.CONFIGMAPS, "ssa", "default"))["data"] == {"k": "v"}


@pytest.mark.parametrize(
    ("query", "body"),
    [
        pytest.param("?gracePeriodSeconds=0", b"", id="query-parameters"),
        pytest.param(
            "",
            b'{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,'
            b'"propagationPolicy":"Background"}',
            id="delete-options-body",
        ),
        pytest.param(
            "",
            b'{"propagationPolicy":"Background","gracePeriodSeconds":0}',
            id="kubectl-body-without-kind",
        ),
    ],
)
async def test_delete_options(
    server: HttpServer, http: aiohttp.ClientSession, query: str, body: bytes
) -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    await server.client().create(kinds.PODS, pod)

    code, _ = await _send(http, "DELETE", f"{_POD_PATH}/p{query}", body, "application/json")

    assert code == 200
    assert (await server.client().list(kinds.PODS, "default"))["items"] == []


async def test_delete_precondition_mismatch_conflicts(
    server: HttpServer, http: aiohttp.ClientSession
) -> None:
    await server.client().create(
        kinds.CONFIGMAPS, {"metadata": {"name": "x", "namespace": "default"}}
    )
    body = orjson.dumps({"preconditions": {"uid": "not-the-uid"}})

    code, status = await _send(http, "DELETE", CM_PATH + "/x", body, "application/json")

    assert (code, status["reason"]) == (409, "Conflict")
