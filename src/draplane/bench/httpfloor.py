"""`python -m draplane.bench.httpfloor MODE`: the least CPU one HTTPS request (`get`) or one
watch event (`watch`) costs on this machine with the HTTP stack draplane is built on, with no
API server behind it: the floor under `draplane.bench.httpcost`'s figures and under every
request and watch event of a `--processes` run.

The server runs in this process, the client (aiohttp's ClientSession, keep-alive, as
RESTClient uses it) in a child process, both on draplane's event loop, over TLS 1.3 with the API
server's kind of certificate. `--server aiohttp` answers with an aiohttp web application of one
route and no middleware; `--server protocol` with a bare `asyncio.Protocol` that finds the end
of each request head and writes a fixed response (TLS, sockets and the event loop alone). A GET
answers a ~2 KB JSON object, which the client decodes; a watch event is one ~2 KB JSON line in
a chunked response, written to every watcher every 2 ms, which each watcher reads and decodes.
Prints one JSON line: CPU ms per request (per delivered event for `watch`) on each side.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from draplane import eventloop, gcpolicy
from draplane.apiserver import certs
from draplane.bench.clientprocess import ClientProcess

WARMUP = 100
EVENT_SPACING = 0.002
BODY = orjson.dumps({"kind": "Pod", "apiVersion": "v1", "data": "x" * 2000})
EVENT = b'{"type":"ADDED","object":' + BODY + b"}\n"
_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
_GET_RESPONSE = _HEAD + b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY)
_WATCH_HEAD = _HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
_CHUNK = b"%x\r\n%s\r\n" % (len(EVENT), EVENT)


Stop = Callable[[], Awaitable[None]]


class _Watchers:
    """The server side's open watch streams: a write function each."""

    def __init__(self) -> None:
        self.writers: list[Callable[[bytes], object]] = []
        self.connected = asyncio.Event()


class _BareProtocol(asyncio.Protocol):
    """Answers each request head (no body is ever sent) with the fixed GET response, or starts a
    chunked stream for a path under /watch."""

    def __init__(self, watchers: _Watchers) -> None:
        self._watchers = watchers
        self._buffer = b""
        # uvloop's TLS transport is not an asyncio.Transport subclass; it has `write`.
        self._transport: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while (end := self._buffer.find(b"\r\n\r\n")) >= 0:
            head, self._buffer = self._buffer[:end], self._buffer[end + 4 :]
            if head.startswith(b"GET /watch"):
                self._transport.write(_WATCH_HEAD)
                self._watchers.writers.append(self._transport.write)
                self._watchers.connected.set()
            else:
                self._transport.write(_GET_RESPONSE)


def _aiohttp_app(watchers: _Watchers) -> web.Application:
    async def get(_: web.Request) -> web.Response:
        return web.Response(body=BODY, content_type="application/json")

    async def watch(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        watchers.writers.append(queue.put_nowait)
        watchers.connected.set()
        while True:
            await resp.write(await queue.get())

    app = web.Application()
    app.router.add_get("/get", get)
    app.router.add_get("/watch", watch)
    return app


async def _serve(server: str, ssl_context: ssl.SSLContext, watchers: _Watchers) -> tuple[int, Stop]:
    """Starts the server on a free port; returns the port and what stops it."""
    if server == "protocol":
        loop = asyncio.get_running_loop()
        srv = await loop.create_server(
            lambda: _BareProtocol(watchers), "127.0.0.1", 0, ssl=ssl_context
        )

        async def stop() -> None:
            srv.close()

        return int(srv.sockets[0].getsockname()[1]), stop
    runner = web.AppRunner(_aiohttp_app(watchers), access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    await site.start()
    return int(runner.addresses[0][1]), runner.cleanup


async def _child(url: str, ca: str, mode: str, count: int, concurrency: int) -> None:
    """The client side: GETs after "go", or `concurrency` watchers; prints its CPU."""
    context = ssl.create_default_context(cafile=ca)
    connector = aiohttp.TCPConnector(ssl=context, limit=concurrency + 1)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def get(n: int) -> None:
            for _ in range(n):
                async with session.get(url + "/get") as resp:
                    orjson.loads(await resp.read())

        async def watch(resp: aiohttp.ClientResponse) -> None:
            for _ in range(count):
                orjson.loads(await resp.content.readline())

        streams: list[aiohttp.ClientResponse] = []
        if mode == "get":
            await get(WARMUP)
        else:
            streams = [await session.get(url + "/watch") for _ in range(concurrency)]
        print("READY", flush=True)
        if mode == "get":
            await asyncio.to_thread(sys.stdin.readline)
            started = time.process_time()
            await asyncio.gather(*(get(count // concurrency) for _ in range(concurrency)))
        else:
            started = time.process_time()
            await asyncio.gather(*(watch(resp) for resp in streams))
        cpu = time.process_time() - started
        for resp in streams:
            resp.close()
    print(f"CPU {cpu}", flush=True)


async def _main(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="draplane-httpfloor-") as tmp:
        paths = certs.ensure_certs(Path(tmp))
        watchers = _Watchers()
        port, stop = await _serve(args.server, paths.server_ssl_context(), watchers)
        child = await ClientProcess.start(
            "draplane.bench.httpfloor", args.mode, "--child", f"https://localhost:{port}",
            "--ca", str(paths.ca_cert), "--count", str(args.count),
            "--concurrency", str(args.concurrency),
        )  # fmt: skip
        started, wall = time.process_time(), time.perf_counter()
        if args.mode == "get":
            await child.go()
        else:
            await _broadcast(args.server, watchers, args.count, args.concurrency)
        client_cpu = await child.cpu_seconds()
        server_cpu = time.process_time() - started
        await stop()
    n = args.count * args.concurrency if args.mode == "watch" else args.count
    return {
        "server_ms_per_op": round(server_cpu / n * 1000, 4),
        "client_ms_per_op": round(client_cpu / n * 1000, 4),
        "wall_s": round(time.perf_counter() - wall, 2),
    }


async def _broadcast(server: str, watchers: _Watchers, count: int, concurrency: int) -> None:
    while len(watchers.writers) < concurrency:
        await asyncio.wait_for(watchers.connected.wait(), timeout=10)
        watchers.connected.clear()
    # The bare protocol frames each chunk itself; aiohttp's StreamResponse frames what it writes.
    data = _CHUNK if server == "protocol" else EVENT
    for _ in range(count):
        for write in watchers.writers:
            write(data)
        await asyncio.sleep(EVENT_SPACING)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m draplane.bench.httpfloor")
    parser.add_argument("mode", choices=("get", "watch"))
    parser.add_argument("--server", choices=("aiohttp", "protocol"), default="aiohttp")
    parser.add_argument("--count", type=int, default=5000, help="requests (watch: events)")
    parser.add_argument("--concurrency", type=int, default=10, help="readers/watchers")
    parser.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--ca", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    gcpolicy.configure()
    if args.child:
        eventloop.run(_child(args.child, args.ca, args.mode, args.count, args.concurrency))
        return
    figures = eventloop.run(_main(args))
    head = {"mode": args.mode, "server": args.server, "count": args.count}
    print(orjson.dumps({**head, "concurrency": args.concurrency, **figures}).decode())


if __name__ == "__main__":
    main()
