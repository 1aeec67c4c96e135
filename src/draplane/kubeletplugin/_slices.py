"""`SlicePublisher`: one pool's ResourceSlices kept as a driver wants them, as the resourceslice
controller of k8s.io/dynamic-resource-allocation (v0.36) does.

Slices are named by generateName `<hex slice index>-<driver>-<pool>-`, carry `pool{name,
generation, resourceSliceCount}`, and a node pool's slices have `nodeName` and an owner
reference to the Node (the garbage collector removes them with it). Generation: the first
publish writes generation 1; an update that creates no slice and changes at most one keeps the
generation; anything else bumps it. Obsolete slices are deleted before new ones are written.
A node's plugin publishes through the node's own client, so the node authorizer lets it write
only its own slices.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import cast

from draplane.api import errors, meta
from draplane.api.kinds import RESOURCE_GROUP, ResourceType
from draplane.api.meta import Obj
from draplane.api.types import ObjectMeta, OwnerReference, ResourceSlice, ResourceSliceSpec
from draplane.client.interface import Client

log = logging.getLogger(__name__)

RESOURCE_SLICES = ResourceType(
    RESOURCE_GROUP, "v1", "resourceslices", "ResourceSlice", False, "resourceslice"
)
"""resource.k8s.io/v1 ResourceSlice (the structured mode's kind of the same name)."""


@dataclass(frozen=True)
class PublishResult:
    generation: int
    created: int
    updated: int
    deleted: int


class SlicePublisher:
    """Publishes the slices of pool `pool` of `driver_name`; `owner` (a Node) is set as the
    controller owner of every slice."""

    def __init__(
        self,
        client: Client,
        *,
        driver_name: str,
        pool: str,
        node_name: str = "",
        owner: Obj | None = None,
    ) -> None:
        self._client = client
        self.driver_name = driver_name
        self.pool = pool
        self.node_name = node_name
        self._owner = owner

    async def current(self) -> list[ResourceSlice]:
        """This pool's slices as stored, by name."""
        selector = f"spec.nodeName={self.node_name}" if self.node_name else ""
        listed = await self._client.list(RESOURCE_SLICES, field_selector=selector)
        items = cast(list[ResourceSlice], listed.get("items") or [])
        mine = [
            s
            for s in items
            if (spec := s.get("spec") or {}).get("driver") == self.driver_name
            and (spec.get("pool") or {}).get("name") == self.pool
        ]
        return sorted(mine, key=meta.name)

    async def publish(self, specs: list[ResourceSliceSpec]) -> PublishResult:
        """Make the pool consist of `specs` (ResourceSlice specs without `pool`)."""
        existing = await self.current()
        generation = max((_generation(s) for s in existing), default=0)
        kept = [s for s in existing if _generation(s) == generation]
        obsolete = [s for s in existing if _generation(s) != generation] + kept[len(specs) :]
        kept = kept[: len(specs)]
        count = len(specs)
        wanted = [self._spec(spec, generation, count) for spec in specs]
        changed = [i for i, s in enumerate(kept) if s.get("spec") != wanted[i]]
        new = len(specs) - len(kept)
        if not existing or new > 0 or len(changed) > 1:
            generation += 1
            wanted = [self._spec(spec, generation, count) for spec in specs]
            changed = list(range(len(kept)))
        for stale in obsolete:
            await self._delete(stale)
        for i in changed:
            updated = meta.deep_copy(kept[i])
            updated["spec"] = wanted[i]
            await self._client.update(RESOURCE_SLICES, updated)
        for i in range(len(kept), len(specs)):
            await self._client.create(RESOURCE_SLICES, cast(Obj, self._slice(i, wanted[i])))
        return PublishResult(generation, new, len(changed), len(obsolete))

    async def remove(self) -> int:
        """Delete every slice of the pool (the plugin unregistered); the number deleted."""
        existing = await self.current()
        for stale in existing:
            await self._delete(stale)
        return len(existing)

    def _spec(self, spec: ResourceSliceSpec, generation: int, count: int) -> ResourceSliceSpec:
        out = spec.copy()
        out["pool"] = {"name": self.pool, "generation": generation, "resourceSliceCount": count}
        return out

    def _slice(self, index: int, spec: ResourceSliceSpec) -> ResourceSlice:
        metadata: ObjectMeta = {
            "generateName": f"{index:x}-{self.driver_name}-{self.pool}-",
        }
        if self._owner is not None:
            metadata["ownerReferences"] = [cast(OwnerReference, meta.owner_reference(self._owner))]
        return {
            "apiVersion": RESOURCE_SLICES.api_version,
            "kind": RESOURCE_SLICES.kind,
            "metadata": metadata,
            "spec": spec,
        }

    async def _delete(self, stale: ResourceSlice) -> None:
        try:
            await self._client.delete(
                RESOURCE_SLICES,
                meta.name(stale),
                preconditions={"uid": meta.uid(stale)},
            )
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                raise


def _generation(slice_: ResourceSlice) -> int:
    return int(((slice_.get("spec") or {}).get("pool") or {}).get("generation") or 0)
