"""The `ApiHandler` protocol: the API server's verbs, callable in-process with a user.

The API server's registry implements it (authorization, admission, defaulting, validation,
storage); HTTP handlers and `LocalClient` both call it, so both share one request path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from draplane.api.auth import UserInfo
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: WatchEventType
    object: Obj


class WatchStream(Protocol):
    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    async def close(self) -> None: ...


class ApiHandler(Protocol):
    async def get(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        subresource: str = "",
        resource_version: str = "",
    ) -> Obj: ...

    async def list(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> Obj: ...

    async def watch(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        allow_bookmarks: bool = False,
        timeout_seconds: int = 0,
    ) -> WatchStream: ...

    async def create(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        obj: Obj,
        *,
        subresource: str = "",
        name: str = "",
        field_manager: str = "",
        dry_run: bool = False,
    ) -> Obj: ...

    async def update(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        obj: Obj,
        *,
        subresource: str = "",
        field_manager: str = "",
        dry_run: bool = False,
    ) -> Obj: ...

    async def patch(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch: Any,
        patch_type: str,
        *,
        subresource: str = "",
        field_manager: str = "",
        force: bool = False,
        dry_run: bool = False,
    ) -> Obj:
        """`patch_type` is a content type (application/merge-patch+json, ...); `patch` is the
        decoded body (a dict, or a list for JSON patch)."""
        ...

    async def delete(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        options: Obj | None = None,
    ) -> Obj: ...

    async def delete_collection(
        self,
        user: UserInfo,
        rt: ResourceType,
        namespace: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        options: Obj | None = None,
    ) -> Obj: ...
