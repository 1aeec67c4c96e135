"""The API server's request and storage metrics, with kube-apiserver's names and labels:

- `apiserver_request_total{verb, dry_run, group, version, resource, subresource, scope,
  component, code}` and `apiserver_request_duration_seconds{...same but code}` (watches are
  counted, not timed, as upstream);
- `apiserver_current_inflight_requests{request_kind}` (`readOnly`, `mutating`; long-running
  requests, watches and followed logs, are not in flight, as upstream's max-in-flight filter);
- `apiserver_storage_objects{resource}`: stored objects per resource (`pods`,
  `deployments.apps`), counted at start and every poll period (`--etcd-count-metric-poll-period`,
  a minute upstream).

Verbs are upstream's canonical ones: LIST and WATCH for collection GETs, APPLY for a server-side
apply PATCH, DELETECOLLECTION; `scope` is `resource` (one object), `namespace` or `cluster`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

import prometheus_client
from aiohttp import web

from draplane.api import errors
from draplane.api.kinds import ResourceType
from draplane.apiserver import queryparams
from draplane.apiserver.requestinfo import INFO_KEY, VERB_KEY
from draplane.storage.interface import Storage

log = logging.getLogger(__name__)

COMPONENT = "apiserver"
APPLY_PATCH = "application/apply-patch+yaml"
DURATION_BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0,
    4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
)  # fmt: skip
"""kube-apiserver's buckets of apiserver_request_duration_seconds."""
_LABELS = ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"]
_MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
COUNT_POLL_SECONDS = 60.0

Labels = tuple[str, str, str, str, str, str, str, str]


class RequestMetrics:
    def __init__(self, registry: prometheus_client.CollectorRegistry) -> None:
        self.total = prometheus_client.Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, "
            "version, resource, scope, component, and HTTP response code.",
            [*_LABELS, "code"],
            registry=registry,
        )
        self.duration = prometheus_client.Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, "
            "version, resource, subresource, scope and component.",
            _LABELS,
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.inflight = prometheus_client.Gauge(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per "
            "request kind in last second.",
            ["request_kind"],
            registry=registry,
        )
        self._read_only = self.inflight.labels("readOnly")
        self._mutating = self.inflight.labels("mutating")
        self._read_only.set(0)
        self._mutating.set(0)
        # The labelled children by label values: `labels()` takes a lock and builds its key
        # on every call; the set of label values a server sees is small.
        self._totals: dict[tuple[Labels, int], prometheus_client.Counter] = {}
        self._durations: dict[Labels, prometheus_client.Histogram] = {}

    def in_flight(self, request: web.Request) -> prometheus_client.Gauge | None:
        """The gauge the request counts in while it runs; None for a long-running one."""
        if _flag(request, "watch") or "/watch/" in request.path:
            return None
        if _flag(request, "follow") and request.path.endswith("/log"):
            return None
        return self._mutating if request.method in _MUTATING else self._read_only

    def observe(self, request: web.Request, code: int, seconds: float) -> None:
        labels = request_labels(request)
        total = self._totals.get((labels, code))
        if total is None:
            total = self._totals[(labels, code)] = self.total.labels(*labels, str(code))
        total.inc()
        if labels[0] != "WATCH":
            duration = self._durations.get(labels)
            if duration is None:
                duration = self._durations[labels] = self.duration.labels(*labels)
            duration.observe(seconds)


def _flag(request: web.Request, name: str) -> bool:
    """A boolean query parameter as the handler will read it (`queryparams.query_bool`); a
    malformed one, which the handler refuses with a 400, counts as false here."""
    try:
        return queryparams.query_bool(request.query, name)
    except errors.StatusError:
        return False


def request_labels(request: web.Request) -> Labels:
    verb = request.get(VERB_KEY) or request.method
    if verb == "PATCH" and request.headers.get("Content-Type", "").startswith(APPLY_PATCH):
        verb = "APPLY"
    info = request.get(INFO_KEY)
    dry_run = "All" if request.query.get("dryRun") == "All" else ""
    if info is None:
        return (verb, dry_run, "", "", "", "", "", COMPONENT)
    if info.name:
        scope = "resource"
    elif info.namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    rt = info.rt
    return (verb, dry_run, rt.group, rt.version, rt.resource, info.subresource, scope, COMPONENT)


def storage_resource(rt: ResourceType) -> str:
    """The `resource` label of apiserver_storage_objects: `pods`, `deployments.apps`."""
    return f"{rt.resource}.{rt.group}" if rt.group else rt.resource


class StorageObjectCounts:
    """apiserver_storage_objects, refreshed at start and every `period` seconds."""

    def __init__(
        self,
        registry: prometheus_client.CollectorRegistry,
        storage: Storage,
        stored: Iterable[ResourceType],
        *,
        period: float = COUNT_POLL_SECONDS,
    ) -> None:
        self.gauge = prometheus_client.Gauge(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            ["resource"],
            registry=registry,
        )
        self._storage = storage
        self._stored = tuple(stored)
        self._period = period
        self._task: asyncio.Task[None] | None = None

    async def poll(self) -> None:
        for rt in self._stored:
            items, _ = await self._storage.list(rt.key)
            self.gauge.labels(storage_resource(rt)).set(len(items))

    async def start(self) -> None:
        await self.poll()
        self._task = asyncio.create_task(self._loop(), name="storage-object-counts")

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._period)
            try:
                await self.poll()
            except Exception as err:  # a store that cannot answer now: keep the last counts
                log.warning("counting stored objects failed: %s", err)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
