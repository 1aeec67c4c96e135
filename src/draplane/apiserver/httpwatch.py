"""Watch streaming over HTTP: 200, chunked application/json, one `{"type","object"}` per line,
or (a `SharedForm` with a protobuf `encoding`) application/vnd.kubernetes.protobuf;stream=watch,
one length-prefixed WatchEvent frame per event.

Each event is written (and so flushed) as it arrives. With a Table Accept every object becomes a
one-row Table, with `columnDefinitions` only on the first. The watch cache hands every watcher
of a resource the same event object, so `EventEncoder` encodes an event once for all watchers
that send it in the same form (plain object or PartialObjectMetadata) and every one of them
writes the same bytes; Tables are built per watcher. Events already queued behind the one
received (a stream with `take_ready`, the watch cache's) go out in the same write: one chunk
and one TLS record for a burst instead of one per event. `timeoutSeconds` ends the stream
cleanly; a dropped client cancels the handler (the AppRunner runs with handler_cancellation) or
fails the next write; a watcher the watch cache closed as slow has its connection aborted (its
end would wait behind the bytes the client is not reading); server shutdown closes every open
watch. `apiserver_watch_events_total` and `draplane_watch_writes_total` count, per resource,
the events sent and the writes that carried them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import orjson
import prometheus_client
from aiohttp import web

from draplane.api import errors
from draplane.api.handler import WatchEvent, WatchStream
from draplane.api.meta import Obj
from draplane.apiserver.requestinfo import RESOURCE_KEY

log = logging.getLogger(__name__)

# Turns an event's object into what the client asked for (Table, metadata...); it may keep
# state, e.g. to send Table column definitions only once.
Transform = Callable[[WatchEvent], Obj]

ENCODED_EVENTS = 512
"""Encoded events kept for the watchers still to send them (each holds its object)."""
WRITE_BATCH = 64
"""Queued events sent in one write at most."""


@runtime_checkable
class _HasReady(Protocol):
    def take_ready(self, limit: int) -> list[WatchEvent]:
        """Events already queued, without waiting."""
        ...


@runtime_checkable
class _ClosesSlow(Protocol):
    on_slow: Callable[[], None] | None


def encode_event(event_type: str, obj: Obj) -> bytes:
    # orjson never emits raw newlines, so one event is exactly one line.
    return b'{"type":"' + event_type.encode() + b'","object":' + orjson.dumps(obj) + b"}\n"


EventEncoding = Callable[[str, Obj], bytes]
"""An event's bytes on the stream from its type and (transformed) object."""
JSON_STREAM = "application/json"


@dataclass(frozen=True)
class SharedForm:
    """A response form whose bytes depend only on the event: `key` names it (`""` for the
    plain object), `transform` builds it from the event (None: the object as it is),
    `encoding` writes it (JSON lines, or protobuf frames under `content_type`)."""

    key: str = ""
    transform: Transform | None = None
    encoding: EventEncoding = encode_event
    content_type: str = JSON_STREAM


class EventEncoder:
    """The bytes of recently sent events by (type, object identity, form): one encode per event
    and form, whatever the number of watchers. The entry holds the object, so its identity is
    not reused while the entry lives; objects handed to watchers are never modified."""

    def __init__(self, capacity: int = ENCODED_EVENTS) -> None:
        self._capacity = capacity
        self._recent: OrderedDict[tuple[str, int, str], tuple[Obj, bytes]] = OrderedDict()
        self.encodes = 0
        """Events encoded (not served from the shared entries)."""

    def encode(self, event: WatchEvent, form: SharedForm) -> bytes:
        key = (event.type, id(event.object), form.key)
        found = self._recent.get(key)
        if found is not None and found[0] is event.object:
            return found[1]
        obj = event.object if form.transform is None else form.transform(event)
        data = form.encoding(event.type, obj)
        self.encodes += 1
        self._recent[key] = (event.object, data)
        if len(self._recent) > self._capacity:
            self._recent.popitem(last=False)
        return data


class WatchMetrics:
    """`apiserver_watch_events_total{resource}` (kube-apiserver's counter, labelled by resource
    instead of group, version and kind) and `draplane_watch_writes_total{resource}`: the
    events sent on watch streams and the writes (chunks, TLS records) that carried them."""

    def __init__(self, registry: prometheus_client.CollectorRegistry) -> None:
        self._events = prometheus_client.Counter(
            "apiserver_watch_events_total",
            "Number of events sent in watch clients, by resource.",
            ["resource"],
            registry=registry,
        )
        self._writes = prometheus_client.Counter(
            "draplane_watch_writes_total",
            "Number of writes to watch clients (each carries one or more events), by resource.",
            ["resource"],
            registry=registry,
        )

    def sent(self, resource: str) -> Callable[[int], None]:
        """What a stream of `resource` calls after each write with the events it carried (the
        labelled counters are looked up once per stream, not per write)."""
        events, writes = self._events.labels(resource), self._writes.labels(resource)

        def count(n: int) -> None:
            events.inc(n)
            writes.inc()

        return count


class ActiveWatches:
    """The open watch streams, so shutdown can end them instead of waiting for clients; the
    encoder their events share; the counters of what they sent (`registry` None: counted on
    a registry of their own)."""

    def __init__(self, registry: prometheus_client.CollectorRegistry | None = None) -> None:
        self._streams: set[WatchStream] = set()
        self.encoder = EventEncoder()
        self.metrics = WatchMetrics(
            registry if registry is not None else prometheus_client.CollectorRegistry()
        )

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


async def _start(request: web.Request, content_type: str) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers={"Content-Type": content_type})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    return resp


async def error_stream(
    request: web.Request, err: errors.StatusError, form: SharedForm
) -> web.StreamResponse:
    """A watch refused with 410 is, as in kube-apiserver, a 200 stream of one ERROR event."""
    resp = await _start(request, form.content_type)
    with contextlib.suppress(ConnectionError):
        await resp.write(form.encoding("ERROR", err.status()))
        await resp.write_eof()
    return resp


async def serve_watch(
    request: web.Request,
    *,
    stream: WatchStream,
    transform: Transform | SharedForm,
    timeout_seconds: int,
    active: ActiveWatches,
) -> web.StreamResponse:
    """Streams `stream`; `transform` is a per-watcher one (Tables) or a `SharedForm`, whose
    events are encoded once for every watcher."""
    active.add(stream)
    if isinstance(stream, _ClosesSlow) and request.transport is not None:
        # A watcher closed for not reading: its handler waits in a write behind the bytes the
        # client is not reading, and the end of the stream would wait behind them too; the
        # connection is dropped, which ends the write with a ConnectionError.
        stream.on_slow = request.transport.abort
    try:
        content_type = transform.content_type if isinstance(transform, SharedForm) else JSON_STREAM
        resp = await _start(request, content_type)
        try:
            async with asyncio.timeout(timeout_seconds if timeout_seconds > 0 else None):
                sent = active.metrics.sent(request.get(RESOURCE_KEY) or "")
                await _pump(resp, stream, transform, active.encoder, sent)
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


async def _pump(
    resp: web.StreamResponse,
    stream: WatchStream,
    transform: Transform | SharedForm,
    encoder: EventEncoder,
    sent: Callable[[int], None],
) -> None:
    take_ready = stream.take_ready if isinstance(stream, _HasReady) else None
    encoding = transform.encoding if isinstance(transform, SharedForm) else encode_event
    async for first in stream:
        events = [first]
        if take_ready is not None:
            events += take_ready(WRITE_BATCH - 1)
        out: list[bytes] = []
        for event in events:
            if event.type == "ERROR":
                out.append(encoding(event.type, event.object))
                await resp.write(b"".join(out))
                sent(len(out))
                return
            if isinstance(transform, SharedForm):
                out.append(encoder.encode(event, transform))
            else:
                out.append(encode_event(event.type, transform(event)))
        await resp.write(out[0] if len(out) == 1 else b"".join(out))
        sent(len(out))
