"""Seeding a test cluster with builder objects and comparing API state with expectations.

Builders invent uids; the API server assigns its own. `ObjectSeeder.create()` writes objects
(status through the status subresource) and rewrites every builder uid it has seen into the
server's uid; `normalize()` maps them back and drops server-managed metadata, so a test can
compare the listed API state with objects from the builders. `StaticLister` is the lister seam
without an API: a fixed set of objects, as an informer cache would hold them.
"""

from __future__ import annotations

from typing import Any

from draplane.api.kinds import ResourceType
from draplane.api.meta import Obj
from draplane.client.interface import Client

_SERVER_METADATA = (
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "uid",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_TYPE_FIELDS = ("apiVersion", "kind")


class ObjectSeeder:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.to_server: dict[str, str] = {}
        self.to_builder: dict[str, str] = {}

    async def create(self, rt: ResourceType, obj: Obj) -> Obj:
        """Create `obj` (builder uids rewritten), then write its status if it has one; an
        object built with a deletionTimestamp (and finalizers) is then deleted."""
        builder_uid = (obj.get("metadata") or {}).get("uid")
        body = self._rewrite(obj, self.to_server)
        deleting = bool(body["metadata"].pop("deletionTimestamp", None))
        status = body.pop("status", None)
        namespace = body["metadata"].get("namespace", "") if rt.namespaced else ""
        created = await self.client.create(rt, body, namespace)
        if builder_uid:
            self.to_server[builder_uid] = created["metadata"]["uid"]
            self.to_builder[created["metadata"]["uid"]] = builder_uid
        if status and "status" in rt.subresources:
            created["status"] = status
            created = await self.client.update(rt, created, subresource="status")
        if deleting:
            created = await self.client.delete(rt, created["metadata"]["name"], namespace)
        return created

    def server_object(self, obj: Obj) -> Obj:
        """A builder object with server uids (for calling code under test directly)."""
        return self._rewrite(obj, self.to_server, keep_uid=True)

    def normalize(self, obj: Obj) -> Obj:
        """Builder uids, no server-managed metadata, no empty values."""
        mapped = self._rewrite(obj, self.to_builder)
        return normalize_expected(mapped)

    def _rewrite(self, obj: Obj, mapping: dict[str, str], *, keep_uid: bool = False) -> Obj:
        def walk(value: Any, key: str = "") -> Any:
            if isinstance(value, dict):
                return {k: walk(v, k) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v) for v in value]
            if isinstance(value, str) and key == "uid" and value in mapping:
                return mapping[value]
            return value

        result: Obj = walk(obj)
        if not keep_uid and mapping is self.to_server:
            result.get("metadata", {}).pop("uid", None)
        return result


def _drop_empty(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def normalize_expected(obj: Obj) -> Obj:
    """The same normalization for an object built by the builders."""
    md = obj.get("metadata") or {}
    obj = {k: v for k, v in obj.items() if k not in _TYPE_FIELDS}
    obj["metadata"] = {k: v for k, v in md.items() if k not in _SERVER_METADATA}
    result: Obj = _drop_empty(obj)
    return result


class StaticLister:
    """A read-only lister over fixed objects (namespaced or cluster-scoped by their metadata)."""

    def __init__(self, objs: list[Obj]) -> None:
        self._objs = {
            ((o["metadata"].get("namespace") or ""), o["metadata"]["name"]): o for o in objs
        }

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self._objs.get((namespace, name))

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        return [o for (ns, _), o in self._objs.items() if namespace is None or ns == namespace]
