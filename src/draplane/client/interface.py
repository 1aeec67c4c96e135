"""`Client`: the typed API methods every component uses, written once over a `Transport`.

Each method builds one `draplane.api.request.Request` and hands it to the transport: `LocalClient`
sends it to the API server's `ApiHandler` in-process (the same authorization, admission and
validation path as HTTP, no wire), `RESTClient` over HTTPS from a kubeconfig. Both raise
`draplane.api.errors.StatusError` for every API error, with the server's code and reason.
Returned objects are complete wire objects (with `kind`/`apiVersion`) and read-only. Fault
injection in tests wraps the one `Transport.send` method.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from draplane.api.errors import bad_request
from draplane.api.handler import WatchStream
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, metadata
from draplane.api.request import NO_OPTIONS, Options, Request, Verb

PatchType = Literal["json", "merge", "strategic", "apply"]

PATCH_CONTENT_TYPES: dict[str, str] = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


class Transport(Protocol):
    @property
    def user(self) -> str:
        """The user name requests are sent as."""
        ...

    async def send(self, request: Request) -> Obj | WatchStream: ...

    async def close(self) -> None: ...


def delete_options(
    *,
    propagation_policy: str = "",
    grace_period_seconds: int | None = None,
    preconditions: Obj | None = None,
) -> Obj | None:
    """A meta/v1 DeleteOptions body, or None when every option is left at its default."""
    options: Obj = {}
    if propagation_policy:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if preconditions:
        options["preconditions"] = preconditions
    if not options:
        return None
    return {"kind": "DeleteOptions", "apiVersion": "v1", **options}


class Client:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    @property
    def user(self) -> str:
        """The user name this client acts as."""
        return self.transport.user

    async def _object(
        self,
        verb: Verb,
        rt: ResourceType,
        namespace: str = "",
        name: str = "",
        subresource: str = "",
        body: Any = None,
        options: Options | None = None,
    ) -> Obj:
        request = Request(
            verb,
            rt,
            namespace if rt.namespaced else "",
            name,
            subresource,
            body,
            options or NO_OPTIONS,
        )
        result = await self.transport.send(request)
        assert isinstance(result, dict)
        return result

    async def get(
        self, rt: ResourceType, name: str, namespace: str = "", *, subresource: str = ""
    ) -> Obj:
        return await self._object("get", rt, namespace, name, subresource)

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
        """A `<Kind>List` with `items` and `metadata.resourceVersion` (and `continue`)."""
        options = Options(
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_=continue_,
            resource_version=resource_version,
        )
        return await self._object("list", rt, namespace, options=options)

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
    ) -> WatchStream:
        """Events after `resource_version` ("" or "0": synthetic ADDED for current state first).
        A too-old revision yields one ERROR event whose object is a Status with code 410."""
        options = Options(
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
            allow_bookmarks=allow_bookmarks,
            timeout_seconds=timeout_seconds,
        )
        request = Request("watch", rt, namespace if rt.namespaced else "", options=options)
        stream = await self.transport.send(request)
        assert not isinstance(stream, dict)
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
        """POST; with `subresource` (e.g. `binding`) the parent object is `name`."""
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        ns = namespace or str(metadata(obj).get("namespace") or "")
        options = Options(field_manager=field_manager)
        return await self._object(
            "create", rt, ns, name if subresource else "", subresource, obj, options
        )

    async def update(
        self, rt: ResourceType, obj: Obj, *, subresource: str = "", field_manager: str = ""
    ) -> Obj:
        """PUT of obj at its namespace/name; `metadata.resourceVersion` is the precondition."""
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        md = metadata(obj)
        name = str(md.get("name") or "")
        if not name:
            raise bad_request("resource name may not be empty")
        options = Options(field_manager=field_manager)
        ns = str(md.get("namespace") or "")
        return await self._object("update", rt, ns, name, subresource, obj, options)

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
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise bad_request(f"unknown patch type {patch_type!r}")
        if not name:
            raise bad_request("resource name may not be empty")
        options = Options(field_manager=field_manager, force=force, patch_type=content_type)
        return await self._object("patch", rt, namespace, name, subresource, patch, options)

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
        """The deleted object (or a Status, for kinds whose DELETE returns one), or the object
        now carrying deletionTimestamp."""
        if not name:
            raise bad_request("resource name may not be empty")
        body = delete_options(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
        )
        return await self._object("delete", rt, namespace, name, body=body)

    async def delete_collection(
        self,
        rt: ResourceType,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Obj:
        options = Options(label_selector=label_selector, field_selector=field_selector)
        return await self._object("deletecollection", rt, namespace, options=options)

    async def close(self) -> None:
        await self.transport.close()
