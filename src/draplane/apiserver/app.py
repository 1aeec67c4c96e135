"""The aiohttp Application: routes, and middleware for metrics, Status errors and authentication.

Every failure leaves as a Kubernetes Status body with the same HTTP code; an unexpected exception
becomes a 500 Status without a traceback. A request without credentials is `system:anonymous`
(RBAC lets it read health and version only); bad credentials are a 401.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import prometheus_client
from aiohttp import web

from draplane.api import errors
from draplane.api.catalog import Catalog
from draplane.api.handler import ApiHandler
from draplane.api.schema import Schemas
from draplane.apiserver import discovery, negotiation, openapi, requestinfo
from draplane.apiserver.apimetrics import RequestMetrics
from draplane.apiserver.authentication.bearer import BearerAuthenticator
from draplane.apiserver.authorization import Attributes, Authorizer, Decision
from draplane.apiserver.health import HealthChecks
from draplane.apiserver.httpwatch import ActiveWatches
from draplane.apiserver.impersonation import impersonate
from draplane.apiserver.requestinfo import USER_KEY
from draplane.apiserver.resthandlers import RestContext, RestHandlers, encode
from draplane.clock import Clock

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Resource requests: authorized by the handler, on the request's attributes.
_RESOURCE_PATH = re.compile(r"^/(?:api/v1|apis/[^/]+/[^/]+)/.+")


@dataclass(frozen=True)
class AppConfig:
    handler: ApiHandler
    authenticator: BearerAuthenticator
    authorizer: Authorizer
    clock: Clock
    health: HealthChecks
    metrics_registry: prometheus_client.CollectorRegistry
    request_metrics: RequestMetrics
    watches: ActiveWatches
    catalog: Catalog
    """The served kinds (the registry's), for routing and discovery."""


def status_response(
    err: errors.StatusError, accept: str = "", schemas: Schemas | None = None
) -> web.Response:
    """The Status of a failed request, in protobuf when the client prefers it."""
    if schemas is None:
        return encode(err.status(), status=err.code)
    return negotiation.respond(accept, err.status(), schemas, status=err.code)


def _from_http_exception(exc: web.HTTPException) -> errors.StatusError:
    if exc.status == 404:
        return errors.StatusError(
            404, "NotFound", "the server could not find the requested resource"
        )
    if exc.status == 405:
        return errors.method_not_allowed()
    if exc.status == 413:
        return errors.too_large()
    return errors.StatusError(exc.status, exc.reason.replace(" ", ""), exc.text or exc.reason)


_SENT_CODE_KEY = web.RequestKey("sent_code", int)
"""The status line already sent: a streamed response (a watch) has one before it ends."""


async def _record_sent_code(request: web.Request, response: web.StreamResponse) -> None:
    request[_SENT_CODE_KEY] = response.status


def _metrics_middleware(metrics: RequestMetrics) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        start = time.perf_counter()
        code = 500
        gauge = metrics.in_flight(request)
        if gauge is not None:
            gauge.inc()
        try:
            response = await handler(request)
            code = response.status
            return response
        except BaseException:
            # A client that goes away cancels the handler: as in kube-apiserver, a watch that
            # was streaming counts with the code it sent (200), not as a server error.
            code = request.get(_SENT_CODE_KEY, 500)
            raise
        finally:
            if gauge is not None:
                gauge.dec()
            metrics.observe(request, code, time.perf_counter() - start)

    return middleware


def _errors_middleware(catalog: Catalog) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except errors.StatusError as err:
            failure = err
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            failure = _from_http_exception(exc)
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception:
            log.exception("unexpected error serving %s %s", request.method, request.path)
            failure = errors.internal("an unexpected error occurred")
        return status_response(failure, request.headers.get("Accept", ""), catalog.schemas)

    return middleware


def _authn_middleware(
    authenticator: BearerAuthenticator, authorizer: Authorizer
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """Authentication (401 for bad credentials; none is `system:anonymous`), impersonation,
    and authorization of non-resource paths (resource requests are authorized by the
    handler)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        user = await authenticator.authenticate(request.headers.get("Authorization"))
        user = impersonate(user, request.headers, authorizer)
        request[USER_KEY] = user
        if not _RESOURCE_PATH.match(request.path):
            verb = request.method.lower()
            verb = "get" if verb == "head" else verb
            attrs = Attributes(user, verb, False, path=request.path)
            result = authorizer.authorize(attrs)
            if result.decision is not Decision.ALLOW:
                raise errors.forbidden_path(user.name, verb, request.path, result.reason)
        return await handler(request)

    return middleware


def _json(obj: object) -> web.Response:
    assert isinstance(obj, dict)
    return encode(obj)


def _version_handler(catalog: Catalog) -> Handler:
    async def version(_: web.Request) -> web.Response:
        return _json(discovery.version_info(catalog.mode))

    return version


async def _api(request: web.Request) -> web.Response:
    return _json(discovery.api_versions(request.host))


def _discovery_handlers(catalog: Catalog) -> tuple[Handler, Handler, Handler]:
    async def apis(_: web.Request) -> web.Response:
        return _json(discovery.api_group_list(catalog))

    async def group(request: web.Request) -> web.Response:
        found = discovery.api_group(request.match_info["group"], catalog)
        if found is None:
            raise web.HTTPNotFound()
        return _json(found)

    async def resources(request: web.Request) -> web.Response:
        if request.path.startswith("/api/"):
            found = discovery.api_resource_list("", "v1", catalog)
        else:
            found = discovery.api_resource_list(
                request.match_info["group"], request.match_info["version"], catalog
            )
        if found is None:
            raise web.HTTPNotFound()
        return _json(found)

    return apis, group, resources


def _openapi_v2_handler(catalog: Catalog) -> Handler:
    async def document(request: web.Request) -> web.Response:
        accept = request.headers.get("Accept", "")
        if "application/json" in accept and "protobuf" not in accept:
            return web.Response(
                body=openapi.v2_json_document(catalog), content_type="application/json"
            )
        body = openapi.openapi_v2_document(catalog.mode.git_version)
        return web.Response(body=body, headers={"Content-Type": openapi.CONTENT_TYPE})

    return document


def _openapi_v3_handlers(catalog: Catalog) -> tuple[Handler, Handler]:
    async def index(_: web.Request) -> web.Response:
        return _json(openapi.v3_index(catalog))

    async def document(request: web.Request) -> web.Response:
        return await _openapi_v3(request, catalog)

    return index, document


async def _openapi_v3(request: web.Request, catalog: Catalog) -> web.Response:
    parts = request.match_info["tail"].strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        group, version = "", parts[1]
    elif len(parts) == 3 and parts[0] == "apis":
        group, version = parts[1], parts[2]
    else:
        raise web.HTTPNotFound()
    body = openapi.v3_document(group, version, catalog)
    if body is None:
        raise web.HTTPNotFound()
    headers = {"Etag": f'"{openapi.document_hash(body)}"'}
    if request.query.get("hash"):
        headers["Cache-Control"] = "public, immutable"
    return web.Response(body=body, content_type="application/json", headers=headers)


def _metrics_handler(registry: prometheus_client.CollectorRegistry) -> Handler:
    async def handler(_: web.Request) -> web.Response:
        return web.Response(
            body=prometheus_client.generate_latest(registry),
            headers={"Content-Type": prometheus_client.CONTENT_TYPE_LATEST},
        )

    return handler


def _rest_handler(rest: RestHandlers, catalog: Catalog, *, core: bool) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        if core:
            info = requestinfo.parse("", "v1", request.match_info["tail"], catalog)
        else:
            info = requestinfo.parse(
                request.match_info["group"],
                request.match_info["version"],
                request.match_info["tail"],
                catalog,
            )
        return await rest.handle(request, info, request[USER_KEY])

    return handler


def create_app(config: AppConfig) -> web.Application:
    app = web.Application(
        client_max_size=negotiation.MAX_BODY + 1,
        middlewares=[
            _metrics_middleware(config.request_metrics),
            _errors_middleware(config.catalog),
            _authn_middleware(config.authenticator, config.authorizer),
        ],
    )
    rest = RestHandlers(RestContext(config.handler, config.clock, config.watches, config.catalog))
    r = app.router
    _apis, _group, _resources = _discovery_handlers(config.catalog)
    # As kube-apiserver, version and discovery answer with and without a trailing slash (the
    # kubernetes Python client asks for /version/, /api/, /api/v1/, /apis/<group>/...).
    for path, discovery_handler in (
        ("/version", _version_handler(config.catalog)),
        ("/api", _api),
        ("/api/v1", _resources),
        ("/apis", _apis),
        ("/apis/{group}", _group),
        ("/apis/{group}/{version}", _resources),
    ):
        r.add_get(path, discovery_handler)
        r.add_get(path + "/", discovery_handler)
    r.add_get("/openapi/v2", _openapi_v2_handler(config.catalog))
    v3_index, v3_document = _openapi_v3_handlers(config.catalog)
    r.add_get("/openapi/v3", v3_index)
    r.add_get("/openapi/v3/", v3_index)
    r.add_get("/openapi/v3/{tail:.+}", v3_document)
    for endpoint in ("healthz", "livez", "readyz"):
        r.add_get(f"/{endpoint}", config.health.handle)
        r.add_get(f"/{endpoint}/{{check}}", config.health.handle)
    r.add_get("/metrics", _metrics_handler(config.metrics_registry))
    r.add_route("*", "/api/v1/{tail:.+}", _rest_handler(rest, config.catalog, core=True))
    r.add_route(
        "*", "/apis/{group}/{version}/{tail:.+}", _rest_handler(rest, config.catalog, core=False)
    )

    async def close_watches(_: web.Application) -> None:
        await config.watches.close_all()

    app.on_response_prepare.append(_record_sent_code)
    app.on_shutdown.append(close_watches)
    return app
