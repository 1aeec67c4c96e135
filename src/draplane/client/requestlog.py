"""Request logging at V6, as client-go's round trippers log at `-v 6`
(`GET https://.../api/v1/pods 200 OK in 3 milliseconds`).

`RequestLoggingTransport` wraps any `Transport` (in-process or HTTP) and changes nothing else;
`logged(client)` gives a `Client` over it only when V6 lines are printed, so a component
without `-v 6` pays nothing per request.
"""

from __future__ import annotations

import logging
import time

from draplane.api.errors import StatusError
from draplane.api.handler import WatchStream
from draplane.api.meta import Obj
from draplane.api.request import Request, resource_path
from draplane.client.interface import Client, Transport
from draplane.klog import V6

log = logging.getLogger("draplane.client.requests")

_METHODS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


def logged(client: Client) -> Client:
    """`client`, or a Client logging each of its requests when V6 lines are printed."""
    if not log.isEnabledFor(V6):
        return client
    return Client(RequestLoggingTransport(client.transport))


class RequestLoggingTransport:
    """A `Transport` that logs every request it sends through `inner` at V6."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner

    @property
    def user(self) -> str:
        return self.inner.user

    async def send(self, request: Request) -> Obj | WatchStream:
        path = resource_path(
            request.rt,
            request.namespace,
            request.name,
            request.subresource if request.name else "",
        )
        method = _METHODS.get(request.verb, request.verb.upper())
        start = time.perf_counter()
        try:
            result = await self.inner.send(request)
        except StatusError as err:
            log.log(V6, "%s %s %d %s in %s", method, path, err.code, err.reason, _since(start))
            raise
        except Exception as err:
            log.log(V6, "%s %s failed in %s: %s", method, path, _since(start), err)
            raise
        log.log(V6, "%s %s 200 OK in %s", method, path, _since(start))
        return result

    async def close(self) -> None:
        await self.inner.close()


def _since(start: float) -> str:
    return f"{(time.perf_counter() - start) * 1000:.1f} ms"
