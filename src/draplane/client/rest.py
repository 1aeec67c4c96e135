"""`RESTClient`: the `Client` over HTTP(S) with a kubeconfig: `HTTPTransport` turns each
`Request` into its REST call over a `ConnectionPool` (keep-alive connections, the transport's
own or one shared by the transports of many users).

API errors come back as `StatusError` (from the Status body, or built from the HTTP code when the
body is not a Status). Watches are read line by line from the chunked response, so events of any
size work.

Failover: a config with several servers (`KubeConfig.endpoints`, API server replicas on one
store) sends to the current one and moves on to the next on a refused connection, and for reads
and watches also on a broken connection or a 503; a watch that ends because its server went
away is started again by its informer from the last resourceVersion, which every replica serves
alike. A write that got a 503 or whose connection broke after it was sent is not resent (etcd
may have applied it): its error is raised and the next request goes to the next server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import aiohttp
import orjson
from yarl import URL

from draplane.api import errors
from draplane.api.handler import WatchEvent
from draplane.api.meta import Obj
from draplane.api.request import NO_OPTIONS, Request, resource_path
from draplane.client.connpool import ConnectionPool
from draplane.client.interface import Client
from draplane.client.kubeconfig import KubeConfig, load_kubeconfig

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Gone",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
log = logging.getLogger(__name__)
T = TypeVar("T")

_UNSENT = (aiohttp.ClientConnectorError, ConnectionRefusedError)
"""Errors that mean the request never reached the server: safe to send elsewhere."""
_BROKEN = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, asyncio.TimeoutError, OSError)
"""Errors of a connection that broke (the request may have been applied)."""
_WATCH_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10)


def status_error(code: int, body: bytes) -> errors.StatusError:
    """The StatusError an error response stands for."""
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        return errors.StatusError.from_status(parsed, code)
    text = body[:512].decode(errors="replace").strip()
    return errors.StatusError(
        code, _REASONS.get(code, "Unknown"), f"the server responded with HTTP {code}: {text}"
    )


class HttpWatch:
    """A watch response as a `WatchStream`; `close()` drops the connection."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent]:
        buffer = b""
        content = self._response.content
        try:
            # readany() directly: iter_any()'s iterator adds a coroutine per chunk.
            while chunk := await content.readany():
                if b"\n" not in chunk:
                    buffer += chunk
                    continue
                # Every complete line of the chunk at once (a burst arrives as one write).
                *lines, rest = (buffer + chunk).split(b"\n")
                buffer = rest
                for line in lines:
                    if line.strip():
                        yield _event(line)
            if buffer.strip():
                yield _event(buffer)
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError):
            return
        finally:
            self._response.close()

    async def close(self) -> None:
        self._response.close()


def _event(line: bytes) -> WatchEvent:
    decoded = orjson.loads(line)
    return WatchEvent(decoded["type"], decoded["object"])


_METHODS = {
    "get": "GET",
    "list": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


def _encoded(path: str, params: dict[str, str]) -> str:
    """`path` (already percent-encoded, as `resource_path` builds it) with `params` as its
    query string, every reserved character percent-encoded."""
    return f"{path}?{urlencode(params, quote_via=quote)}" if params else path


def _query(request: Request) -> dict[str, str]:
    """The query parameters of the request's options that are set, in ListOptions order."""
    o = request.options
    params: dict[str, str] = {}
    if o is NO_OPTIONS:
        return params
    if o.label_selector:
        params["labelSelector"] = o.label_selector
    if o.field_selector:
        params["fieldSelector"] = o.field_selector
    if o.limit:
        params["limit"] = str(o.limit)
    if o.resource_version:
        params["resourceVersion"] = o.resource_version
    if o.resource_version_match:
        params["resourceVersionMatch"] = o.resource_version_match
    if o.field_manager:
        params["fieldManager"] = o.field_manager
    if o.force:
        params["force"] = "true"
    if o.dry_run:
        params["dryRun"] = "All"
    if o.allow_bookmarks:
        params["allowWatchBookmarks"] = "true"
    if o.timeout_seconds:
        params["timeoutSeconds"] = str(o.timeout_seconds)
    if o.continue_:
        params["continue"] = o.continue_
    return params


class HTTPTransport:
    """Sends each `Request` as its REST call over a `ConnectionPool`."""

    def __init__(
        self,
        config: KubeConfig,
        *,
        user_agent: str = "draplane",
        pool: ConnectionPool | None = None,
    ) -> None:
        """`pool`: a shared `ConnectionPool` to send over (with this config's credentials);
        None: a pool of this transport's own, closed with it."""
        self.config = config
        if pool is not None:
            pool.check_shareable(config)
        self._pool = pool or ConnectionPool(config, user_agent=user_agent)
        self._auth: dict[str, str] = (
            {"Authorization": f"Bearer {config.token}"} if config.token else {}
        )
        self._headers_by_type: dict[str, dict[str, str]] = {}
        self._current = 0
        self._watches: weakref.WeakSet[HttpWatch] = weakref.WeakSet()

    @property
    def user(self) -> str:
        return self.config.user

    @property
    def server(self) -> str:
        """The server requests go to now."""
        endpoints = self.config.endpoints
        return endpoints[self._current % len(endpoints)]

    def _fail_over(self, server: str, reason: object) -> None:
        endpoints = self.config.endpoints
        if len(endpoints) > 1 and self.server == server:
            self._current = (self._current + 1) % len(endpoints)
            log.info("API server %s failed (%s); using %s", server, reason, self.server)

    async def _each_server(self, method: str, attempt: Callable[[str], Awaitable[T]]) -> T:
        """`attempt(server)` on the current server, then on the next ones while it fails with a
        refused connection (a 503 or a broken connection only for reads: a write is raised, and
        the next request goes to the next server); when every server failed, the 503 one of
        them answered, else the last connection error."""
        last: BaseException | None = None
        answered: errors.StatusError | None = None
        for _ in range(len(self.config.endpoints)):
            server = self.server
            try:
                return await attempt(server)
            except errors.StatusError as err:
                if err.code != 503:
                    raise
                if method != "GET":
                    # etcd may have applied a write the server could not confirm: not resent.
                    self._fail_over(server, err)
                    raise
                last = answered = err
            except _UNSENT as err:
                last = err
            except _BROKEN as err:
                self._fail_over(server, err)
                if method != "GET":
                    raise
                last = err
                continue
            self._fail_over(server, last)
        # A server that answered says more than one that could not be reached.
        failure = answered or last
        assert failure is not None
        raise failure

    def _headers(self, content_type: str | None) -> dict[str, str]:
        """This transport's credentials, and the body's Content-Type when there is a body."""
        if content_type is None:
            return self._auth
        headers = self._headers_by_type.get(content_type)
        if headers is None:
            headers = self._headers_by_type[content_type] = {
                **self._auth,
                "Content-Type": content_type,
            }
        return headers

    async def send(self, request: Request) -> Obj | HttpWatch:
        path = resource_path(
            request.rt,
            request.namespace,
            request.name,
            request.subresource if request.name else "",
        )
        params = _query(request)
        if request.verb == "watch":
            params["watch"] = "true"
            return await self._watch(_encoded(path, params))
        content_type = request.options.patch_type or "application/json"
        return await self._call(
            _METHODS[request.verb], _encoded(path, params), request.body, content_type
        )

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Obj:
        """One request; returns the decoded JSON body, raises StatusError on an error code.
        `path` may hold characters that need percent-encoding; `params` are its query."""
        encoded = str(URL(path).extend_query(params)) if params else str(URL(path))
        return await self._call(method, encoded, body, content_type)

    async def _call(self, method: str, target: str, body: Any, content_type: str) -> Obj:
        """`request` for a `target` path and query that are percent-encoded already: the URL
        is taken as it is (no parsing, quoting and query building per request)."""
        data = None if body is None else orjson.dumps(body)
        headers = self._headers(content_type if data is not None else None)

        async def attempt(server: str) -> Obj:
            url = URL(server + target, encoded=True)
            session = self._pool.session()
            async with session.request(method, url, data=data, headers=headers) as resp:
                raw = await resp.read()
                if resp.status >= 400:
                    raise status_error(resp.status, raw)
                result: Obj = orjson.loads(raw) if raw else {}
                return result

        result: Obj = await self._each_server(method, attempt)
        return result

    async def _watch(self, target: str) -> HttpWatch:
        async def attempt(server: str) -> HttpWatch:
            resp = await self._pool.session(watch=True).get(
                URL(server + target, encoded=True), headers=self._auth, timeout=_WATCH_TIMEOUT
            )
            if resp.status != 200:
                with contextlib.closing(resp):
                    raise status_error(resp.status, await resp.read())
            return HttpWatch(resp)

        stream: HttpWatch = await self._each_server("GET", attempt)
        self._watches.add(stream)
        return stream

    async def close(self) -> None:
        """End this transport's open watches and close its own connection pool (a shared
        pool stays open for the others: its owner closes it)."""
        for stream in list(self._watches):
            await stream.close()
        if not self._pool.shared:
            await self._pool.close()


class RESTClient(Client):
    """A `Client` against an API server URL, from a kubeconfig."""

    transport: HTTPTransport

    def __init__(
        self,
        config: KubeConfig,
        *,
        user_agent: str = "draplane",
        pool: ConnectionPool | None = None,
    ) -> None:
        """`pool`: send over a shared `ConnectionPool` (see `HTTPTransport`)."""
        super().__init__(HTTPTransport(config, user_agent=user_agent, pool=pool))

    @classmethod
    def from_kubeconfig(cls, path: str | Path, *, context: str = "") -> RESTClient:
        return cls(load_kubeconfig(path, context=context))

    @property
    def server(self) -> str:
        """The API server requests go to now (the next replica after a failover)."""
        return self.transport.server

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Obj:
        """A raw request to `path` (for what the typed methods do not cover)."""
        return await self.transport.request(
            method, path, params=params, body=body, content_type=content_type
        )
