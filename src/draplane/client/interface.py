"""The `Client` protocol every component talks to the API through.

Two implementations: `LocalClient` (in-process, same authentication, admission and validation
path as HTTP, no wire) and `RESTClient` (HTTP, from a kubeconfig). Both raise
`draplane.api.errors.StatusError` for every API error, with the server's code and reason.
Returned objects are complete wire objects (with `kind`/`apiVersion`) and read-only.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from draplane.api.handler import WatchStream
from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj

PatchType = Literal["json", "merge", "strategic", "apply"]

PATCH_CONTENT_TYPES: dict[str, str] = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


class Client(Protocol):
    @property
    def user(self) -> str:
        """The user name this client acts as."""
        ...

    async def get(
        self, rt: ResourceType, name: str, namespace: str = "", *, subresource: str = ""
    ) -> Obj: ...

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
        ...

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
        ...

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
        ...

    async def update(
        self, rt: ResourceType, obj: Obj, *, subresource: str = "", field_manager: str = ""
    ) -> Obj:
        """PUT of obj at its namespace/name; `metadata.resourceVersion` is the precondition."""
        ...

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
    ) -> Obj: ...

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
        """Returns the deleted object, or the object now carrying deletionTimestamp."""
        ...

    async def delete_collection(
        self,
        rt: ResourceType,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Obj: ...

    async def close(self) -> None: ...
