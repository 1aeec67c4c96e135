"""RESTClient with several API server URLs: it moves on to the next one when a server refuses the
connection or answers 503, stays on the one that works, and when none does raises the 503 of one
that answered (else the connection error); kubeconfigs carry the list in the
`draplane.io/servers` cluster extension."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from aiohttp import web

from draplane.api import errors, kinds, meta
from draplane.apiserver.kubeconfig import build_kubeconfig
from draplane.client.kubeconfig import KubeconfigError, parse_kubeconfig
from draplane.client.rest import RESTClient
from draplane.testing.commands import free_port
from draplane.testing.httpserver import HttpServer

UNAVAILABLE = orjson.dumps(
    {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": 503,
        "reason": "ServiceUnavailable",
        "message": "etcd is unavailable",
    }
)


@pytest.fixture
async def unavailable_url() -> AsyncIterator[str]:
    """A plain HTTP server answering every request with a 503 Status."""

    async def answer(_: web.Request) -> web.Response:
        return web.Response(status=503, body=UNAVAILABLE, content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


def refused_url() -> str:
    return f"https://127.0.0.1:{free_port()}"


@pytest.mark.parametrize(
    ("first", "write_resent"),
    [pytest.param("refused", True, id="refused"), pytest.param("unavailable", False, id="503")],
)
async def test_requests_and_watches_fail_over_to_the_next_server(
    server: HttpServer, unavailable_url: str, first: str, write_resent: bool
) -> None:
    dead = refused_url() if first == "refused" else unavailable_url
    config = server.kubeconfig().with_servers(f"{dead},{server.url}")
    client, reader, watcher = RESTClient(config), RESTClient(config), RESTClient(config)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "failover"}}
    try:
        assert client.server == dead
        if not write_resent:  # the server may have applied it: raised, the next one goes on
            with pytest.raises(errors.StatusError) as err:
                await client.create(kinds.CONFIGMAPS, cm, "default")
            assert err.value.code == 503
        created = await client.create(kinds.CONFIGMAPS, cm, "default")
        assert client.server == server.url
        got = await reader.get(kinds.CONFIGMAPS, "failover", "default")
        assert meta.uid(got) == meta.uid(created)
        assert reader.server == server.url
        watch = await watcher.watch(kinds.CONFIGMAPS, "default", resource_version="0")
        try:
            event = await anext(aiter(watch))
        finally:
            await watch.close()
        assert (event.type, meta.name(event.object)) == ("ADDED", "failover")
        assert watcher.server == server.url
    finally:
        for c in (client, reader, watcher):
            await c.close()


@pytest.mark.parametrize("unavailable_first", [True, False], ids=["503-first", "refused-first"])
async def test_every_server_failing_raises_the_answer_of_the_one_that_answered(
    unavailable_url: str, unavailable_first: bool
) -> None:
    urls = [unavailable_url, refused_url()]
    if not unavailable_first:
        urls.reverse()
    config = parse_kubeconfig(
        build_kubeconfig(server=",".join(urls), ca_pem=b"", user="u", token="t"), base=Path(".")
    )
    client = RESTClient(config)
    try:
        with pytest.raises(errors.StatusError) as err:
            await client.get(kinds.NAMESPACES, "default")
    finally:
        await client.close()
    assert (err.value.code, err.value.reason) == (503, "ServiceUnavailable")


@pytest.mark.parametrize(
    ("server", "endpoints"),
    [
        pytest.param("https://a:1", ("https://a:1",), id="one"),
        pytest.param("https://a:1/,https://b:2", ("https://a:1", "https://b:2"), id="two"),
        pytest.param(" https://a:1 , ,https://b:2", ("https://a:1", "https://b:2"), id="spaces"),
    ],
)
def test_kubeconfig_server_lists(server: str, endpoints: tuple[str, ...]) -> None:
    doc = build_kubeconfig(server=server, ca_pem=b"", user="u", token="t")
    config = parse_kubeconfig(doc, base=Path("."))
    assert (config.server, config.endpoints) == (endpoints[0], endpoints)
    has_extension = "extensions" in doc["clusters"][0]["cluster"]
    assert has_extension == (len(endpoints) > 1)


@pytest.mark.parametrize(
    ("urls", "message"),
    [
        pytest.param("", "no server URL given", id="empty"),
        pytest.param("https://a:1,ftp://b", "is not an http(s) URL", id="not-http"),
    ],
)
def test_bad_server_lists(server: HttpServer, urls: str, message: str) -> None:
    with pytest.raises(KubeconfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        server.kubeconfig().with_servers(urls)
