"""`RESTClient`: the `Client` protocol over HTTP(S) with a kubeconfig, via one pooled aiohttp
ClientSession (keep-alive).

API errors come back as `StatusError` (from the Status body, or built from the HTTP code when the
body is not a Status). Watches are read line by line from the chunked response, so events of any
size work.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson

from draplane.api import errors
from draplane.api.handler import WatchEvent
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, metadata
from draplane.client.interface import PATCH_CONTENT_TYPES, PatchType
from draplane.client.kubeconfig import KubeConfig, load_kubeconfig
from draplane.client.local import delete_options

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
_REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=60, connect=10)
_WATCH_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10)


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


def resource_path(
    rt: ResourceType, namespace: str = "", name: str = "", subresource: str = ""
) -> str:
    parts = ["/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"]
    if rt.namespaced and namespace:
        parts.append(f"namespaces/{quote(namespace, safe='')}")
    parts.append(rt.resource)
    if name:
        parts.append(quote(name, safe=""))
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


class HttpWatch:
    """A watch response as a `WatchStream`; `close()` drops the connection."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent]:
        buffer = b""
        try:
            async for chunk in self._response.content.iter_any():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
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


class RESTClient:
    """Implements `draplane.client.interface.Client` against an API server URL."""

    def __init__(self, config: KubeConfig, *, user_agent: str = "draplane") -> None:
        self._config = config
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        if config.token:
            self._headers["Authorization"] = f"Bearer {config.token}"
        self._session: aiohttp.ClientSession | None = None
        self._watches: weakref.WeakSet[HttpWatch] = weakref.WeakSet()

    @classmethod
    def from_kubeconfig(cls, path: str | Path, *, context: str = "") -> RESTClient:
        return cls(load_kubeconfig(path, context=context))

    @property
    def user(self) -> str:
        return self._config.user

    @property
    def server(self) -> str:
        return self._config.server

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self._config.ssl_context(), limit=64)
            self._session = aiohttp.ClientSession(
                base_url=None,
                connector=connector,
                headers=self._headers,
                timeout=_REQUEST_TIMEOUT,
            )
        return self._session

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Obj:
        """One request; returns the decoded JSON body, raises StatusError on an error code."""
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else None
        async with self._get_session().request(
            method, self._config.server + path, params=params, data=data, headers=headers
        ) as resp:
            raw = await resp.read()
            if resp.status >= 400:
                raise status_error(resp.status, raw)
            result: Obj = orjson.loads(raw) if raw else {}
            return result

    async def get(
        self, rt: ResourceType, name: str, namespace: str = "", *, subresource: str = ""
    ) -> Obj:
        return await self.request("GET", resource_path(rt, namespace, name, subresource))

    async def list(
        self,
        rt: ResourceType,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
    ) -> Obj:
        params = _params(
            labelSelector=label_selector,
            fieldSelector=field_selector,
            limit=str(limit) if limit else "",
            resourceVersion=resource_version,
        )
        if continue_:
            params["continue"] = continue_
        return await self.request("GET", resource_path(rt, namespace), params=params)

    async def watch(
        self,
        rt: ResourceType,
        namespace: str = "",
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        allow_bookmarks: bool = False,
        timeout_seconds: int = 0,
    ) -> HttpWatch:
        params = _params(
            watch="true",
            resourceVersion=resource_version,
            labelSelector=label_selector,
            fieldSelector=field_selector,
            allowWatchBookmarks="true" if allow_bookmarks else "",
            timeoutSeconds=str(timeout_seconds) if timeout_seconds else "",
        )
        resp = await self._get_session().get(
            self._config.server + resource_path(rt, namespace),
            params=params,
            timeout=_WATCH_TIMEOUT,
        )
        if resp.status != 200:
            with contextlib.closing(resp):
                raise status_error(resp.status, await resp.read())
        stream = HttpWatch(resp)
        self._watches.add(stream)
        return stream

    async def create(
        self,
        rt: ResourceType,
        obj: Obj,
        namespace: str = "",
        *,
        subresource: str = "",
        name: str = "",
        field_manager: str = "",
    ) -> Obj:
        ns = namespace or str(metadata(obj).get("namespace") or "")
        path = resource_path(rt, ns, name if subresource else "", subresource)
        return await self.request(
            "POST", path, params=_params(fieldManager=field_manager), body=obj
        )

    async def update(
        self, rt: ResourceType, obj: Obj, *, subresource: str = "", field_manager: str = ""
    ) -> Obj:
        md = metadata(obj)
        path = resource_path(
            rt, str(md.get("namespace") or ""), str(md.get("name") or ""), subresource
        )
        return await self.request("PUT", path, params=_params(fieldManager=field_manager), body=obj)

    async def patch(
        self,
        rt: ResourceType,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: PatchType = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        params = _params(fieldManager=field_manager, force="true" if force else "")
        return await self.request(
            "PATCH",
            resource_path(rt, namespace, name, subresource),
            params=params,
            body=patch,
            content_type=PATCH_CONTENT_TYPES[patch_type],
        )

    async def delete(
        self,
        rt: ResourceType,
        name: str,
        namespace: str = "",
        *,
        propagation_policy: str = "",
        grace_period_seconds: int | None = None,
        preconditions: Obj | None = None,
    ) -> Obj:
        options = delete_options(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
        )
        return await self.request("DELETE", resource_path(rt, namespace, name), body=options)

    async def delete_collection(
        self,
        rt: ResourceType,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Obj:
        params = _params(labelSelector=label_selector, fieldSelector=field_selector)
        return await self.request("DELETE", resource_path(rt, namespace), params=params)

    async def close(self) -> None:
        """Close the connection pool; open watches end."""
        for stream in list(self._watches):
            await stream.close()
        if self._session is not None:
            await self._session.close()
            self._session = None


def _params(**values: str) -> dict[str, str]:
    return {k: v for k, v in values.items() if v}
