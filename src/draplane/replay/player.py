"""Replaying a recording into a fresh in-process draplane (`whatif.plane_config`: memory
store, scheduler, controllers, no kubelets or drivers), at real time or `speed` times faster.

Only user-driven objects are re-created: Nodes, Namespaces, ServiceAccounts, PriorityClasses,
DeviceClasses, DeviceTaintRules and ResourceSlices always; Pods, ResourceClaims, templates
and workloads when no controller owns them. Pods are created without `spec.nodeName` and every
object without status (Nodes keep theirs: no kubelet writes it), so the replayed scheduler,
claim controller and workload controllers do the rest. A later change of a user-driven
object's spec, labels or annotations is applied as an update; a deletion as a delete (pods at
once: no kubelet finishes them).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from draplane.api import errors, meta
from draplane.api.kinds import (
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    NODES,
    PODS,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
    ResourceType,
)
from draplane.api.meta import Obj
from draplane.client.interface import Client
from draplane.replay.recording import Event
from draplane.whatif.seed import fresh
from draplane.whatif.state import SERVER_CREATED

ALWAYS_REPLAYED = (*SERVER_CREATED, NODES, DEVICE_CLASSES, DEVICE_TAINT_RULES, RESOURCE_SLICES)
"""Kinds re-created even when owned (a driver's slices are owned by their Node); of the kinds
the fresh server creates objects of itself, an existing object is kept."""
IMMUTABLE = (PODS, RESOURCE_CLAIMS_V1)
"""Kinds whose recorded changes are the control plane's (binding, allocation), not the user's."""


def user_driven(rt: ResourceType, obj: Obj) -> bool:
    return rt in ALWAYS_REPLAYED or meta.controller_ref(obj) is None


def desired(rt: ResourceType, obj: Obj) -> Any:
    """What replay keeps in step: spec, labels, annotations (and a Node's status)."""
    md = meta.metadata(obj)
    keep = (obj.get("spec"), md.get("labels"), md.get("annotations"))
    return (*keep, obj.get("status")) if rt is NODES else keep


class Player:
    """Applies recorded events to `client`'s API server, mapping recorded uids to new ones."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.uids: dict[str, str] = {}
        self.applied: dict[tuple[str, str, str], Any] = {}
        """(kind, namespace, name) -> `desired` of the version last written."""
        self.errors: list[str] = []

    async def apply(self, event: Event) -> None:
        rt, obj = event.rt, event.object
        if not user_driven(rt, obj):
            return
        key = (rt.kind, meta.namespace(obj), meta.name(obj))
        try:
            if event.type == "DELETED" or (meta.deletion_timestamp(obj) and rt is PODS):
                if self.applied.pop(key, None) is not None:
                    await self._delete(rt, obj)
            elif key not in self.applied:
                await self._create(rt, obj)
                self.applied[key] = desired(rt, obj)
            elif rt not in IMMUTABLE and desired(rt, obj) != self.applied[key]:
                await self._update(rt, obj)
                self.applied[key] = desired(rt, obj)
        except errors.StatusError as err:
            self.errors.append(f"{event.type} {rt.kind} {meta.namespaced_key(obj)}: {err}")

    async def _create(self, rt: ResourceType, obj: Obj) -> None:
        body = fresh(obj, self.uids)
        if rt is PODS:
            body.get("spec", {}).pop("nodeName", None)
        try:
            created = await self.client.create(rt, body, meta.namespace(obj))
        except errors.StatusError as err:
            if rt in SERVER_CREATED and err.code == 409:
                return
            raise
        self.uids[meta.uid(obj)] = meta.uid(created)
        if rt is NODES and obj.get("status"):
            await self.client.update(rt, {**created, "status": obj["status"]}, subresource="status")

    async def _update(self, rt: ResourceType, obj: Obj) -> None:
        current = await self.client.get(rt, meta.name(obj), meta.namespace(obj))
        body = fresh(obj, self.uids)
        md = {**current["metadata"]}
        for field in ("labels", "annotations"):
            md[field] = body["metadata"].get(field) or {}
        updated = await self.client.update(
            rt, {**current, "metadata": md, "spec": body.get("spec")}
        )
        if rt is NODES and obj.get("status"):
            status = {**updated, "status": obj["status"]}
            await self.client.update(rt, status, subresource="status")

    async def _delete(self, rt: ResourceType, obj: Obj) -> None:
        grace = 0 if rt is PODS else None
        try:
            await self.client.delete(
                rt, meta.name(obj), meta.namespace(obj), grace_period_seconds=grace
            )
        except errors.StatusError as err:
            if err.code != 404:
                raise


async def play(client: Client, events: list[Event], *, speed: float = 1.0) -> Player:
    """Apply `events` at their times divided by `speed` (from now); the player, with any
    request the fresh server refused in `errors`."""
    player = Player(client)
    started = time.monotonic()
    for event in events:
        delay = event.t / speed - (time.monotonic() - started)
        if delay > 0:
            await asyncio.sleep(delay)
        await player.apply(event)
    return player
