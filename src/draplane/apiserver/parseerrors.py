"""Requests the HTTP parser refuses, answered with a Kubernetes Status instead of aiohttp's text.

aiohttp answers a request it cannot parse before any handler or middleware runs, with a
`text/plain` 400. `StatusAppRunner` serves the app with a request handler that answers those
with a Status: a request URI longer than `MAX_REQUEST_URI_BYTES` is 414 `RequestURITooLong` (the
pure-Python parser counts the whole request line), a header field longer than
`MAX_HEADER_FIELD_BYTES` or too many header fields 431
`RequestHeaderFieldsTooLarge`, anything else malformed 400 `BadRequest`. The connection is
closed after the answer, as aiohttp does.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from draplane.api import errors
from draplane.apiserver.app import status_response

log = logging.getLogger(__name__)

MAX_REQUEST_URI_BYTES = 1 << 20
"""kube-apiserver's MaxHeaderBytes (1 MiB): the longest request URI (aiohttp's max_line_size)."""
MAX_HEADER_FIELD_BYTES = 1 << 16
"""The longest header field (name and value)."""


def parse_error_status(exc: HttpProcessingError) -> errors.StatusError:
    if isinstance(exc, LineTooLong):
        # The parser reports the limit it applied: the request URI's or a header field's.
        if str(exc.args[1]) == str(MAX_REQUEST_URI_BYTES):
            return errors.StatusError(
                414,
                "RequestURITooLong",
                f"Request-URI Too Long: the request URI is longer than "
                f"{MAX_REQUEST_URI_BYTES} bytes",
            )
        return errors.StatusError(
            431,
            "RequestHeaderFieldsTooLarge",
            f"Request Header Fields Too Large: a header field is longer than "
            f"{MAX_HEADER_FIELD_BYTES} bytes",
        )
    if "Too many headers" in exc.message:
        return errors.StatusError(
            431, "RequestHeaderFieldsTooLarge", "Request Header Fields Too Large: " + exc.message
        )
    return errors.bad_request(exc.message or "the request could not be parsed")


class StatusRequestHandler(RequestHandler):
    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, HttpProcessingError) or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        log.debug("refused an unparsable request from %s: %s", request.remote, exc)
        response = status_response(parse_error_status(exc))
        response.force_close()
        return response


class StatusServer(web.Server):
    def __call__(self) -> RequestHandler:
        return StatusRequestHandler(self, loop=self._loop, **self._kwargs)


class StatusAppRunner(web.AppRunner):
    """An AppRunner whose connections apply the limits above and answer parse errors with a
    Status."""

    def __init__(self, app: web.Application, **kwargs: Any) -> None:
        super().__init__(
            app,
            max_line_size=MAX_REQUEST_URI_BYTES,
            max_field_size=MAX_HEADER_FIELD_BYTES,
            **kwargs,
        )

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # The app's own Server (its handler and request factory), serving our handler class.
        server.__class__ = StatusServer
        return server
