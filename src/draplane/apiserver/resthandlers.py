"""The REST verbs over HTTP: query parameters and bodies in, one `Request` to the `ApiHandler`,
encoding out.

Only translation happens here; the verbs' semantics (authorization, admission, validation,
storage) belong to the `ApiHandler` (the registry). The verb and resource are recorded on the
request for the metrics middleware.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from typing import Any

import orjson
from aiohttp import web
from multidict import MultiMapping

from draplane.api import errors, kinds, warnings
from draplane.api.auth import UserInfo
from draplane.api.catalog import Catalog
from draplane.api.handler import ApiHandler
from draplane.api.meta import Obj
from draplane.api.request import Options, Request
from draplane.api.schema import Schemas
from draplane.apiserver import (
    httpwatch,
    listoptions,
    negotiation,
    podlogs,
    protobuf_serving,
    queryparams,
    tables,
    watchforms,
    yamldecode,
)
from draplane.apiserver.duplicates import duplicate_fields
from draplane.apiserver.negotiation import ResponseForm
from draplane.apiserver.requestinfo import INFO_KEY, RESOURCE_KEY, VERB_KEY, RequestInfo
from draplane.clock import Clock


@dataclass(frozen=True)
class RestContext:
    handler: ApiHandler
    clock: Clock
    watches: httpwatch.ActiveWatches
    catalog: Catalog
    """The served kinds and their Go types (`schemas`): bodies in and out in protobuf."""


def _retrieve(task: asyncio.Future[Obj]) -> None:
    if not task.cancelled():
        task.exception()


async def finish_write(write: Awaitable[Obj]) -> Obj:
    """Run a write to completion even when the client goes away: the AppRunner cancels the
    handler on disconnect, and a half-done registry write must not be cut short."""
    task = asyncio.ensure_future(write)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.add_done_callback(_retrieve)
        raise


def encode(obj: Obj, *, status: int = 200, pretty: bool = False) -> web.Response:
    """A JSON response (discovery, version: what is never sent in protobuf)."""
    body = orjson.dumps(obj, option=orjson.OPT_INDENT_2 if pretty else 0)
    return web.Response(body=body, status=status, content_type="application/json")


def _check_type(info: RequestInfo, obj: Obj) -> None:
    """Fill a missing kind/apiVersion from the URL; refuse a body of another kind."""
    expected = (info.rt.api_version, info.rt.kind)
    if info.subresource in kinds.SUBRESOURCE_KINDS:
        group, version, kind = kinds.SUBRESOURCE_KINDS[info.subresource]
        expected = (f"{group}/{version}" if group else version, kind)
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    if (api_version and api_version != expected[0]) or (kind and kind != expected[1]):
        raise errors.bad_request(
            f"the object in the request body ({api_version or '<none>'}, Kind={kind or '<none>'}) "
            f"does not match the resource of the URL ({expected[0]}, Kind={expected[1]})"
        )
    obj["apiVersion"], obj["kind"] = expected


def _check_metadata(info: RequestInfo, obj: Obj, *, url_name: str) -> None:
    md = obj.setdefault("metadata", {})
    if not isinstance(md, dict):
        raise errors.bad_request("metadata must be an object")
    if info.namespace:
        if md.get("namespace") and md["namespace"] != info.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        md["namespace"] = info.namespace
    if url_name:
        if md.get("name") and md["name"] != url_name:
            raise errors.bad_request(
                f"the name of the object ({md['name']}) does not match the name on the URL "
                f"({url_name})"
            )
        md["name"] = url_name


APPLY_PATCH = "application/apply-patch+yaml"


def _duplicates(body: bytes, content_type: str, value: Any) -> tuple[str, ...]:
    """Repeated keys of a JSON or YAML body (protobuf bodies cannot repeat a field)."""
    mt = negotiation.media_type(content_type)
    if mt in ("", negotiation.JSON, "*/*", *negotiation.JSON_PATCH_BODIES) or (
        mt == APPLY_PATCH and body.lstrip().startswith(b"{")
    ):
        return duplicate_fields(body, value)
    if mt in negotiation.YAML_TYPES or mt == APPLY_PATCH:
        return yamldecode.repeated_keys(body)
    return ()


async def _read_object(
    request: web.Request, info: RequestInfo, options: Options, schemas: Schemas, *, url_name: str
) -> tuple[Obj, Options]:
    body = await negotiation.read_body(request)
    content_type = request.headers.get("Content-Type", "")
    obj = negotiation.decode_object(body, content_type, schemas)
    duplicates = _duplicates(body, content_type, obj)
    _check_type(info, obj)
    _check_metadata(info, obj, url_name=url_name)
    return obj, replace(options, duplicate_fields=duplicates) if duplicates else options


def _list_options(query: MultiMapping[str], field_selector: str) -> Options:
    return Options(
        label_selector=query.get("labelSelector", ""),
        field_selector=field_selector,
        limit=queryparams.query_int(query, "limit") or 0,
        continue_=query.get("continue", ""),
        resource_version=query.get("resourceVersion", ""),
        resource_version_match=query.get("resourceVersionMatch", ""),
        allow_bookmarks=queryparams.query_bool(query, "allowWatchBookmarks"),
        timeout_seconds=queryparams.query_int(query, "timeoutSeconds") or 0,
    )


def _write_options(
    query: MultiMapping[str], verb: str, patch_type: str = "", duplicates: tuple[str, ...] = ()
) -> Options:
    options = queryparams.write_options(query, verb=verb)
    return Options(
        field_manager=options["field_manager"],
        dry_run=options["dry_run"],
        force=options.get("force", False),
        patch_type=patch_type,
        field_validation=options["field_validation"],
        duplicate_fields=duplicates,
    )


class RestHandlers:
    """One method per verb; `handle` builds the `Request` from the method, path and query."""

    def __init__(self, ctx: RestContext) -> None:
        self._ctx = ctx

    async def handle(
        self, request: web.Request, info: RequestInfo, user: UserInfo
    ) -> web.StreamResponse:
        if request.method not in info.allowed_methods():
            # As go-restful's 405 through NewGenericServerResponse: no resource in the message.
            raise errors.method_not_allowed()
        request[RESOURCE_KEY] = info.rt.resource
        request[INFO_KEY] = info
        # Every option is parsed before anything is written.
        pretty = queryparams.query_bool(request.query, "pretty")
        if request.method == "GET":
            return await self._get(request, info, user, pretty)
        self._check_acceptable(request, info)
        with warnings.collect() as found:
            if request.method == "POST":
                response = await self._create(request, info, user, pretty)
            elif request.method == "PUT":
                response = await self._update(request, info, user, pretty)
            elif request.method == "PATCH":
                response = await self._patch(request, info, user, pretty)
            else:
                response = await self._delete(request, info, user, pretty)
        for message in found:
            response.headers.add("Warning", warnings.header_value(message))
        return response

    def _check_acceptable(self, request: web.Request, info: RequestInfo) -> None:
        """A write whose answer the client cannot accept is a 406 before anything is written,
        as upstream negotiates the output first."""
        api_version, kind = info.rt.api_version, info.rt.kind
        if info.subresource in kinds.SUBRESOURCE_KINDS:
            group, version, kind = kinds.SUBRESOURCE_KINDS[info.subresource]
            api_version = f"{group}/{version}" if group else version
        numbered = protobuf_serving.servable(self._ctx.catalog.schemas, api_version, kind)
        accept = request.headers.get("Accept", "")
        negotiation.output_media_type(accept, kind, protobuf_ok=numbered is not None)

    def _respond(
        self, request: web.Request, obj: Obj, *, status: int = 200, pretty: bool = False
    ) -> web.Response:
        accept = request.headers.get("Accept", "")
        schemas = self._ctx.catalog.schemas
        return negotiation.respond(accept, obj, schemas, status=status, pretty=pretty)

    async def _send(self, user: UserInfo, req: Request) -> Obj:
        result = await self._ctx.handler.handle(user, req)
        assert isinstance(result, dict)
        return result

    async def _get(
        self, request: web.Request, info: RequestInfo, user: UserInfo, pretty: bool
    ) -> web.StreamResponse:
        query = request.query
        form = negotiation.response_form(request.headers.get("Accept", ""))
        if info.watch or queryparams.query_bool(query, "watch"):
            return await self._watch(request, info, user, form)
        if info.rt is kinds.PODS and info.subresource == "log":
            request[VERB_KEY] = "GET"
            return await podlogs.serve(
                request,
                handler=self._ctx.handler,
                clock=self._ctx.clock,
                watches=self._ctx.watches,
                user=user,
                namespace=info.namespace,
                name=info.name,
            )
        if info.name:
            request[VERB_KEY] = "GET"
            req = Request(
                "get",
                info.rt,
                info.namespace,
                info.name,
                info.subresource,
                options=Options(resource_version=query.get("resourceVersion", "")),
            )
            obj = await self._send(user, req)
            body = self._render(info, [obj], form, query, single=obj)
            return self._respond(request, body, pretty=pretty)
        request[VERB_KEY] = "LIST"
        options = _list_options(query, query.get("fieldSelector", ""))
        result = await self._send(user, Request("list", info.rt, info.namespace, options=options))
        body = self._render(info, result.get("items") or [], form, query, listing=result)
        return self._respond(request, body, pretty=pretty)

    def _render(
        self,
        info: RequestInfo,
        objs: list[Obj],
        form: ResponseForm,
        query: MultiMapping[str],
        *,
        single: Obj | None = None,
        listing: Obj | None = None,
    ) -> Obj:
        """The response body for a GET in the requested form."""
        if form.form == "object":
            result = single if single is not None else listing
            assert result is not None
            return result
        list_md = dict((listing or {}).get("metadata") or {})
        if single is not None:
            list_md = {"resourceVersion": (single.get("metadata") or {}).get("resourceVersion", "")}
        if form.form == "metadata":
            if single is not None:
                return watchforms.metadata_only(single, form.version)
            return {
                "kind": "PartialObjectMetadataList",
                "apiVersion": f"meta.k8s.io/{form.version}",
                "metadata": list_md,
                "items": [watchforms.metadata_only(o, form.version) for o in objs],
            }
        return tables.to_table(
            info.rt,
            objs,
            now=self._ctx.clock.now(),
            include_object=queryparams.include_object(query),
            table_version=form.version,
            list_metadata=list_md,
        )

    async def _watch(
        self, request: web.Request, info: RequestInfo, user: UserInfo, form: ResponseForm
    ) -> web.StreamResponse:
        request[VERB_KEY] = "WATCH"
        query = request.query
        field_selector = query.get("fieldSelector", "")
        if info.name:
            name_selector = f"metadata.name={info.name}"
            field_selector = (
                f"{field_selector},{name_selector}" if field_selector else name_selector
            )
        options = _list_options(query, field_selector)
        include_object = queryparams.include_object(query)
        listoptions.validate_watch(
            match=query.get("resourceVersionMatch", ""),
            send_initial_events=query.get("sendInitialEvents", ""),
        )
        transform = watchforms.watch_form(
            request.headers.get("Accept", ""),
            info.rt,
            form,
            self._ctx.catalog.schemas,
            include_object=include_object,
            clock=self._ctx.clock,
        )
        try:
            stream = await self._ctx.handler.handle(
                user, Request("watch", info.rt, info.namespace, options=options)
            )
        except errors.StatusError as err:
            if err.code != 410:
                raise
            shared = transform if isinstance(transform, httpwatch.SharedForm) else watchforms.PLAIN
            return await httpwatch.error_stream(request, err, shared)
        assert not isinstance(stream, dict)
        return await httpwatch.serve_watch(
            request,
            stream=stream,
            transform=transform,
            timeout_seconds=options.timeout_seconds,
            active=self._ctx.watches,
        )

    async def _create(
        self, request: web.Request, info: RequestInfo, user: UserInfo, pretty: bool
    ) -> web.StreamResponse:
        request[VERB_KEY] = "POST"
        options = _write_options(request.query, "create")
        obj, options = await _read_object(
            request,
            info,
            options,
            self._ctx.catalog.schemas,
            url_name=info.name if info.subresource else "",
        )
        if info.subresource:
            # A subresource POST (binding) names its parent in the URL, not in the body.
            obj["metadata"].setdefault("name", info.name)
        req = Request("create", info.rt, info.namespace, info.name, info.subresource, obj, options)
        result = await finish_write(self._send(user, req))
        return self._respond(request, result, status=201, pretty=pretty)

    async def _update(
        self, request: web.Request, info: RequestInfo, user: UserInfo, pretty: bool
    ) -> web.StreamResponse:
        request[VERB_KEY] = "PUT"
        options = _write_options(request.query, "update")
        schemas = self._ctx.catalog.schemas
        obj, options = await _read_object(request, info, options, schemas, url_name=info.name)
        req = Request(
            "update", info.rt, info.namespace, info.name, info.subresource, obj, options, True
        )
        result = await finish_write(self._send(user, req))
        return self._respond(request, result, pretty=pretty)

    async def _patch(
        self, request: web.Request, info: RequestInfo, user: UserInfo, pretty: bool
    ) -> web.StreamResponse:
        request[VERB_KEY] = "PATCH"
        content_type = request.headers.get("Content-Type", "")
        options = _write_options(request.query, "patch", negotiation.media_type(content_type))
        body = await negotiation.read_body(request)
        patch = negotiation.decode_patch(body, content_type)
        if isinstance(patch, dict) and (duplicates := _duplicates(body, content_type, patch)):
            options = replace(options, duplicate_fields=duplicates)
        req = Request("patch", info.rt, info.namespace, info.name, info.subresource, patch, options)
        result = await finish_write(self._send(user, req))
        return self._respond(request, result, pretty=pretty)

    async def _delete(
        self, request: web.Request, info: RequestInfo, user: UserInfo, pretty: bool
    ) -> web.StreamResponse:
        query = request.query
        body = await negotiation.read_body(request)
        options = queryparams.delete_options(query)
        content_type = request.headers.get("Content-Type", "")
        schemas = self._ctx.catalog.schemas
        options.update(negotiation.decode_delete_options(body, content_type, schemas))
        if info.name:
            request[VERB_KEY] = "DELETE"
            req = Request("delete", info.rt, info.namespace, info.name, body=options or None)
        else:
            request[VERB_KEY] = "DELETECOLLECTION"
            req = Request(
                "deletecollection",
                info.rt,
                info.namespace,
                body=options or None,
                options=Options(
                    label_selector=query.get("labelSelector", ""),
                    field_selector=query.get("fieldSelector", ""),
                ),
            )
        result = await finish_write(self._send(user, req))
        accepted = options.get("orphanDependents") is False and _still_there(info, result)
        return self._respond(request, result, status=202 if accepted else 200, pretty=pretty)


def _still_there(info: RequestInfo, result: Obj) -> bool:
    """The object outlived the DELETE (graceful deletion, finalizers). kube-apiserver answers
    202 Accepted then only when the client set `orphanDependents: false`."""
    if not info.name or result.get("kind") != info.rt.kind:
        return False
    return bool((result.get("metadata") or {}).get("deletionTimestamp"))
