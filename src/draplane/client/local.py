"""`LocalClient`: the `Client` protocol in-process, over the API server's `ApiHandler`.

It takes the same authorization, admission, validation and storage path as an HTTP request
(the handler is the registry both share), just without encoding and the wire.
"""

from __future__ import annotations

from typing import Any

from draplane.api.auth import UserInfo
from draplane.api.errors import bad_request
from draplane.api.handler import ApiHandler, WatchStream
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj, metadata
from draplane.client.interface import PATCH_CONTENT_TYPES, PatchType


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


class LocalClient:
    """Implements `draplane.client.interface.Client` by calling the handler as `user`."""

    def __init__(self, handler: ApiHandler, user: UserInfo) -> None:
        self._handler = handler
        self._user_info = user

    @property
    def user(self) -> str:
        return self._user_info.name

    @property
    def user_info(self) -> UserInfo:
        return self._user_info

    def with_user(self, user: UserInfo) -> LocalClient:
        """The same handler, acting as another user."""
        return LocalClient(self._handler, user)

    async def get(
        self, rt: ResourceType, name: str, namespace: str = "", *, subresource: str = ""
    ) -> Obj:
        return await self._handler.get(
            self._user_info, rt, namespace, name, subresource=subresource
        )

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
        return await self._handler.list(
            self._user_info,
            rt,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_=continue_,
            resource_version=resource_version,
        )

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
        return await self._handler.watch(
            self._user_info,
            rt,
            namespace,
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
            allow_bookmarks=allow_bookmarks,
            timeout_seconds=timeout_seconds,
        )

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
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        ns = namespace or (str(metadata(obj).get("namespace") or "") if rt.namespaced else "")
        return await self._handler.create(
            self._user_info,
            rt,
            ns,
            obj,
            subresource=subresource,
            name=name,
            field_manager=field_manager,
        )

    async def update(
        self, rt: ResourceType, obj: Obj, *, subresource: str = "", field_manager: str = ""
    ) -> Obj:
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        md = metadata(obj)
        name = str(md.get("name") or "")
        if not name:
            raise bad_request("resource name may not be empty")
        ns = str(md.get("namespace") or "") if rt.namespaced else ""
        return await self._handler.update(
            self._user_info,
            rt,
            ns,
            name,
            obj,
            subresource=subresource,
            field_manager=field_manager,
        )

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
        return await self._handler.patch(
            self._user_info,
            rt,
            namespace,
            name,
            patch,
            content_type,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
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
        if not name:
            raise bad_request("resource name may not be empty")
        options = delete_options(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
        )
        return await self._handler.delete(self._user_info, rt, namespace, name, options=options)

    async def delete_collection(
        self,
        rt: ResourceType,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Obj:
        return await self._handler.delete_collection(
            self._user_info,
            rt,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
        )

    async def close(self) -> None:
        """Nothing to release: there is no connection."""
