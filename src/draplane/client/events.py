"""`EventRecorder`: core/v1 Events about objects (what `kubectl describe` shows).

As client-go's legacy recorder and correlator: `event()` never blocks, writes run in order in the
background, and a repeat of (object uid, type, reason, message) within 10 minutes PATCHes count and
lastTimestamp of the earlier Event. `eventTime` stays unset (validation would then want `action`).
Events are best effort: as client-go's broadcaster (a queue of maxQueuedEvents = 1000, dropping
when full), at most `MAX_QUEUED_EVENTS` writes wait at once and an event beyond them is dropped
and counted, so a slow API server neither grows the backlog without bound nor keeps a stopping
component writing minutes of old events.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from draplane.api.errors import is_not_found
from draplane.api.kinds import EVENTS
from draplane.api.meta import Obj, metadata
from draplane.client.interface import Client
from draplane.clock import REAL_CLOCK, Clock, format_time

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

_CORRELATION_WINDOW = 600.0
_MAX_CORRELATED = 4096
MAX_QUEUED_EVENTS = 1000
"""Event writes waiting at once per recorder (client-go's maxQueuedEvents)."""


@dataclass(frozen=True, slots=True)
class _Note:
    type: str
    reason: str
    message: str


@dataclass
class _Series:
    name: str
    namespace: str
    count: int
    first_timestamp: str
    last_seen: float


class EventRecorder:
    def __init__(
        self, client: Client, component: str, *, host: str = "", clock: Clock = REAL_CLOCK
    ) -> None:
        self._client = client
        self._component = component
        self._host = host
        self._clock = clock
        self._series: dict[tuple[str, str, str, str], _Series] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._last_ns = 0
        self.dropped = 0
        """Events dropped because MAX_QUEUED_EVENTS writes were already waiting."""

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """Record an event about `obj`; the write is scheduled, errors are only logged."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.warning("event %s %s dropped: no running event loop", reason, message)
            return
        if len(self._pending) >= MAX_QUEUED_EVENTS:
            self.dropped += 1
            if self.dropped % MAX_QUEUED_EVENTS == 1:
                log.warning(
                    "%s: %d event writes waiting, dropped %d events so far (this one: %s %s)",
                    self._component, len(self._pending), self.dropped, reason, message,
                )  # fmt: skip
            return
        md = metadata(obj)
        uid = str(md.get("uid") or "")
        correlation = (uid, type_, reason, message)
        now_mono = self._clock.monotonic()
        timestamp = format_time(self._clock.now())
        note = _Note(type_, reason, message)
        series = self._series.get(correlation)
        if series is not None and now_mono - series.last_seen < _CORRELATION_WINDOW:
            series.count += 1
            series.last_seen = now_mono
            write = self._repeat(series, obj=obj, note=note, timestamp=timestamp)
        else:
            namespace = str(md.get("namespace") or "") or "default"
            series = _Series(self._event_name(obj), namespace, 1, timestamp, now_mono)
            self._remember(correlation, series)
            write = self._write_new(self._new_event(obj, note=note, series=series))
        task = loop.create_task(write)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _remember(self, correlation: tuple[str, str, str, str], series: _Series) -> None:
        self._series[correlation] = series
        if len(self._series) > _MAX_CORRELATED:
            # dicts keep insertion order: the first entry is the oldest series.
            del self._series[next(iter(self._series))]

    def _event_name(self, obj: Obj) -> str:
        # client-go names events `<object>.<UnixNano in hex>`; keep them unique when the clock
        # does not move between two events (fake clocks, coarse timers).
        ns = int(self._clock.now().timestamp() * 1e9)
        ns = max(ns, self._last_ns + 1)
        self._last_ns = ns
        return f"{metadata(obj).get('name') or 'unknown'}.{ns:x}"

    def _new_event(self, obj: Obj, *, note: _Note, series: _Series) -> Obj:
        md = metadata(obj)
        involved: Obj = {
            "kind": obj.get("kind", ""),
            "namespace": md.get("namespace") or "",
            "name": md.get("name") or "",
            "uid": md.get("uid") or "",
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": md.get("resourceVersion") or "",
        }
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": series.name, "namespace": series.namespace},
            "involvedObject": {k: v for k, v in involved.items() if v},
            "reason": note.reason,
            "message": note.message,
            "type": note.type,
            "count": series.count,
            "firstTimestamp": series.first_timestamp,
            "lastTimestamp": series.first_timestamp,
            "source": {
                "component": self._component,
                **({"host": self._host} if self._host else {}),
            },
            "reportingComponent": self._component,
            "reportingInstance": self._host or self._component,
        }

    async def _write_new(self, event: Obj) -> None:
        async with self._lock:
            try:
                await self._client.create(EVENTS, event, event["metadata"]["namespace"])
            except Exception as err:
                log.warning("unable to write event %s: %s", event["metadata"]["name"], err)

    async def _repeat(self, series: _Series, *, obj: Obj, note: _Note, timestamp: str) -> None:
        async with self._lock:
            try:
                await self._client.patch(
                    EVENTS,
                    series.name,
                    {"count": series.count, "lastTimestamp": timestamp},
                    series.namespace,
                    patch_type="merge",
                )
                return
            except Exception as err:
                if not is_not_found(err):
                    log.warning("unable to update event %s: %s", series.name, err)
                    return
        # The earlier Event is gone (deleted, or its create failed): start a new series.
        series.name = self._event_name(obj)
        series.first_timestamp = timestamp
        await self._write_new(self._new_event(obj, note=note, series=series))

    async def flush(self) -> None:
        """Wait until every scheduled write has finished."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
