"""The chainable builder base every test-object builder extends: metadata setters (`name`,
`label`, `owner`, ...), `set(path, value)` and `obj()` (a fresh copy each call); and
`_ReservedFor`, the `status.reservedFor` setter both ResourceClaim builders share."""

from __future__ import annotations

import itertools
from typing import Any, Self

from draplane.api.meta import Obj, deep_copy

_uids = itertools.count(1)


def _uid(prefix: str) -> str:
    return f"{prefix}-uid-{next(_uids):06d}"


class _Builder:
    def __init__(self, obj: Obj) -> None:
        self._obj = obj

    def obj(self) -> Obj:
        return deep_copy(self._obj)

    @property
    def _md(self) -> Obj:
        md: Obj = self._obj.setdefault("metadata", {})
        return md

    def name(self, value: str) -> Self:
        self._md["name"] = value
        return self

    def generate_name(self, value: str) -> Self:
        self._md.pop("name", None)
        self._md["generateName"] = value
        return self

    def namespace(self, value: str) -> Self:
        self._md["namespace"] = value
        return self

    def uid(self, value: str) -> Self:
        self._md["uid"] = value
        return self

    def resource_version(self, value: str) -> Self:
        self._md["resourceVersion"] = value
        return self

    def label(self, key: str, value: str) -> Self:
        self._md.setdefault("labels", {})[key] = value
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._md.setdefault("annotations", {})[key] = value
        return self

    def finalizer(self, value: str) -> Self:
        self._md.setdefault("finalizers", []).append(value)
        return self

    def deletion_timestamp(self, value: str = "2026-01-01T00:00:00Z") -> Self:
        self._md["deletionTimestamp"] = value
        return self

    def creation_timestamp(self, value: str) -> Self:
        self._md["creationTimestamp"] = value
        return self

    def owner(
        self,
        kind: str,
        name: str,
        uid: str,
        *,
        controller: bool = True,
        api_version: str = "v1",
        block_owner_deletion: bool | None = None,
    ) -> Self:
        ref: Obj = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
        if controller:
            ref["controller"] = True
        if block_owner_deletion is not None:
            ref["blockOwnerDeletion"] = block_owner_deletion
        self._md.setdefault("ownerReferences", []).append(ref)
        return self

    def owned_by_pod(self, pod: Obj) -> Self:
        md = pod["metadata"]
        return self.owner("Pod", md["name"], md["uid"], block_owner_deletion=True)

    def set(self, path: str, value: Any) -> Self:
        """Set a dotted path (`spec.nodeName`), creating maps on the way."""
        parts = path.split(".")
        target = self._obj
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value
        return self


class _ReservedFor(_Builder):
    def reserved_for(self, *pods: Obj) -> Self:
        """Append a `status.reservedFor` entry (resource "pods", name, uid) for each pod."""
        status = self._obj.setdefault("status", {})
        for pod in pods:
            status.setdefault("reservedFor", []).append(
                {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
            )
        return self
