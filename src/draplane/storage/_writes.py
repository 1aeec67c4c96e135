"""Planning of one write: precondition checks against the current state and the resulting Event.

Pure functions shared by every backend; the backend supplies the current state (committed, or
committed plus its pending overlay) and the revision the write will get.
"""

from __future__ import annotations

import orjson

from draplane.api import errors
from draplane.api.meta import Obj
from draplane.storage.errors import KeyExists, KeyNotFound, RevisionConflict
from draplane.storage.interface import Event

Key = tuple[str, str, str]
"""(resource, namespace, name)."""


def object_key(resource: str, obj: Obj) -> Key:
    """The storage key of `obj`; 400 BadRequest when its metadata cannot address it."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(md, dict):
        raise errors.bad_request("object has no metadata")
    name = md.get("name")
    namespace = md.get("namespace") or ""
    if not isinstance(name, str) or not name:
        raise errors.bad_request("metadata.name is required")
    if not isinstance(namespace, str):
        raise errors.bad_request("metadata.namespace must be a string")
    return resource, namespace, name


def encoded_size(obj: Obj) -> int:
    """The size of `obj` as JSON (what `Event.size` holds); 400 when it cannot be encoded."""
    try:
        return len(orjson.dumps(obj))
    except TypeError as exc:
        raise errors.bad_request(f"object cannot be stored: {exc}") from None


def stored_revision(obj: Obj) -> int:
    return int(obj["metadata"]["resourceVersion"])


def _check_expected(resource: str, current: Obj, expected_rv: int | None) -> None:
    if expected_rv is not None and stored_revision(current) != expected_rv:
        md = current["metadata"]
        raise RevisionConflict(
            resource, md.get("namespace") or "", md["name"], expected_rv, stored_revision(current)
        )


def plan_create(*, resource: str, obj: Obj, current: Obj | None, revision: int) -> Event:
    _, namespace, name = object_key(resource, obj)
    if current is not None:
        raise KeyExists(resource, namespace, name)
    obj["metadata"]["resourceVersion"] = str(revision)
    return Event("ADDED", resource, obj, revision, size=encoded_size(obj))


def plan_update(
    *, resource: str, obj: Obj, current: Obj | None, expected_rv: int | None, revision: int
) -> Event:
    _, namespace, name = object_key(resource, obj)
    if current is None:
        raise KeyNotFound(resource, namespace, name)
    _check_expected(resource, current, expected_rv)
    obj["metadata"]["resourceVersion"] = str(revision)
    return Event("MODIFIED", resource, obj, revision, current, encoded_size(obj))


def plan_delete(
    *, resource: str, name: str, current: Obj | None, expected_rv: int | None, revision: int
) -> Event:
    if current is None:
        raise KeyNotFound(resource, "", name)
    _check_expected(resource, current, expected_rv)
    # Shared read-only state: copy only what changes, the rest stays shared with `current`.
    last = {**current, "metadata": {**current["metadata"], "resourceVersion": str(revision)}}
    return Event("DELETED", resource, last, revision, current, encoded_size(last))


def event_key(event: Event) -> Key:
    md = event.object["metadata"]
    return event.resource, md.get("namespace") or "", md["name"]
