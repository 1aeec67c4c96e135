"""The request value: one API call as the HTTP layer and the in-process client both build it.

`Request` holds what kube-apiserver's `RequestInfo` and the body hold: the verb, the resource
type, namespace, name, subresource, the body (the object for create and update, the patch
document for patch, DeleteOptions for delete) and the options of the query string. The API server
has one entry for it, `ApiHandler.handle(user, request)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from draplane.api.kinds import ResourceType

Verb = Literal["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]

READ_VERBS = frozenset({"get", "list", "watch"})
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True, slots=True)
class Options:
    """Query options (ListOptions, CreateOptions, UpdateOptions, PatchOptions)."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    allow_bookmarks: bool = False
    timeout_seconds: int = 0
    field_manager: str = ""
    force: bool = False
    dry_run: bool = False
    patch_type: str = ""
    """The patch's content type (application/merge-patch+json, ...)."""
    field_validation: str = ""
    """Strict, Warn or Ignore; "" is Warn, as upstream's default."""
    duplicate_fields: tuple[str, ...] = ()
    """Paths of the fields the body held more than once (found while parsing it)."""


NO_OPTIONS = Options()


@dataclass(frozen=True, slots=True)
class Request:
    verb: Verb
    rt: ResourceType
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    body: Any = None
    options: Options = field(default=NO_OPTIONS)
    owned: bool = False
    """The body was decoded for this request alone (the HTTP layer): an update may change it
    instead of copying it first. False for a caller's object (the in-process client)."""
    asked: ResourceType | None = None
    """The version the client wrote when `rt` is its storage type (a converted write,
    `draplane.api.conversion`): its declaration defaults and validates the write."""

    @property
    def is_write(self) -> bool:
        return self.verb in WRITE_VERBS


def resource_path(
    rt: ResourceType, namespace: str = "", name: str = "", subresource: str = ""
) -> str:
    """The REST path of a resource: `/api/v1/namespaces/ns/pods/p/status`."""
    parts = ["/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"]
    if rt.namespaced and namespace:
        parts.append(f"namespaces/{quote(namespace, safe='')}")
    parts.append(rt.resource)
    if name:
        parts.append(quote(name, safe=""))
        if subresource:
            parts.append(subresource)
    return "/".join(parts)
