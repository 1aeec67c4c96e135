"""Watch streaming over HTTP: 200, chunked application/json, one `{"type","object"}` per line.

Each event is written (and so flushed) as it arrives. With a Table Accept every object becomes a
one-row Table, with `columnDefinitions` only on the first. `timeoutSeconds` ends the stream
cleanly; a dropped client cancels the handler (the AppRunner runs with handler_cancellation) or
fails the next write; server shutdown closes every open watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import orjson
from aiohttp import web

from draplane.api import errors
from draplane.api.handler import WatchEvent, WatchStream
from draplane.api.meta import Obj

log = logging.getLogger(__name__)

# Turns an event's object into what the client asked for (Table, metadata...); it may keep
# state, e.g. to send Table column definitions only once.
Transform = Callable[[WatchEvent], Obj]


class ActiveWatches:
    """The open watch streams, so shutdown can end them instead of waiting for clients."""

    def __init__(self) -> None:
        self._streams: set[WatchStream] = set()

    def __len__(self) -> int:
        return len(self._streams)

    def add(self, stream: WatchStream) -> None:
        self._streams.add(stream)

    def discard(self, stream: WatchStream) -> None:
        self._streams.discard(stream)

    async def close_all(self) -> None:
        for stream in list(self._streams):
            with contextlib.suppress(Exception):
                await stream.close()
        self._streams.clear()


def encode_event(event_type: str, obj: Obj) -> bytes:
    # orjson never emits raw newlines, so one event is exactly one line.
    return b'{"type":"' + event_type.encode() + b'","object":' + orjson.dumps(obj) + b"}\n"


async def _start(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    return resp


async def error_stream(request: web.Request, err: errors.StatusError) -> web.StreamResponse:
    """A watch refused with 410 is, as in kube-apiserver, a 200 stream of one ERROR event."""
    resp = await _start(request)
    with contextlib.suppress(ConnectionError):
        await resp.write(encode_event("ERROR", err.status()))
        await resp.write_eof()
    return resp


async def serve_watch(
    request: web.Request,
    *,
    stream: WatchStream,
    transform: Transform | None,
    timeout_seconds: int,
    active: ActiveWatches,
) -> web.StreamResponse:
    active.add(stream)
    try:
        resp = await _start(request)
        try:
            async with asyncio.timeout(timeout_seconds if timeout_seconds > 0 else None):
                await _pump(resp, stream, transform)
        except TimeoutError:
            pass
        except ConnectionError:
            log.debug("watch client went away: %s", request.path_qs)
            return resp
        with contextlib.suppress(ConnectionError):
            await resp.write_eof()
        return resp
    finally:
        active.discard(stream)
        await stream.close()


async def _pump(resp: web.StreamResponse, stream: WatchStream, transform: Transform | None) -> None:
    async for event in stream:
        obj = event.object
        if transform is not None and event.type != "ERROR":
            obj = transform(event)
        await resp.write(encode_event(event.type, obj))
        if event.type == "ERROR":
            return
