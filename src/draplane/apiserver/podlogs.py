"""`GET /api/v1/namespaces/NS/pods/NAME/log` (`kubectl logs`), served by the API server itself
since simulated nodes run no kubelet server.

PodLogOptions come from the query (400 for a malformed value, 422 on kind PodLogOptions for an
invalid one); the pod is read as the caller, so RBAC decides `get` on `pods/log`; what the pod
refers to (ConfigMaps, ResourceClaims) is read as the API server's own loopback user, as the
kubelet reads it with its own rights. The text comes from `containerlogs`. With `follow` the
body is a `text/plain` stream that ends when the container instance terminates, the pod goes
away, the client closes or the server shuts down.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from aiohttp import web
from multidict import MultiMapping

from draplane.api import errors, kinds
from draplane.api.auth import SYSTEM_AUTHENTICATED, SYSTEM_MASTERS, UserInfo
from draplane.api.handler import ApiHandler
from draplane.api.meta import Obj
from draplane.api.request import Options, Request
from draplane.apiserver import containerlogs, httpwatch, queryparams
from draplane.apiserver.containerlogs import Instance, LogOptions
from draplane.clock import Clock, parse_time

LOOPBACK_USER = UserInfo("system:apiserver", "", (SYSTEM_MASTERS, SYSTEM_AUTHENTICATED))
"""The API server's own identity for the reads behind a log (kube-apiserver's loopback)."""
CONTENT_TYPE = "text/plain"


def parse_options(query: MultiMapping[str], pod_name: str) -> LogOptions:
    since_time: datetime | None = None
    if query.get("sinceTime"):
        try:
            since_time = parse_time(str(query["sinceTime"]))
        except ValueError as err:
            raise errors.bad_request(
                f"invalid value for sinceTime: {query['sinceTime']!r}"
            ) from err
    options = LogOptions(
        container=query.get("container", ""),
        follow=queryparams.query_bool(query, "follow"),
        previous=queryparams.query_bool(query, "previous"),
        timestamps=queryparams.query_bool(query, "timestamps"),
        tail_lines=queryparams.query_int(query, "tailLines"),
        limit_bytes=queryparams.query_int(query, "limitBytes"),
        since_seconds=queryparams.query_int(query, "sinceSeconds"),
        since_time=since_time,
    )
    queryparams.query_bool(query, "insecureSkipTLSVerifyBackend")
    causes: list[errors.FieldError] = []
    if options.tail_lines is not None and options.tail_lines < 0:
        causes.append(
            errors.invalid("tailLines", options.tail_lines, "must be greater than or equal to 0")
        )
    if options.limit_bytes is not None and options.limit_bytes < 1:
        causes.append(errors.invalid("limitBytes", options.limit_bytes, "must be greater than 0"))
    if options.since_seconds is not None and since_time is not None:
        causes.append(
            errors.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified")
        )
    elif options.since_seconds is not None and options.since_seconds < 1:
        causes.append(
            errors.invalid("sinceSeconds", options.since_seconds, "must be greater than 0")
        )
    if query.get("stream"):
        causes.append(errors.forbidden("stream", "may not be specified"))
    if causes:
        raise errors.invalid_object("PodLogOptions", pod_name, causes)
    return options


async def serve(
    request: web.Request,
    *,
    handler: ApiHandler,
    clock: Clock,
    watches: httpwatch.ActiveWatches,
    user: UserInfo,
    namespace: str,
    name: str,
) -> web.StreamResponse:
    options = parse_options(request.query, name)
    pod = await _get(handler, user, Request("get", kinds.PODS, namespace, name, "log"))
    assert pod is not None
    container = containerlogs.container_name(pod, options.container)
    run = containerlogs.instance(pod, container, previous=options.previous)
    if run is None:
        return web.Response(body=b"", content_type=CONTENT_TYPE)
    log = await _lines(handler, pod, container, run)
    body = containerlogs.render(log, options, now=clock.now())
    limit = options.limit_bytes
    if not options.follow or run.terminated is not None:
        return web.Response(body=body[:limit] if limit else body, content_type=CONTENT_TYPE)
    resp = web.StreamResponse(status=200, headers={"Content-Type": CONTENT_TYPE})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    sent = 0

    async def write(data: bytes) -> bool:
        """Write what the limit allows; False once it is reached."""
        nonlocal sent
        if limit is not None:
            data = data[: max(limit - sent, 0)]
        if data:
            await resp.write(data)
            sent += len(data)
        return limit is None or sent < limit

    with contextlib.suppress(ConnectionError):
        if await write(body):
            await _follow(handler, watches, pod, container, run, options, write)
        await resp.write_eof()
    return resp


async def _follow(
    handler: ApiHandler,
    watches: httpwatch.ActiveWatches,
    pod: Obj,
    container: str,
    run: Instance,
    options: LogOptions,
    write: containerlogs.Writer,
) -> None:
    """Until the instance terminates (its exit line is the last one) or the pod goes away."""
    md = pod.get("metadata") or {}
    watch = Options(
        field_selector=f"metadata.name={md.get('name')}",
        resource_version=str(md.get("resourceVersion") or ""),
    )
    try:
        stream = await handler.handle(
            LOOPBACK_USER, Request("watch", kinds.PODS, str(md.get("namespace")), options=watch)
        )
    except errors.StatusError:
        return  # the body is under way: a watch that cannot start ends the stream
    assert not isinstance(stream, dict)
    watches.add(stream)
    try:
        async for event in stream:
            if event.type in ("DELETED", "ERROR"):
                return
            if event.type == "BOOKMARK":
                continue
            current = containerlogs.find_instance(event.object, container, run.container_id)
            if current is None:
                return
            if current.terminated is not None:
                await write(
                    containerlogs.render_line(containerlogs.exit_line(container, current), options)
                )
                return
    finally:
        watches.discard(stream)
        await stream.close()


async def _lines(
    handler: ApiHandler, pod: Obj, container: str, run: Instance
) -> list[containerlogs.Line]:
    namespace = str((pod.get("metadata") or {}).get("namespace"))
    configmaps: dict[str, Obj] = {}
    for cm in containerlogs.configmap_names(pod, container):
        found = await _get(handler, LOOPBACK_USER, Request("get", kinds.CONFIGMAPS, namespace, cm))
        if found is not None:
            configmaps[cm] = found
    claims: dict[str, Obj | None] = {}
    for claim in containerlogs.claim_names(pod, container):
        claims[claim] = await _get(
            handler, LOOPBACK_USER, Request("get", kinds.RESOURCE_CLAIMS, namespace, claim)
        )
    return containerlogs.lines(pod, container, run, configmaps=configmaps, claims=claims)


async def _get(handler: ApiHandler, user: UserInfo, request: Request) -> Obj | None:
    """The object, or None when it is gone (only for the loopback reads; the caller's own read
    raises its 404)."""
    try:
        result = await handler.handle(user, request)
    except errors.StatusError as err:
        if user is LOOPBACK_USER and errors.is_not_found(err):
            return None
        raise
    assert isinstance(result, dict)
    return result
