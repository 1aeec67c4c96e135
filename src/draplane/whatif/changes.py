"""The hypothetical changes `draplane whatif` applies to a forked state (never to the cluster):
add nodes like an existing one (its Node and the ResourceSlices published for it), remove a
pool's slices, taint devices (a NoSchedule taint in their slice), add objects from manifests.
Each returns a new `Snapshot`; the input is not modified.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from draplane.api import meta
from draplane.api.kinds import NAMESPACES, NODES, RESOURCE_SLICES, ResourceType
from draplane.api.meta import Obj
from draplane.explain import Snapshot
from draplane.whatif.state import StateError, compact, kind_for

TAINT_KEY = "draplane.io/whatif"
"""The key of the taint `--taint-devices` puts on a device."""


@dataclass
class Changes:
    add_nodes: int = 0
    like: str = ""
    """The node the added nodes copy (`--like`)."""
    remove_pools: list[str] = field(default_factory=list)
    """`POOL` or `DRIVER/POOL`."""
    taint_devices: list[str] = field(default_factory=list)
    """`DRIVER/POOL/DEVICE` (DEVICE `*`: every device of the pool)."""
    manifests: list[Obj] = field(default_factory=list)

    def describe(self) -> list[str]:
        out = []
        if self.add_nodes:
            out.append(f"add {self.add_nodes} node(s) like {self.like}")
        out += [f"remove pool {p}" for p in self.remove_pools]
        out += [f"taint device(s) {d}" for d in self.taint_devices]
        if self.manifests:
            out.append(f"apply {len(self.manifests)} object(s) from manifests")
        return out


def added_node_name(like: str, i: int) -> str:
    return f"{like}-whatif-{i}"


def _renamed(value: str, old: str, new: str) -> str:
    return value.replace(old, new) if old in value else f"{value}-{new}"


def add_nodes(state: Snapshot, like: str, count: int) -> Snapshot:
    """`count` copies of Node `like` with its slices (pools and slice names renamed after the
    new node)."""
    node = state.get(NODES, like)
    if node is None:
        raise StateError(f"--like: node {like} not found")
    slices = [s for s in state.kind(RESOURCE_SLICES).values() if _slice_node(s) == like]
    put: list[tuple[ResourceType, Obj]] = []
    for i in range(count):
        name = added_node_name(like, i)
        copy = meta.deep_copy(node)
        md = copy["metadata"] = {
            k: v for k, v in copy["metadata"].items() if k in ("labels", "annotations")
        }
        md["name"] = name
        labels = md.setdefault("labels", {})
        if "kubernetes.io/hostname" in labels:
            labels["kubernetes.io/hostname"] = name
        copy.get("spec", {}).pop("providerID", None)
        put.append((NODES, copy))
        for s in slices:
            sl = meta.deep_copy(s)
            sl["metadata"] = {"name": _renamed(meta.name(s), like, name)}
            sl["spec"]["nodeName"] = name
            pool = sl["spec"].setdefault("pool", {})
            pool["name"] = _renamed(str(pool.get("name") or ""), like, name)
            put.append((RESOURCE_SLICES, sl))
    return state.changed(put=put)


def _slice_node(s: Obj) -> str:
    return str((s.get("spec") or {}).get("nodeName") or "")


def _pool(s: Obj) -> tuple[str, str]:
    spec = s.get("spec") or {}
    return str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or "")


def _pool_matches(s: Obj, pattern: str) -> bool:
    driver, pool = _pool(s)
    want_driver, sep, want_pool = pattern.rpartition("/")
    return pool == want_pool and (not sep or driver == want_driver)


def remove_pool(state: Snapshot, pattern: str) -> Snapshot:
    """Drop the slices of pool `pattern` (`POOL` or `DRIVER/POOL`); allocated claims keep
    their devices, as they do when a driver stops publishing them."""
    gone = [k for k, s in state.kind(RESOURCE_SLICES).items() if _pool_matches(s, pattern)]
    if not gone:
        raise StateError(f"--remove-pool: no ResourceSlice of pool {pattern}")
    return state.changed(remove=[(RESOURCE_SLICES, k) for k in gone])


def taint_devices(state: Snapshot, target: str) -> Snapshot:
    """A NoSchedule taint (`TAINT_KEY`) on device `DRIVER/POOL/DEVICE` (`*`: every device)."""
    parts = target.split("/")
    if len(parts) != 3 or not all(parts):
        raise StateError(f"--taint-devices: want DRIVER/POOL/DEVICE, got {target!r}")
    driver, pool, device = parts
    put: list[tuple[ResourceType, Obj]] = []
    for s in state.kind(RESOURCE_SLICES).values():
        if _pool(s) != (driver, pool):
            continue
        copy = meta.deep_copy(s)
        hit = False
        for d in copy["spec"].get("devices") or ():
            if device in ("*", d.get("name")):
                taint = {"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}
                d["taints"] = [*(d.get("taints") or ()), taint]
                hit = True
        if hit:
            put.append((RESOURCE_SLICES, copy))
    if not put:
        raise StateError(f"--taint-devices: no device {target}")
    return state.changed(put=put)


def add_objects(state: Snapshot, objects: Iterable[Obj]) -> Snapshot:
    """Add (or replace) manifest objects; namespaced ones default to `default`, and a
    namespace not in the state is added."""
    put: list[tuple[ResourceType, Obj]] = []
    for obj in objects:
        rt = kind_for(obj)
        body = compact(obj, rt)
        if rt.namespaced:
            ns = meta.namespace(body) or "default"
            body["metadata"]["namespace"] = ns
            if state.get(NAMESPACES, ns) is None:
                namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                put.append((NAMESPACES, namespace))
        if not meta.name(body):
            raise StateError(f"a {rt.kind} in the manifests has no metadata.name")
        put.append((rt, body))
    return state.changed(put=put)


def apply(state: Snapshot, changes: Changes) -> Snapshot:
    if changes.add_nodes:
        state = add_nodes(state, changes.like, changes.add_nodes)
    for pattern in changes.remove_pools:
        state = remove_pool(state, pattern)
    for target in changes.taint_devices:
        state = taint_devices(state, target)
    if changes.manifests:
        state = add_objects(state, changes.manifests)
    return state
