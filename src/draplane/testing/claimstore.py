"""A resource.k8s.io/v1 claim store for the structured DynamicResources tests.

`ClaimStore` is the Transport of a real `Client` (update with resourceVersion preconditions,
`status` writes that keep spec and metadata, 404/409 Status errors) and the claim informer's
lister; the lister shows the stored objects only after `sync()`, so tests decide when the
informer catches up (the assume cache's case). It stands in for the API server until the 1.36
mode serves the v1 kinds in the in-process cluster.
"""

from __future__ import annotations

from typing import Any

from draplane.api import errors
from draplane.api.handler import WatchStream
from draplane.api.meta import Obj, deep_copy
from draplane.api.request import Request
from draplane.client.interface import Client
from draplane.dra.resourcev1 import (
    DEVICE_CLASSES,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
)
from draplane.scheduler.framework import Handle, Lister, NodeInfo, PodInfo
from draplane.testing.apiobjects import StaticLister


class ClaimStore:
    user = "system:kube-scheduler"

    def __init__(self, claims: list[Obj]) -> None:
        self.stored: dict[tuple[str, str], Obj] = {}
        self.writes: list[str] = []
        self.conflicts_left = 0
        """Updates to answer with 409 (after bumping the stored resourceVersion)."""
        for c in claims:
            obj = deep_copy(c)
            obj["metadata"].setdefault("resourceVersion", "1")
            self.stored[(obj["metadata"].get("namespace") or "", obj["metadata"]["name"])] = obj
        self.visible: dict[tuple[str, str], Obj] = dict(self.stored)
        self._handlers: list[tuple[Any, Any, Any]] = []

    def sync(self) -> None:
        """The informer catches up: the stored objects become visible, and the registered
        handlers see the adds, updates and deletes in between."""
        before, self.visible = self.visible, dict(self.stored)
        for on_add, on_update, on_delete in self._handlers:
            for key, obj in self.visible.items():
                old = before.get(key)
                if old is None and on_add is not None:
                    on_add(obj)
                elif old is not None and old is not obj and on_update is not None:
                    on_update(old, obj)
            for key, old in before.items():
                if key not in self.visible and on_delete is not None:
                    on_delete(old)

    def add_handler(
        self, *, on_add: Any = None, on_update: Any = None, on_delete: Any = None
    ) -> None:
        """The informer's EventSource: the visible objects arrive as adds first."""
        self._handlers.append((on_add, on_update, on_delete))
        if on_add is not None:
            for obj in self.visible.values():
                on_add(obj)

    def delete(self, name: str, namespace: str = "default") -> None:
        self.stored.pop((namespace, name), None)

    # -- Lister --------------------------------------------------------------------------------

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self.visible.get((namespace, name))

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        return [o for (ns, _), o in self.visible.items() if namespace is None or ns == namespace]

    # -- Transport -----------------------------------------------------------------------------

    async def send(self, request: Request) -> Obj | WatchStream:
        key = (request.namespace, request.name)
        current = self.stored.get(key)
        if current is None:
            raise errors.not_found(request.rt, request.name)
        if request.verb == "get":
            return current
        if request.verb == "delete":
            del self.stored[key]
            self.writes.append(f"delete {request.name}")
            return {"kind": "Status", "apiVersion": "v1", "status": "Success"}
        assert request.verb == "update", request.verb
        body: Obj = request.body
        if self.conflicts_left:
            self.conflicts_left -= 1
            bumped = deep_copy(current)
            bumped["metadata"]["resourceVersion"] = str(
                int(current["metadata"]["resourceVersion"]) + 1
            )
            self.stored[key] = bumped
            raise errors.conflict(request.rt, request.name)
        if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise errors.conflict(request.rt, request.name)
        if request.subresource == "status":
            updated = {**deep_copy(current), "status": deep_copy(body.get("status") or {})}
        else:
            updated = {**deep_copy(body), "status": deep_copy(current.get("status") or {})}
        updated["metadata"]["resourceVersion"] = str(
            int(current["metadata"]["resourceVersion"]) + 1
        )
        self.stored[key] = updated
        self.writes.append(f"{request.subresource or 'update'} {request.name}")
        return updated

    async def close(self) -> None:
        return None


def structured_handle(
    store: ClaimStore,
    *,
    classes: list[Obj],
    slices: list[Obj],
    extra: dict[Any, Lister] | None = None,
) -> Handle:
    listers: dict[Any, Lister] = {
        RESOURCE_CLAIMS_V1: store,
        DEVICE_CLASSES: StaticLister(classes),
        RESOURCE_SLICES: StaticLister(slices),
        **(extra or {}),
    }
    return Handle(Client(store), listers, event_sources={RESOURCE_CLAIMS_V1: store})


def node_infos(*nodes: Obj) -> list[NodeInfo]:
    return [NodeInfo(n) for n in nodes]


def pod_info(pod: Obj) -> PodInfo:
    return PodInfo(pod)
