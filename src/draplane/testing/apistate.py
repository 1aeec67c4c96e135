"""Seeding and polling state in tests: `seed_objects`, `wait_for`, `events_for`.

`seed_objects` creates builder objects in order through the API; the server assigns new UIDs,
so later objects' references to earlier builder UIDs (ownerReferences, status.reservedFor) are
rewritten, and `status` is written through the status subresource.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

from draplane.api import kinds, meta
from draplane.api.meta import Obj
from draplane.client.interface import Client

T = TypeVar("T")


def _remap(obj: Obj, uids: dict[str, str]) -> Obj:
    for ref in meta.owner_references(obj):
        ref["uid"] = uids.get(ref["uid"], ref["uid"])
    for entry in (obj.get("status") or {}).get("reservedFor") or []:
        entry["uid"] = uids.get(entry["uid"], entry["uid"])
    return obj


async def seed_objects(client: Client, *objects: Obj) -> list[Obj]:
    """Create `objects` in order; returns the stored objects in the same order."""
    uids: dict[str, str] = {}
    stored: list[Obj] = []
    for obj in objects:
        body = _remap(meta.deep_copy(obj), uids)
        rt = kinds.for_kind(body["apiVersion"], body["kind"])
        assert rt is not None, body["kind"]
        status = body.pop("status", None)
        old_uid = body["metadata"].pop("uid", "")
        created = await client.create(rt, body, meta.namespace(body))
        uids[old_uid] = meta.uid(created)
        if status and rt.kind != "Node":
            with_status = meta.deep_copy(created)
            with_status["status"] = {**(created.get("status") or {}), **status}
            created = await client.update(rt, with_status, subresource="status")
        stored.append(created)
    return stored


@overload
async def wait_for(
    probe: Callable[[], Awaitable[T | None]],
    *,
    timeout: float = ...,
    what: str = ...,
    interval: float = ...,
) -> T: ...


@overload
async def wait_for(
    probe: Callable[[], T | None], *, timeout: float = ..., what: str = ..., interval: float = ...
) -> T: ...


async def wait_for(
    probe: Callable[[], Any],
    *,
    timeout: float = 5.0,
    what: str = "condition",
    interval: float = 0.01,
) -> Any:
    """Poll `probe` (a function or a coroutine function) every `interval` seconds until it
    returns something truthy, and return that; an AssertionError naming `what` after `timeout`
    wall seconds. For conditions reached asynchronously (watch delivery, other tasks); waits on
    time use a FakeClock. Tests of separate processes poll less often (their probes are HTTP
    requests competing with the processes for the CPU) and wait longer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(interval)


async def events_for(client: Client, obj: Obj, *, reason: str = "") -> list[Obj]:
    """Core/v1 Events about `obj` (optionally with `reason`), oldest first."""
    listed = await client.list(kinds.EVENTS, meta.namespace(obj) or "default")
    return [
        e
        for e in listed.get("items") or []
        if (e.get("involvedObject") or {}).get("name") == meta.name(obj)
        and (e.get("involvedObject") or {}).get("kind") == obj.get("kind")
        and (not reason or e.get("reason") == reason)
    ]
