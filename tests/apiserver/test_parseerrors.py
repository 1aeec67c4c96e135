"""Requests the HTTP parser refuses, sent as raw bytes over TLS to the real API server: each is
answered with a Kubernetes Status (414, 431, 400) and the connection is closed (the answer is
read to the end of the stream)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
import pytest_asyncio

from draplane.apiserver.parseerrors import MAX_HEADER_FIELD_BYTES, MAX_REQUEST_URI_BYTES
from draplane.testing.httpserver import HttpServer, start_http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpServer]:
    server = await start_http_server(tmp_path_factory.mktemp("parseerrors"))
    yield server
    await server.stop()


@dataclass(frozen=True)
class Answer:
    code: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


async def _send(server: HttpServer, raw: bytes) -> Answer:
    """Write `raw`, read the answer until the server closes the connection."""
    port = int(server.url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=server.ssl_context(), server_hostname="127.0.0.1"
    )
    try:
        writer.write(raw)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return Answer(int(status_line.split()[1]), headers, body)


def _get(path: str, *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers, "", ""]
    return "\r\n".join(lines).encode()


def _pad(path: str, uri_bytes: int) -> str:
    """`path` with a query parameter making the request URI `uri_bytes` long."""
    fixed = len(f"{path}?pad=")
    return f"{path}?pad={'x' * (uri_bytes - fixed)}"


@pytest.mark.parametrize(
    ("raw", "code", "reason", "message"),
    [
        pytest.param(
            _get(_pad("/version", MAX_REQUEST_URI_BYTES + 1)),
            414,
            "RequestURITooLong",
            f"Request-URI Too Long: the request URI is longer than {MAX_REQUEST_URI_BYTES} bytes",
            id="request-uri-too-long",
        ),
        pytest.param(
            _get("/version", "X-Padding: " + "x" * (2 * MAX_HEADER_FIELD_BYTES)),
            431,
            "RequestHeaderFieldsTooLarge",
            "Request Header Fields Too Large: a header field is longer than "
            f"{MAX_HEADER_FIELD_BYTES} bytes",
            id="header-field-too-long",
        ),
        pytest.param(
            b"NOT AN HTTP REQUEST\r\n\r\n", 400, "BadRequest", None, id="malformed-request-line"
        ),
    ],
)
async def test_unparsable_request_gets_a_status(
    server: HttpServer, raw: bytes, code: int, reason: str, message: str | None
) -> None:
    answer = await _send(server, raw)

    assert answer.code == code, answer.body
    assert answer.headers["content-type"].startswith("application/json")
    status = answer.json()
    assert status["kind"] == "Status"
    assert status["status"] == "Failure"
    assert (status["code"], status["reason"]) == (code, reason)
    if message is not None:
        assert status["message"] == message
    else:
        assert status["message"]


async def test_long_request_uri_within_the_limit_is_served(server: HttpServer) -> None:
    # Within the limit for either parser (the pure-Python one counts "GET " and " HTTP/1.1").
    answer = await _send(server, _get(_pad("/version", MAX_REQUEST_URI_BYTES - 16)))

    assert answer.code == 200, answer.body[:200]
    assert "gitVersion" in answer.json()
