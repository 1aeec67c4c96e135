"""RESTClient against a real HTTPS API server: kubeconfig loading, error mapping, watches with
large events, and one pooled connection."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from draplane.api import errors, kinds
from draplane.api.request import resource_path
from draplane.client.kubeconfig import KubeconfigError, load_kubeconfig
from draplane.client.rest import RESTClient, status_error
from draplane.testing.builders import make_claim
from draplane.testing.httpserver import HttpServer


async def test_from_kubeconfig_talks_to_the_server(server: HttpServer) -> None:
    client = RESTClient.from_kubeconfig(server.kubeconfig_path)
    try:
        namespaces = await client.list(kinds.NAMESPACES)
    finally:
        await client.close()

    assert client.user == "admin"
    assert "default" in [n["metadata"]["name"] for n in namespaces["items"]]


def _kubeconfig(cluster: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }


async def test_kubeconfig_with_ca_file_and_token_file(server: HttpServer, tmp_path: Path) -> None:
    (tmp_path / "token").write_text(server.token() + "\n")
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            _kubeconfig(
                {"server": server.url, "certificate-authority": str(server.data_dir / "ca.crt")},
                {"tokenFile": "token"},
            )
        )
    )
    client = RESTClient.from_kubeconfig(path)
    try:
        result = await client.get(kinds.NAMESPACES, "default")
    finally:
        await client.close()

    assert result["metadata"]["name"] == "default"


async def test_insecure_skip_tls_verify(server: HttpServer, tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            _kubeconfig(
                {"server": server.url, "insecure-skip-tls-verify": True}, {"token": server.token()}
            )
        )
    )
    client = RESTClient.from_kubeconfig(path)
    try:
        result = await client.get(kinds.NAMESPACES, "default")
    finally:
        await client.close()

    assert result["kind"] == "Namespace"


async def test_untrusted_server_certificate_fails(server: HttpServer, tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(_kubeconfig({"server": server.url}, {"token": "x"})))
    client = RESTClient.from_kubeconfig(path)
    try:
        with pytest.raises(Exception, match="certificate"):
            await client.get(kinds.NAMESPACES, "default")
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param({"clusters": []}, "current-context", id="no-current-context"),
        pytest.param(
            {**_kubeconfig({"server": "https://x"}, {}), "current-context": "y"},
            "no context named 'y'",
            id="unknown-context",
        ),
        pytest.param(_kubeconfig({}, {}), "has no server", id="no-server"),
        pytest.param([1, 2], "not a mapping", id="not-a-mapping"),
    ],
)
def test_bad_kubeconfigs(tmp_path: Path, doc: Any, message: str) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(doc))

    with pytest.raises(KubeconfigError, match=message):
        load_kubeconfig(path)


def test_kubeconfig_certificate_authority_data(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            _kubeconfig(
                {
                    "server": "https://127.0.0.1:1/",
                    "certificate-authority-data": base64.b64encode(b"PEM").decode(),
                },
                {"token": "t"},
            )
        )
    )

    config = load_kubeconfig(path)

    assert (config.server, config.ca_pem, config.token, config.user) == (
        "https://127.0.0.1:1",
        b"PEM",
        "t",
        "u",
    )


@pytest.mark.parametrize(
    ("code", "body", "reason", "message"),
    [
        pytest.param(
            404,
            b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":'
            b'"NotFound","message":"pods \\"x\\" not found","code":404}',
            "NotFound",
            'pods "x" not found',
            id="status-body",
        ),
        pytest.param(
            502,
            b"<html>bad gateway</html>",
            "Unknown",
            "the server responded with HTTP 502: <html>bad gateway</html>",
            id="html-body",
        ),
        pytest.param(
            503, b"", "ServiceUnavailable", "the server responded with HTTP 503: ", id="empty-body"
        ),
        pytest.param(
            409,
            b'{"kind":"Other"}',
            "Conflict",
            'the server responded with HTTP 409: {"kind":"Other"}',
            id="json-not-status",
        ),
    ],
)
def test_status_error_mapping(code: int, body: bytes, reason: str, message: str) -> None:
    err = status_error(code, body)

    assert (err.code, err.reason, err.message) == (code, reason, message)


async def test_non_status_error_body_from_a_plain_http_server(tmp_path: Path) -> None:
    async def teapot(_: web.Request) -> web.Response:
        return web.Response(status=500, text="boom")

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default", teapot)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            _kubeconfig({"server": f"http://127.0.0.1:{runner.addresses[0][1]}"}, {"token": "t"})
        )
    )
    client = RESTClient.from_kubeconfig(path)
    try:
        with pytest.raises(errors.StatusError) as err:
            await client.get(kinds.NAMESPACES, "default")
    finally:
        await client.close()
        await runner.cleanup()

    assert (err.value.code, err.value.reason) == (500, "InternalError")


async def test_watch_reads_events_larger_than_stream_buffers(server: HttpServer) -> None:
    client = server.client()
    big = "x" * (1024 * 1024)
    stream = await client.watch(kinds.CONFIGMAPS, "default", resource_version="1")
    await client.create(
        kinds.CONFIGMAPS,
        {"metadata": {"name": "big", "namespace": "default"}, "data": {"blob": big}},
    )

    event = await asyncio.wait_for(anext(aiter(stream)), timeout=5)
    await stream.close()

    assert (event.type, len(event.object["data"]["blob"])) == ("ADDED", len(big))


async def test_resource_claim_round_trip_through_status(server: HttpServer) -> None:
    client = server.client()
    claim = await client.create(kinds.RESOURCE_CLAIMS, make_claim("c").obj())
    allocated = {
        **claim,
        "status": {
            "driverName": "driver.example.com",
            "allocation": {"resourceHandles": [{"driverName": "driver.example.com"}]},
        },
    }

    updated = await client.update(kinds.RESOURCE_CLAIMS, allocated, subresource="status")

    assert updated["status"]["driverName"] == "driver.example.com"


@pytest.mark.parametrize(
    ("args", "path"),
    [
        pytest.param(
            (kinds.PODS, "ns", "p", "status"),
            "/api/v1/namespaces/ns/pods/p/status",
            id="pod-status",
        ),
        pytest.param((kinds.PODS,), "/api/v1/pods", id="all-pods"),
        pytest.param((kinds.NODES, "", "n"), "/api/v1/nodes/n", id="node"),
        pytest.param(
            (kinds.RESOURCE_CLAIMS, "d"),
            "/apis/resource.k8s.io/v1alpha2/namespaces/d/resourceclaims",
            id="claims",
        ),
    ],
)
def test_resource_path(args: tuple[Any, ...], path: str) -> None:
    assert resource_path(*args) == path
