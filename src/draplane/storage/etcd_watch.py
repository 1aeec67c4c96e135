"""Reading etcd's change stream: decoding stored values into objects, the etcd watch request,
and `EtcdWatch`, a `Watch` served by etcd itself from a revision older than the store's
in-memory history (etcd keeps every revision until it is compacted; a compacted revision ends
the watch with `RevisionTooOld`, 410 Expired once mapped).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson

from draplane.api.meta import Obj
from draplane.storage.errors import RevisionTooOld
from draplane.storage.etcd_keys import KeyLayout, prefix_end
from draplane.storage.etcd_rpc import Stubs, mvcc, pb, to_status
from draplane.storage.interface import Event, EventType


def encode(obj: Obj) -> bytes:
    """The stored value: the object without its resourceVersion (etcd's revisions are it)."""
    md = obj["metadata"]
    if "resourceVersion" in md:
        md = {k: v for k, v in md.items() if k != "resourceVersion"}
    return orjson.dumps({**obj, "metadata": md})


def decode(value: bytes, revision: int) -> Obj:
    obj: Obj = orjson.loads(value)
    obj["metadata"]["resourceVersion"] = str(revision)
    return obj


def watch_request(layout: KeyLayout, start_revision: int, *, prev_kv: bool) -> Any:
    create = pb.WatchCreateRequest(
        key=layout.root,
        range_end=prefix_end(layout.root),
        start_revision=start_revision,
        prev_kv=prev_kv,
        progress_notify=True,
    )
    return pb.WatchRequest(create_request=create)


async def watch_stream(stubs: Stubs, request: Any) -> AsyncIterator[Any]:
    """The responses of one etcd watch (the request stream stays open until cancelled)."""

    async def requests() -> AsyncIterator[Any]:
        yield request
        await asyncio.Event().wait()

    call = stubs.watch.Watch(requests())
    try:
        async for response in call:
            yield response
    finally:
        call.cancel()


def events_with_prev(layout: KeyLayout, response: Any) -> list[Event]:
    """A watch response's events, decoded from the kvs (and prev_kvs) it carries."""
    out: list[Event] = []
    for ev in response.events:
        kv = ev.kv
        parsed = layout.parse(kv.key)
        if parsed is None:
            continue
        resource = parsed[0]
        rev = kv.mod_revision
        prev = decode(ev.prev_kv.value, ev.prev_kv.mod_revision) if ev.prev_kv.key else None
        if ev.type == mvcc.Event.DELETE:
            if prev is None:
                continue
            last = {**prev, "metadata": {**prev["metadata"], "resourceVersion": str(rev)}}
            out.append(Event("DELETED", resource, last, rev, prev, len(ev.prev_kv.value)))
        else:
            obj = decode(kv.value, rev)
            typ: EventType = "ADDED" if kv.create_revision == rev else "MODIFIED"
            out.append(Event(typ, resource, obj, rev, prev, len(kv.value)))
    return out


class EtcdWatch:
    """Every event after `after` under the layout's prefix, straight from an etcd watch."""

    def __init__(self, stubs: Stubs, layout: KeyLayout, after: int) -> None:
        self._stubs, self._layout, self._after = stubs, layout, after
        self._buffer: list[Event] = []
        self._stream: AsyncIterator[Any] | None = None
        self._closed = False

    def __aiter__(self) -> EtcdWatch:
        return self

    async def __anext__(self) -> Event:
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            if self._stream is None:
                request = watch_request(self._layout, self._after + 1, prev_kv=True)
                self._stream = watch_stream(self._stubs, request)
            try:
                response = await anext(self._stream)
            except StopAsyncIteration:
                self._closed = True
                raise
            except Exception as exc:
                self._closed = True
                raise to_status(exc) from exc
            if response.canceled:
                self._closed = True
                if response.compact_revision:
                    raise RevisionTooOld(self._after, response.compact_revision)
                raise to_status(RuntimeError(response.cancel_reason or "watch cancelled"))
            self._buffer = events_with_prev(self._layout, response)
        return self._buffer.pop(0)

    async def close(self) -> None:
        self._closed = True
        self._buffer = []
        if self._stream is not None:
            stream, self._stream = self._stream, None
            with contextlib.suppress(Exception):
                await stream.aclose()  # type: ignore[attr-defined]
