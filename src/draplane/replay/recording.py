"""`draplane record`: every change of the DRA-relevant kinds (`whatif.STATE_KINDS`) of an API
server, read through list and watch (read-only), as a recording: JSON lines, gzip-compressed
when the file name ends `.gz`. The first line is a header; then one line per event:

    {"t": 1.25, "type": "ADDED", "kind": "Pod", "rv": "812", "object": {...}}

`t` is seconds since the recording started; the objects present when it started come first,
as ADDED at t 0 (`"initial": true`). managedFields are dropped. A watch that expires resumes
from the last resourceVersion; one too old (410) relists (its objects as MODIFIED).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from draplane.api import errors, meta
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, format_time
from draplane.whatif import STATE_KINDS
from draplane.whatif.state import OPTIONAL_KINDS, StateError, compact, kind_for

FORMAT = "draplane.io/recording-v1"


class RecordingError(Exception):
    """A recording that cannot be read (one line of text)."""


@dataclass(frozen=True)
class Event:
    t: float
    type: str
    rt: ResourceType
    object: Obj
    initial: bool = False

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": round(self.t, 4), "type": self.type, "kind": self.rt.kind}
        out["rv"] = meta.resource_version(self.object)
        if self.initial:
            out["initial"] = True
        out["object"] = self.object
        return out


def open_text(path: Path, mode: str) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t")  # type: ignore[return-value]
    return path.open(mode)


class Recorder:
    """Writes events to a recording file, one flushed line each."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.started = time.monotonic()
        self.count = 0
        header = {"format": FORMAT, "startedAt": format_time(REAL_CLOCK.now())}
        self._line(header)

    def _line(self, doc: dict[str, Any]) -> None:
        self.out.write(json.dumps(doc, separators=(",", ":")) + "\n")
        self.out.flush()

    def add(self, type_: str, rt: ResourceType, obj: Obj, *, initial: bool = False) -> None:
        t = 0.0 if initial else time.monotonic() - self.started
        self._line(Event(t, type_, rt, compact(obj, rt), initial).json())
        self.count += 1

    async def _list(self, client: Client, rt: ResourceType, type_: str, initial: bool) -> str:
        listed = await client.list(rt)
        for item in listed.get("items") or ():
            self.add(type_, rt, item, initial=initial)
        return str((listed.get("metadata") or {}).get("resourceVersion") or "")

    async def follow(self, client: Client, rt: ResourceType) -> None:
        """List `rt` then watch it, until cancelled (an optional kind not served is skipped)."""
        try:
            rv = await self._list(client, rt, "ADDED", True)
        except errors.StatusError as err:
            if rt in OPTIONAL_KINDS and err.code == 404:
                return
            raise
        while True:
            stream = await client.watch(rt, resource_version=rv, timeout_seconds=300)
            try:
                async for event in stream:
                    if event.type == "ERROR":
                        rv = await self._list(client, rt, "MODIFIED", False)
                        break
                    if event.type in ("ADDED", "MODIFIED", "DELETED"):
                        rv = meta.resource_version(event.object) or rv
                        self.add(event.type, rt, event.object)
            finally:
                await stream.close()


async def record(client: Client, out: IO[str], *, stop: asyncio.Event) -> int:
    """Record every state kind until `stop` is set; the number of events written."""
    recorder = Recorder(out)
    tasks = [asyncio.create_task(recorder.follow(client, rt)) for rt in STATE_KINDS]
    stopped = asyncio.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait([stopped, *tasks], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not stopped and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in [stopped, *tasks]:
            task.cancel()
        await asyncio.gather(stopped, *tasks, return_exceptions=True)
    return recorder.count


def read_recording(path: Path) -> list[Event]:
    """The events of a recording, in time order."""
    try:
        with open_text(path, "r") as f:
            lines = [line for line in f if line.strip()]
    except (OSError, EOFError) as err:
        raise RecordingError(
            f"cannot read {path}: {getattr(err, 'strerror', None) or err}"
        ) from err
    try:
        docs = [json.loads(line) for line in lines]
    except json.JSONDecodeError as err:
        raise RecordingError(f"cannot parse {path}: {err}") from err
    if not docs or not isinstance(docs[0], dict) or docs[0].get("format") != FORMAT:
        raise RecordingError(f"{path} is not a draplane recording (no {FORMAT} header)")
    order = {rt: i for i, rt in enumerate(STATE_KINDS)}
    # The initial objects in creation order (owners first), then the changes as they came.
    return sorted(_events(path, docs[1:]), key=lambda e: (e.t, order[e.rt] if e.initial else 0))


def _events(path: Path, docs: list[Any]) -> Iterator[Event]:
    for i, doc in enumerate(docs, start=2):
        try:
            obj = doc["object"]
            yield Event(
                float(doc["t"]), str(doc["type"]), kind_for(obj), obj, bool(doc.get("initial"))
            )
        except (KeyError, TypeError, ValueError, StateError) as err:
            raise RecordingError(f"{path}:{i}: not an event: {err}") from err
