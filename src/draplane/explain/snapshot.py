"""The cluster state `draplane explain` reasons over: an in-memory `Snapshot` read once through
the API (nodes, pods, resource.k8s.io/v1 claims, DeviceClasses, ResourceSlices), never written
back. Objects are shared and read-only; `Snapshot.changed` makes the copy a candidate fix is
checked on (replaced objects only, so a check on 5,000 nodes copies no node).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from draplane import dra
from draplane.api import meta
from draplane.api.kinds import (
    DEVICE_CLASSES,
    NODES,
    PODS,
    RESOURCE_CLAIMS_V1,
    RESOURCE_SLICES,
    ResourceType,
)
from draplane.api.meta import Obj
from draplane.api.selectors import LabelSelector
from draplane.client.interface import Client

Key = tuple[str, str]
"""(namespace, name); namespace "" for cluster-scoped kinds."""

KINDS: tuple[ResourceType, ...] = (NODES, PODS, RESOURCE_CLAIMS_V1, DEVICE_CLASSES, RESOURCE_SLICES)
TERMINAL_PHASES = ("Succeeded", "Failed")


def key_of(obj: Obj) -> Key:
    md = meta.metadata(obj)
    return (str(md.get("namespace") or ""), str(md.get("name") or ""))


class SnapshotLister:
    """A scheduler `Lister` over one kind of a snapshot."""

    def __init__(self, objects: Mapping[Key, Obj]) -> None:
        self._objects = objects

    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self._objects.get((namespace, name))

    def list(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        selector = LabelSelector.parse(label_selector) if label_selector else None
        return [
            obj
            for (ns, _), obj in sorted(self._objects.items())
            if (namespace is None or not namespace or ns == namespace)
            and (selector is None or selector.matches(meta.metadata(obj).get("labels") or {}))
        ]


@dataclass
class Snapshot:
    """The objects of every kind in `KINDS`, by kind and (namespace, name)."""

    objects: dict[ResourceType, dict[Key, Obj]] = field(
        default_factory=lambda: {rt: {} for rt in KINDS}
    )

    @classmethod
    def of(cls, objects: Mapping[ResourceType, Iterable[Obj]]) -> Snapshot:
        snap = cls()
        for rt, items in objects.items():
            snap.objects[rt] = {key_of(o): o for o in items}
        return snap

    def kind(self, rt: ResourceType) -> dict[Key, Obj]:
        return self.objects[rt]

    def get(self, rt: ResourceType, name: str, namespace: str = "") -> Obj | None:
        return self.objects[rt].get((namespace, name))

    def listers(self) -> dict[ResourceType, SnapshotLister]:
        return {rt: SnapshotLister(objs) for rt, objs in self.objects.items()}

    @property
    def nodes(self) -> list[Obj]:
        return [self.objects[NODES][k] for k in sorted(self.objects[NODES])]

    def bound_pods(self) -> dict[str, list[Obj]]:
        """Node name -> the pods counted against it (bound and not terminated)."""
        out: dict[str, list[Obj]] = {}
        for pod in self.objects[PODS].values():
            node = meta.node_name(pod)
            if node and meta.pod_status(pod).get("phase") not in TERMINAL_PHASES:
                out.setdefault(node, []).append(pod)
        return out

    def changed(
        self,
        *,
        put: Iterable[tuple[ResourceType, Obj]] = (),
        remove: Iterable[tuple[ResourceType, Key]] = (),
    ) -> Snapshot:
        """A copy with `put` objects added or replaced and `remove` keys dropped."""
        snap = Snapshot({rt: dict(objs) for rt, objs in self.objects.items()})
        for rt, key in remove:
            snap.objects[rt].pop(key, None)
        for rt, obj in put:
            snap.objects[rt][key_of(obj)] = obj
        return snap

    def pod_claims(self, pod: Obj) -> list[tuple[str, str | None, Obj | None]]:
        """(pod claim name, claim name or None when not created yet, the claim if it exists)."""
        out: list[tuple[str, str | None, Obj | None]] = []
        namespace = meta.namespace(pod)
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            try:
                name, _ = dra.name(pod, pod_claim)
            except dra.ClaimNameError:
                name = None
            claim = self.get(RESOURCE_CLAIMS_V1, name, namespace) if name else None
            out.append((str(pod_claim.get("name") or ""), name, claim))
        return out

    def claim_holders(self) -> dict[tuple[str, str, str], list[Obj]]:
        """Device ID (driver, pool, device) -> the allocated claims holding it."""
        out: dict[tuple[str, str, str], list[Obj]] = {}
        for claim in self.objects[RESOURCE_CLAIMS_V1].values():
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for r in (allocation.get("devices") or {}).get("results") or ():
                did = (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
                out.setdefault(did, []).append(claim)
        return out


async def read_snapshot(client: Client) -> Snapshot:
    """List every kind once through the API (read-only)."""
    objects: dict[ResourceType, list[Obj]] = {}
    for rt in KINDS:
        listed = await client.list(rt)
        kind = rt.kind
        items = []
        for item in listed.get("items") or ():
            item.setdefault("kind", kind)
            items.append(item)
        objects[rt] = items
    return Snapshot.of(objects)
